# The system's choices are the rules registry's, read at start (campaign.models.SystemField): a
# migration no longer lists them, so adding a rule system needs none. The column is unchanged.
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("campaign", "0015_campaign_signed_from")]

    operations = [
        migrations.AlterField(
            model_name="campaign",
            name="system",
            field=models.CharField(max_length=20),
        ),
    ]
