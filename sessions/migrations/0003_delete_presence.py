# Presence moved off the database (sessions/presence.py): a row per socket,
# written on every connect and heartbeat, queued behind the appends.

from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ('play', '0002_presence_head'),
    ]

    operations = [
        migrations.DeleteModel(name='Presence'),
    ]
