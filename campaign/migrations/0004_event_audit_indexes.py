"""Indexes for the GM's audit page: the log filtered by session, scene or actor.

The model already has (campaign, type, seq) and (campaign, character, seq);
these add the other three filters of ``campaign.audit.LogFilter``, each ending
in seq so a filtered page is read in order straight from the index. Plain SQL
(the same on SQLite and PostgreSQL), so the model's state is unchanged.
"""

from django.db import migrations

INDEXES = {
    "campaign_event_audit_session": "(campaign_id, session, seq)",
    "campaign_event_audit_scene": "(campaign_id, scene, seq)",
    "campaign_event_audit_actor": "(campaign_id, actor_id, seq)",
}


class Migration(migrations.Migration):
    dependencies = [("campaign", "0003_dice_seed")]
    operations = [
        migrations.RunSQL(f"CREATE INDEX IF NOT EXISTS {name} ON campaign_event {columns}",
                          reverse_sql=f"DROP INDEX IF EXISTS {name}")
        for name, columns in INDEXES.items()
    ]
