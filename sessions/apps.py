from django.apps import AppConfig


class PlayConfig(AppConfig):
    """Play sessions and the live table.

    The label is ``play`` so it never clashes with ``django.contrib.sessions``
    (labels are baked into migrations, content types and table names).
    """

    name = "sessions"
    label = "play"
    verbose_name = "Play sessions and the live table"
