"""The hidden events' index by campaign first.

Every command's lock asks whether its character has a hidden change (campaign.eventlog.lock_stream),
and every sheet a member fetches asks for its hidden events (campaign.visibility.folds.visible_fold). Both
look among one campaign's hidden events (those naming a character among a contest's sides
have no index of their own); the index by character alone made PostgreSQL read the hidden
events of every campaign, or, with the lock's plan made once per connection, all of the
campaign's events."""

from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('campaign', '0011_event_triggers_again'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.RemoveIndex(
            model_name='event',
            name='campaign_event_hidden',
        ),
        migrations.AddIndex(
            model_name='event',
            index=models.Index(condition=models.Q(('visibility', 'public'), _negated=True), fields=['campaign', 'character', 'seq'], name='campaign_event_hidden_by_camp'),
        ),
    ]
