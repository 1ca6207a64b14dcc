# Witnessed rolls (docs/fair-dice.md, "Witnessed rolls").

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('campaign', '0016_campaign_system_without_choices'),
    ]

    operations = [
        migrations.AddField(
            model_name='campaign',
            name='witness_due',
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name='campaign',
            name='witnessed_rolls',
            field=models.CharField(default='off', max_length=10),
        ),
        migrations.CreateModel(
            name='WitnessedRoll',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('pending_seq', models.PositiveBigIntegerField()),
                ('witnesses', models.JSONField(default=list)),
                ('due_at', models.DateTimeField()),
                ('resolved_seq', models.PositiveBigIntegerField(blank=True, null=True)),
                ('campaign', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, to='campaign.campaign')),
            ],
            options={
                'indexes': [models.Index(condition=models.Q(('resolved_seq__isnull', True)), fields=['campaign', 'due_at'], name='witnessed_due')],
                'constraints': [models.UniqueConstraint(fields=('campaign', 'pending_seq'), name='one_resolution_per_pending_roll')],
            },
        ),
    ]
