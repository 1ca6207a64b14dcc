# Witnessed rolls commit before they reveal (docs/fair-dice.md, "Witnessed rolls").

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('campaign', '0017_witnessed_rolls'),
    ]

    operations = [
        migrations.AddField(
            model_name='witnessedroll',
            name='closed_seq',
            field=models.PositiveBigIntegerField(blank=True, null=True),
        ),
    ]
