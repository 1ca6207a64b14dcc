"""Upgrades on a running system (docs/operations.md, "Upgrades"): index migrations on the event
table never lock it for the length of a build."""

from __future__ import annotations

import importlib
import pkgutil

import pytest
from django.apps import apps
from django.db import connection, migrations, models
from django.db.migrations.state import ProjectState

import campaign.migrations
from campaign.migration_operations import AddIndexOnline, RemoveIndexOnline
from campaign.models import Event

# Migrations up to this one were applied before the online operations existed: they stay as they were.
LAST_BEFORE_ONLINE = 14


def test_every_later_index_migration_on_the_event_table_is_built_online():
    for info in pkgutil.iter_modules(campaign.migrations.__path__):
        number = int(info.name.split("_")[0])
        if number <= LAST_BEFORE_ONLINE:
            continue
        migration = importlib.import_module(f"campaign.migrations.{info.name}").Migration
        for operation in migration.operations:
            if getattr(operation, "model_name", None) == "event" and \
                    isinstance(operation, (migrations.AddIndex, migrations.RemoveIndex)):
                assert isinstance(operation, (AddIndexOnline, RemoveIndexOnline)), (info.name, operation)
                assert migration.atomic is False, f"{info.name}: CONCURRENTLY can't run in a transaction"


@pytest.mark.django_db(transaction=True)
def test_an_online_index_is_built_and_dropped_on_either_database():
    index = models.Index(fields=["campaign", "type", "seq"], name="campaign_event_online_probe")
    add = AddIndexOnline("event", index)
    before = ProjectState.from_apps(apps)
    after = before.clone()
    add.state_forwards("campaign", after)

    def indexes():
        with connection.cursor() as cursor:
            return connection.introspection.get_constraints(cursor, Event._meta.db_table)

    with connection.schema_editor(atomic=False) as editor:
        add.database_forwards("campaign", editor, before, after)
    assert indexes()["campaign_event_online_probe"]["index"]
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:  # built CONCURRENTLY: valid, not left half-built
            cursor.execute("SELECT indisvalid FROM pg_index WHERE indexrelid = 'campaign_event_online_probe'::regclass")
            assert cursor.fetchone() == (True,)
    with connection.schema_editor(atomic=False) as editor:
        RemoveIndexOnline("event", "campaign_event_online_probe").database_forwards("campaign", editor, after, before)
    assert "campaign_event_online_probe" not in indexes()


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_in_a_transaction_postgresql_refuses_it_by_name(require_postgres):
    from django.db import NotSupportedError, transaction

    before = ProjectState.from_apps(apps)
    add = AddIndexOnline("event", models.Index(fields=["type"], name="campaign_event_in_transaction"))
    after = before.clone()
    add.state_forwards("campaign", after)
    with pytest.raises(NotSupportedError, match="atomic = False"), transaction.atomic():
        with connection.schema_editor(atomic=True) as editor:
            add.database_forwards("campaign", editor, before, after)
