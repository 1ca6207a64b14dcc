"""The ASGI application: Django for HTTP, the live table for WebSockets."""

import asyncio
import gc
import os
import sys
from pathlib import Path

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "campaign.settings")

import django  # noqa: E402
from asgiref.sync import sync_to_async  # noqa: E402
from django.core.handlers.asgi import ASGIHandler  # noqa: E402


class OneHopASGIHandler(ASGIHandler):
    """Django's ASGI handler with the middleware and the view run as under WSGI, on one trip
    to the request's thread.

    Django's own runs the middleware in async mode, and each of our (synchronous) middleware
    then hops to the request's thread for its ``process_request`` and again for its
    ``process_response``, the view once more, and a middleware that is only synchronous
    (WhiteNoise) hops back: about fifteen thread switches per request, half the CPU a
    command over HTTP cost daphne. Here the whole chain is synchronous
    and runs in one ``sync_to_async``: the request's thread, as Django's would use. Reading
    the body, the request signals and sending the response stay Django's (streamed exports
    included)."""

    def load_middleware(self, is_async=False):
        super().load_middleware(is_async=False)

    async def get_response_async(self, request):
        return await sync_to_async(self.get_response, thread_sensitive=True)(request)


django.setup(set_prefix=False)

from campaign import signing  # noqa: E402

from campaign.checks import static_files_problem  # noqa: E402

try:
    # Before any socket is accepted: a server without the key would fail its first checkpoint (a
    # session's end) long after it started, and must never make a key of its own (campaign/signing.py).
    signing.require_key()
except signing.MissingKey as e:
    raise SystemExit(f"Talekeeper can't start: {e}") from None
if static_files_problem():  # without the collected files every page is a 500
    raise SystemExit(f"Talekeeper can't start: {static_files_problem()}")

django_app = OneHopASGIHandler()

from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402

from sessions.auth import origin_validator, socket_stack  # noqa: E402
from sessions.routing import websocket_urlpatterns  # noqa: E402

application = ProtocolTypeRouter(
    {
        "http": django_app,
        "websocket": origin_validator(socket_stack(URLRouter(websocket_urlpatterns))),
    }
)

if "daphne.server" in sys.modules:  # served by daphne, on Twisted's asyncio reactor
    from twisted.internet import defer, reactor

    from sessions.warmup import warm

    # Before daphne listens: the first tables don't pay for a cold process. Only in daphne's own
    # process (`daphne ...`, `python -m daphne ...`): the daphne app imports daphne.server into any
    # process that sets Django up, and a test process importing this module before its test
    # database exists would open pooled connections, in the socket threads, to the real one.
    if Path(sys.argv[0]).name == "daphne" or Path(sys.argv[0]).parent.name == "daphne":
        warm()
        from sessions.memwatch import start_from_settings

        start_from_settings()  # only with TRACEMALLOC_FILE set (a soak's memory probe)

    from sessions.consumers import stop_all

    # SIGTERM (a rolling restart): before daphne drops every connection, each table socket leaves
    # presence and the user's socket count and closes with "restarting", so the page reconnects to
    # another process at once and is not refused there as one socket too many. Registered before
    # daphne's own trigger (it imports the application first), so it runs first; daphne's (which
    # cancels every application) fails with a KeyError on a connection that never had one, and the
    # sockets then dropped without a close frame.
    reactor.addSystemEventTrigger("before", "shutdown",
                                  lambda: defer.Deferred.fromFuture(asyncio.ensure_future(stop_all())))

# Everything imported so far lives as long as the process. Frozen, the collector's full passes
# (gen2) no longer walk it: in the 20x8 load on one process (docs/performance.md, "Where the time goes")
# they paused every table of the process for 80-100 ms, 20-50 ms once frozen.
gc.collect()
gc.freeze()
