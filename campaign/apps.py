from django.apps import AppConfig

from rules import SYSTEM_MODULES, get_system


class CampaignConfig(AppConfig):
    name = "campaign"
    label = "campaign"
    verbose_name = "Campaigns and their event logs"

    def ready(self):
        # Imported once the app registry is ready: these modules import the models.
        from . import checks  # noqa: F401  (registers the deploy checks)
        from . import signals  # noqa: F401  (closes sockets on logout and deactivation)
        from .outages import retry_connections_steadily

        retry_connections_steadily()  # the pool reconnects within a second of PostgreSQL's return
        # Import every rule system now, not in the first request that reads a campaign of it:
        # that request paid 60-230 ms for it (a sheet as of a seq).
        for name in SYSTEM_MODULES:
            get_system(name)
