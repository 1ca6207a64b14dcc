"""What a client is told while PostgreSQL is away (docs/operations.md, "Outages").

A database that cannot be reached is not a bug in the request: the answer is a quick
``503`` that says so, never Django's HTML 500 after a long hang. The API (``/api/...``)
answers JSON ``{"error": {"code": "database_unavailable", ...}}`` like every other API
error, with ``Retry-After``; a page answers a short HTML page that needs no database
(no session, no user, no messages). How quickly: ``DB_CONNECT_TIMEOUT`` and
``DB_POOL_TIMEOUT`` in campaign/settings.py.

Two places catch it, because Django converts an exception to a response at each
middleware: :class:`DatabaseOutageMiddleware` for errors raised by a view (logged as one
warning line, no traceback per request), and :func:`server_error` (``handler500``) for
errors raised in a middleware (the session saved after the view, say).

The command path's own answers (``database_unavailable`` when nothing was stored,
``outcome_unknown`` when the connection died at COMMIT, ``table_busy`` when the campaign's
stream lock was held longer than ``DB_LOCK_TIMEOUT``) are mapped once, in
campaign/pipeline.py.
"""

from __future__ import annotations

import contextlib
import logging
import sys

from django.db import InterfaceError, OperationalError, transaction
from django.http import HttpResponse, JsonResponse
from django.template.loader import render_to_string
from django.views import defaults

from . import metrics

log = logging.getLogger(__name__)

# What a lost or refused connection raises through Django: psycopg's errors arrive as
# these, and psycopg_pool's PoolTimeout is an OperationalError too.
DATABASE_OUTAGE = (OperationalError, InterfaceError)
# SQLSTATEs that mean "this database can't serve you now" whatever class Django wraps them in:
# 25006 (read-only transaction: a standby after a failover answers every write with it), class 53
# (insufficient resources: disk full, out of memory, too many connections) and 57P01-57P05
# (shutdown, crash shutdown, cannot connect now, database dropped, idle session timeout).
UNAVAILABLE_STATES = ("25006", "53", "57P0")
RETRY_AFTER_SECONDS = 5
UNAVAILABLE_MESSAGE = "The server can't reach its database right now; nothing was stored. Try again in a moment."
# A read (GET, a socket opening) stores nothing, so "nothing was stored" would only puzzle.
READ_UNAVAILABLE_MESSAGE = "The server can't reach its database right now. Try again in a moment."


# A command that waited ``DB_LOCK_TIMEOUT`` for its campaign's stream lock gives up before it wrote
# anything: a holder that does not let go (a stalled transaction, a long rebuild) must not pin a
# database thread and a pooled connection per waiting command until every table of the process
# waits with it.
BUSY_MESSAGE = "This table is busy finishing an earlier action; nothing was stored. Try again in a moment."
LOCK_NOT_AVAILABLE = "55P03"  # PostgreSQL's SQLSTATE for lock_timeout


UNKNOWN_MESSAGE = ("The connection to the database broke while your command was being stored, so it may or "
                   "may not have been. Send it again with the same id: it is stored at most once.")


class UnknownOutcome(Exception):
    """The database connection failed at or after COMMIT: the command may be stored.

    The client must not be told "nothing was stored" (it would act again, and a new
    id rolls new dice); it resends the same command id, which the server answers with
    the stored result if there is one (docs/operations.md)."""


@contextlib.contextmanager
def command_transaction():
    """``transaction.atomic()`` for a command, telling a failed COMMIT apart.

    An outage before the COMMIT rolls the transaction back: nothing was stored, and the
    error passes through (``database_unavailable``). An outage at the COMMIT itself
    leaves the outcome unknown to us: PostgreSQL may have committed and lost only the
    answer. That becomes :class:`UnknownOutcome` (``outcome_unknown``)."""
    committing = False
    try:
        with transaction.atomic():
            yield
            committing = True
    except Exception as e:
        if committing and database_away(e):
            raise UnknownOutcome(UNKNOWN_MESSAGE) from e
        raise


def outage_code(exc: BaseException | None) -> str | None:
    """``outcome_unknown``, ``table_busy``, ``database_unavailable``, or None for anything that is
    not an outage."""
    if isinstance(exc, UnknownOutcome):
        return "outcome_unknown"
    if isinstance(exc, DATABASE_OUTAGE) and _waited_too_long_for_a_lock(exc):
        return "table_busy"
    if database_away(exc):
        return "database_unavailable"
    return None


def database_away(exc: BaseException | None) -> bool:
    """A lost or refused connection, or a database that refuses for now (``UNAVAILABLE_STATES``)."""
    if isinstance(exc, DATABASE_OUTAGE):
        return True
    seen = 0
    while exc is not None and seen < 5:  # Django's wrapper, then the driver's error
        state = getattr(exc, "sqlstate", None)
        if isinstance(state, str) and state.startswith(UNAVAILABLE_STATES):
            return True
        exc, seen = exc.__cause__, seen + 1
    return False


def _waited_too_long_for_a_lock(exc: BaseException) -> bool:
    """PostgreSQL's lock_timeout, or SQLite's busy timeout on its one write lock."""
    cause = exc.__cause__
    if getattr(cause, "sqlstate", None) == LOCK_NOT_AVAILABLE:
        return True
    return type(cause).__module__ == "sqlite3" and "database is locked" in str(cause)


def retry_connections_steadily() -> None:
    """While PostgreSQL is away, the pool tries to reconnect every second, not with a backoff
    doubling to minutes: after a 30 s outage its next attempt would come ~30 s after
    PostgreSQL is back, and every request until then would wait ``DB_POOL_TIMEOUT`` and
    answer 503. A refused connection costs nothing, so a steady retry is cheap.
    (psycopg_pool has no setting for it; its backoff is this class constant.)"""
    with contextlib.suppress(ImportError):
        from psycopg_pool.base import AttemptWithBackoff

        AttemptWithBackoff.DELAY_BACKOFF = 1.0


def is_outage(exc: BaseException | None) -> bool:
    return outage_code(exc) is not None


def wants_json(request) -> bool:
    return request.path.startswith("/api/") or "application/json" in request.headers.get("Accept", "")


MESSAGES = {"database_unavailable": UNAVAILABLE_MESSAGE, "outcome_unknown": UNKNOWN_MESSAGE,
            "table_busy": BUSY_MESSAGE}


def unavailable_response(request, code: str = "database_unavailable") -> HttpResponse:
    metrics.error("http", code)
    if wants_json(request):
        message = READ_UNAVAILABLE_MESSAGE if request.method in ("GET", "HEAD", "OPTIONS") else MESSAGES[code]
        response = JsonResponse({"error": {"code": code, "message": message}}, status=503)
    else:
        response = HttpResponse(render_to_string("503.html"), status=503)
    response["Retry-After"] = str(RETRY_AFTER_SECONDS)
    return response


class DatabaseOutageMiddleware:
    """A view that met a database outage answers 503 (see the module's docstring)."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        return self.get_response(request)

    def process_exception(self, request, exception):
        if not is_outage(exception):
            return None
        code = outage_code(exception)
        log.warning("%s for %s %s: %r", code.replace("_", " "), request.method, request.path, exception)
        return unavailable_response(request, code)


def server_error(request, template_name: str = "500.html"):
    """``handler500``: an outage met outside a view is a 503 too; anything else is Django's 500."""
    code = outage_code(sys.exc_info()[1])
    if code is not None:
        return unavailable_response(request, code)
    metrics.error("http", "server_error")
    return defaults.server_error(request, template_name)
