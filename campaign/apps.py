from django.apps import AppConfig


class CampaignConfig(AppConfig):
    name = "campaign"
    label = "campaign"
    verbose_name = "Campaigns and their event logs"
