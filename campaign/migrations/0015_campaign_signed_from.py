from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("campaign", "0014_character_ids_drawn_at_random")]

    operations = [
        migrations.AddField(
            model_name="campaign",
            name="signed_from",
            field=models.PositiveBigIntegerField(blank=True, null=True),
        ),
    ]
