"""Prometheus metrics of one process, at ``/metrics``, only when ``METRICS_TOKEN`` is set.

Off (the default), every hook here is one settings lookup and a return: nothing is counted,
``prometheus_client`` is not even imported, and ``/metrics`` answers 404 like any unknown page.
On, ``/metrics`` answers a scraper that sends ``Authorization: Bearer <METRICS_TOKEN>`` with:

* ``talekeeper_commands_total{action, outcome}``: commands run, over HTTP and the socket alike
  (``campaign.pipeline.submit``); ``action`` is the action's type when it is one the server knows
  (else ``other``), ``outcome`` one of ``ok``, ``refused`` (an error the client caused or the rules
  gave), ``unavailable`` (the database away, the table busy, the outcome unknown) or ``failed``
  (a bug: a 500 or ``server_error``);
* ``talekeeper_command_seconds``: their latency (a histogram), from the rate limit to the commit;
* ``talekeeper_errors_total{transport, code}``: error answers by their code (an HTTP API error or
  a socket's ``error`` frame);
* ``talekeeper_unavailable_total{transport, code}``: answers that the database could not be used
  (``database_unavailable``, ``table_busy``, ``outcome_unknown``), on every path, pages included;
* ``talekeeper_open_sockets``: table sockets open in this process now;
* ``prometheus_client``'s own process and Python metrics (CPU, memory, open files, collections).

No label carries a campaign, a user, an address or anything a client typed: labels are the
server's own names (action types, error codes), and anything else is counted as ``other``, so
the number of series stays bounded whatever clients send. Each daphne process counts its own:
scrape each at its own address (docs/operations.md, "Metrics").
"""

from __future__ import annotations

import hmac
import logging
import re
import threading

from django.conf import settings
from django.http import Http404, HttpResponse
from django.views.decorators.cache import never_cache

OUTAGE_CODES = ("database_unavailable", "table_busy", "outcome_unknown")
_CODE = re.compile(r"[a-z][a-z0-9_]{0,39}")
LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
_metrics = None  # made on first use when on
_making = threading.Lock()  # the socket threads and the request thread may be first at once
log = logging.getLogger(__name__)
_open_sockets = None  # () -> int, given by the socket layer


def enabled() -> bool:
    return bool(settings.METRICS_TOKEN)


class _Metrics:
    def __init__(self):
        from prometheus_client import Counter, Gauge, Histogram

        self.commands = Counter("talekeeper_commands", "Commands run, by action type and outcome.",
                                ["action", "outcome"])
        self.latency = Histogram("talekeeper_command_seconds", "Command latency, rate limit to commit.",
                                 buckets=LATENCY_BUCKETS)
        self.errors = Counter("talekeeper_errors", "Error answers, by transport and code.", ["transport", "code"])
        self.unavailable = Counter("talekeeper_unavailable", "Answers that the database could not be used.",
                                   ["transport", "code"])
        self.sockets = Gauge("talekeeper_open_sockets", "Table sockets open in this process.")
        self.sockets.set_function(lambda: _open_sockets() if _open_sockets else 0)


def _get() -> _Metrics:
    global _metrics
    if _metrics is None:
        with _making:
            if _metrics is None:
                _metrics = _Metrics()
    return _metrics


def label(code: str | None) -> str:
    """A label value that is one of the server's own names, or ``other``."""
    return code if isinstance(code, str) and _CODE.fullmatch(code) else "other"


def command(action: str, outcome: str, seconds: float) -> None:
    """A command's outcome and latency. Called after its commit: it must never raise."""
    if enabled():
        try:
            m = _get()
            m.commands.labels(action, outcome).inc()
            m.latency.observe(seconds)
        except Exception as e:  # noqa: BLE001 (a count missed, never a command's answer)
            log.warning("metrics: counting a command failed: %r", e)


def error(transport: str, code: str | None) -> None:
    """An error answer (``transport``: ``http`` or ``socket``); outages are counted apart too."""
    if enabled():
        try:
            m = _get()
            m.errors.labels(transport, label(code)).inc()
            if code in OUTAGE_CODES:
                m.unavailable.labels(transport, code).inc()
        except Exception as e:  # noqa: BLE001
            log.warning("metrics: counting an error failed: %r", e)


def count_sockets(count) -> None:
    """The socket layer says how to count its open sockets (``count()``, read at each scrape)."""
    global _open_sockets
    _open_sockets = count


def _authorized(request) -> bool:
    given = request.headers.get("Authorization", "")
    scheme, _, token = given.partition(" ")
    return scheme.lower() == "bearer" and hmac.compare_digest(token.strip().encode(), settings.METRICS_TOKEN.encode())


@never_cache
def view(request):
    if not enabled():
        raise Http404
    if not _authorized(request):
        response = HttpResponse("A bearer token is required.\n", status=401, content_type="text/plain")
        response["WWW-Authenticate"] = 'Bearer realm="metrics"'
        return response
    from prometheus_client import CONTENT_TYPE_LATEST, REGISTRY, generate_latest

    _get()
    return HttpResponse(generate_latest(REGISTRY), content_type=CONTENT_TYPE_LATEST)
