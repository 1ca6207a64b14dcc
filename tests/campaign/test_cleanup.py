"""What a transactional test's database cleanup leaves (tests/database.py ``empty_tables``): the
database as Django's flush leaves it, the event table's guard triggers still in place."""

from __future__ import annotations

import pytest
from django.core.management import call_command
from django.db import DatabaseError, connection, transaction

from campaign.models import ApiToken
from rules import ScriptedDice, get_system
from tests.conftest import Table
from tests.database import KEPT_TABLES, empty_tables

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


def _rows() -> dict[str, int]:
    """Every table of the app's models: its row count."""
    from django.apps import apps

    tables = sorted({model._meta.db_table for model in apps.get_models(include_auto_created=True)})
    with connection.cursor() as cursor:
        cursor.execute(" UNION ALL ".join(f"SELECT '{table}', count(*) FROM {connection.ops.quote_name(table)}"
                                          for table in tables))
        return dict(cursor.fetchall())


def _an_evening():
    """A signed campaign in session: members, keys, a character, a roll (its seed and command), a token."""
    table = Table("tote", signed=True)
    table.command(table.gm, {"type": "start_session"})
    table.create_character(table.alice, "Hero", get_system("tote").example_sheet)
    table.command(table.alice, {"type": "roll", "notation": "1d6"}, dice=ScriptedDice([3]))
    ApiToken.objects.create(user=table.alice)
    return table


def test_the_tables_emptied_are_the_tables_a_flush_leaves(require_postgres):
    _an_evening()
    written = _rows()
    assert all(written[table] for table in ("auth_user", "campaign_campaign", "campaign_event", "campaign_command",
                                            "campaign_diceseed", "campaign_character", "campaign_apitoken"))
    empty_tables(connection)
    emptied = _rows()
    assert {table for table, count in emptied.items() if count} == KEPT_TABLES

    _an_evening()
    call_command("flush", verbosity=0, interactive=False)
    assert emptied == _rows()  # the content types and permissions too: a flush fills them again

    # The event table still refuses to lose an event.
    _an_evening()
    with pytest.raises(DatabaseError, match="append-only"), transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("DELETE FROM campaign_event")
