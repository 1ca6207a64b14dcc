"""The append-only triggers again, for SQLite.

0010 altered a column of campaign_event; SQLite does that by copying the table into a new one,
and the triggers of the old table went with it (PostgreSQL alters in place and kept them).
``install`` is idempotent, so this is harmless where they survived. Any later migration that
alters campaign_event must end the same way (tests/campaign/test_log.py::TestImmutability
fails on SQLite otherwise)."""

from django.db import migrations

from campaign import triggers


def reinstall_triggers(apps, schema_editor):
    triggers.install(schema_editor.connection)


class Migration(migrations.Migration):
    dependencies = [("campaign", "0010_event_campaign_no_lone_index")]
    operations = [migrations.RunPython(reinstall_triggers, migrations.RunPython.noop)]
