"""Character ids drawn at random (campaign.models.new_character_id), not counted up: the gap between
two ids a player read told her that a hidden NPC was made between them (docs/hidden-information.md).
Existing characters keep their ids (the log's hashes cover them).

SQLite alters the key by copying campaign_character and every table pointing at it, campaign_event
too, whose append-only triggers go with the old table: they are installed again at the end (as 0011)."""

from django.db import migrations, models

import campaign.models
from campaign import triggers


def reinstall_triggers(apps, schema_editor):
    triggers.install(schema_editor.connection)


class Migration(migrations.Migration):

    dependencies = [
        ('campaign', '0013_shared_visibility'),
    ]

    operations = [
        migrations.AlterModelOptions(
            name='character',
            options={'ordering': ['created_at', 'id']},
        ),
        migrations.AlterField(
            model_name='character',
            name='id',
            field=models.BigIntegerField(default=campaign.models.new_character_id, editable=False, primary_key=True,
                                         serialize=False),
        ),
        migrations.RunPython(reinstall_triggers, migrations.RunPython.noop),
    ]
