from django.apps import AppConfig


class PlayConfig(AppConfig):
    """Play sessions and the live table.

    The label is ``play`` so it never clashes with ``django.contrib.sessions``
    (labels are baked into migrations, content types and table names).
    """

    name = "sessions"
    label = "play"
    verbose_name = "Play sessions and the live table"

    def ready(self):
        # Witnessed rolls list the members at the table (campaign/actions/witnesses.py): the presence
        # this layer keeps, handed down so the pipeline below never imports the transport.
        from campaign import publish
        from campaign.actions import witnesses

        from . import presence, transport

        witnesses.use_presence(presence.online_usernames)
        # What campaign/ publishes after a commit goes out through this layer's transport, handed
        # down the same way (campaign/publish.py).
        publish.use_transport(transport)
