"""The ASGI application: Django for HTTP, the live table for WebSockets."""

import os

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "campaign.settings")

from django.core.asgi import get_asgi_application  # noqa: E402

django_app = get_asgi_application()  # sets Django up before the imports below

from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402

from campaign.auth import origin_validator, socket_stack  # noqa: E402
from sessions.routing import websocket_urlpatterns  # noqa: E402

application = ProtocolTypeRouter(
    {
        "http": django_app,
        "websocket": origin_validator(socket_stack(URLRouter(websocket_urlpatterns))),
    }
)
