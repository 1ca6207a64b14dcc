from django.apps import AppConfig


class CampaignConfig(AppConfig):
    name = "campaign"
    label = "campaign"
    verbose_name = "Campaigns and their event logs"

    def ready(self):
        from . import checks  # noqa: F401  (registers the deploy checks)
        from . import signals  # noqa: F401  (closes sockets on logout and deactivation)
        from .outages import retry_connections_steadily

        retry_connections_steadily()  # the pool reconnects within a second of PostgreSQL's return
