"""The server's log lines: who and where on every line, and one line per incident.

Every line carries the time (UTC), the level, the logger and, where there is one, the request or
socket it came from (``request`` / ``socket``), the campaign and the user id: the HTTP middleware
(:class:`RequestContext`) and the table's socket (sessions/consumers.py) :func:`bind` them for
everything logged while they run. ``LOG_FORMAT=json`` writes each line as one JSON object (for a log
shipper); the default is the same fields as text.

An outage is one incident, not one line per socket: a warning or an error whose logger and message
template repeat within ``LOG_INCIDENT_SECONDS`` of the previous one is held back and counted
(:class:`Incidents`); the first line of an incident is written at once, and when it has been quiet
for that long the next line written says how many were held back and over how long. A 20 s Redis
outage seen by every socket of a process is two lines, not one per socket and retry.
"""

from __future__ import annotations

import contextvars
import json
import logging
import threading
import time
import uuid
from dataclasses import dataclass
from datetime import datetime, timezone

# The fields bound for what runs now: a request's or a socket's task (contextvars follow both into
# the threads database_sync_to_async runs them on).
_context: contextvars.ContextVar[dict] = contextvars.ContextVar("talekeeper_log_context", default={})
FIELDS = ("request", "socket", "campaign", "user")


def bind(**fields) -> contextvars.Token:
    """Add ``fields`` (of :data:`FIELDS`) to every line logged from here in this request or socket."""
    return _context.set({**_context.get(), **{k: v for k, v in fields.items() if v is not None}})


def unbind(token: contextvars.Token) -> None:
    _context.reset(token)


def bound() -> dict:
    return dict(_context.get())


def _utc(created: float) -> str:
    return datetime.fromtimestamp(created, timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class JsonFormatter(logging.Formatter):
    """One JSON object per line: time, level, logger, message, the bound fields, the exception."""

    def format(self, record: logging.LogRecord) -> str:
        line = {"time": _utc(record.created), "level": record.levelname, "logger": record.name,
                "message": record.getMessage(), **getattr(record, "context", {})}
        if record.exc_info:
            line["exception"] = self.formatException(record.exc_info)
        return json.dumps(line, default=str, ensure_ascii=False)


class TextFormatter(logging.Formatter):
    """``time level logger [field=value ...] message``, then the traceback, if any."""

    def format(self, record: logging.LogRecord) -> str:
        fields = " ".join(f"{k}={v}" for k, v in getattr(record, "context", {}).items())
        line = f"{_utc(record.created)} {record.levelname} {record.name} {f'[{fields}] ' if fields else ''}{record.getMessage()}"
        if record.exc_info:
            line += "\n" + self.formatException(record.exc_info)
        return line


@dataclass
class _Incident:
    first: float
    last: float
    held: int = 0


class Incidents:
    """Which warnings and errors start an incident and which repeat one (``admit``), and the incidents
    that have gone quiet (``closed``). An incident is a logger and a message template; it lasts while
    repeats come less than ``window`` seconds apart. ``clock`` is injectable for the tests."""

    def __init__(self, window: float, clock=time.monotonic):
        self.window = window
        self.clock = clock
        self._open: dict[tuple, _Incident] = {}
        self._lock = threading.Lock()

    @staticmethod
    def key(record: logging.LogRecord) -> tuple:
        return record.name, record.levelno, str(record.msg)

    def admit(self, record: logging.LogRecord) -> bool:
        if record.levelno < logging.WARNING or self.window <= 0:
            return True
        now, key = self.clock(), self.key(record)
        with self._lock:
            incident = self._open.get(key)
            if incident is not None and now - incident.last < self.window:
                incident.last = now
                incident.held += 1
                return False
            self._open[key] = _Incident(now, now)
            return True

    def closed(self) -> list[tuple[tuple, _Incident]]:
        """The incidents quiet for ``window`` seconds that held lines back (forgotten once returned)."""
        now = self.clock()
        with self._lock:
            done = [(k, i) for k, i in self._open.items() if now - i.last >= self.window]
            for k, _ in done:
                del self._open[k]
        return [(k, i) for k, i in done if i.held]


class ConsoleHandler(logging.StreamHandler):
    """The console handler: the bound fields on every record, and repeats of an incident held back,
    the count written when the incident is over (with the next line logged after it ends)."""

    def __init__(self, stream=None, window: float = 60.0, clock=time.monotonic):
        super().__init__(stream)
        self.incidents = Incidents(window, clock)

    def handle(self, record: logging.LogRecord) -> bool:
        for (name, level, template), incident in self.incidents.closed():
            summary = logging.LogRecord(name, level, __file__, 0, "%s more like \"%s\" held back over %.0f s",
                                        (incident.held, template, incident.last - incident.first), None)
            summary.context = {}
            super().handle(summary)
        if not self.incidents.admit(record):
            return False
        if not hasattr(record, "context"):
            record.context = bound()
        return super().handle(record)


class RequestContext:
    """HTTP middleware: every line a request logs names it (an id of its own, or the proxy's
    ``X-Request-ID`` behind a proxy), its user id and the campaign in its URL."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        from django.conf import settings

        given = request.headers.get("X-Request-ID", "") if settings.BEHIND_PROXY else ""
        request_id = given[:64] if given.isprintable() and given else uuid.uuid4().hex[:12]
        token = bind(request=request_id)
        try:
            return self.get_response(request)
        finally:
            unbind(token)

    def process_view(self, request, view_func, view_args, view_kwargs):
        user = getattr(request, "user", None)
        bind(campaign=view_kwargs.get("slug"), user=user.pk if user is not None and user.is_authenticated else None)
        return None
