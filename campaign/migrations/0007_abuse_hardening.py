"""Token digests instead of keys, invite link dates, and the TRUNCATE guard."""

import hashlib

from django.db import migrations, models
from django.utils import timezone

from campaign import triggers


def hash_existing_tokens(apps, schema_editor):
    # Existing tokens keep working: their digest is computed from the key, then the key goes.
    ApiToken = apps.get_model("campaign", "ApiToken")
    for token in ApiToken.objects.all().only("pk", "key"):
        ApiToken.objects.filter(pk=token.pk).update(
            digest=hashlib.sha256(token.key.encode("utf-8")).hexdigest(), prefix=token.key[:6])


def reinstall_triggers(apps, schema_editor):
    triggers.install(schema_editor.connection)


class Migration(migrations.Migration):
    dependencies = [("campaign", "0006_character_snapshot")]

    operations = [
        migrations.AddField("apitoken", "digest", models.CharField(max_length=64, null=True)),
        migrations.AddField("apitoken", "prefix", models.CharField(max_length=8, blank=True, default="")),
        migrations.AddField("apitoken", "name", models.CharField(max_length=60, blank=True, default="")),
        migrations.AddField("apitoken", "last_used_at", models.DateTimeField(null=True, blank=True)),
        migrations.RunPython(hash_existing_tokens, migrations.RunPython.noop),
        migrations.RemoveField("apitoken", "key"),
        migrations.AlterField("apitoken", "digest", models.CharField(max_length=64, unique=True)),
        migrations.AddField("campaign", "invite_created_at", models.DateTimeField(default=timezone.now)),
        # Adds the statement-level TRUNCATE trigger on PostgreSQL (install is idempotent).
        migrations.RunPython(reinstall_triggers, migrations.RunPython.noop),
    ]
