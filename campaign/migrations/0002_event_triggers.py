from django.db import migrations

from campaign import triggers


def forwards(apps, schema_editor):
    triggers.install(schema_editor.connection)


def backwards(apps, schema_editor):
    triggers.uninstall(schema_editor.connection)


class Migration(migrations.Migration):
    dependencies = [("campaign", "0001_initial")]
    operations = [migrations.RunPython(forwards, backwards)]
