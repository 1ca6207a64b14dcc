# Every index of campaign_event starts with campaign_id; the lone one only gave a
# planner with stale statistics a way to read a whole log for one block of it.

from django.db import migrations, models
import django.db.models.deletion


class Migration(migrations.Migration):

    dependencies = [
        ('campaign', '0009_event_visibility_whisper'),
    ]

    operations = [
        migrations.AlterField(
            model_name='event',
            name='campaign',
            field=models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.PROTECT, related_name='events', to='campaign.campaign'),
        ),
    ]
