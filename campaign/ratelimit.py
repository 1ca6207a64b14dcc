"""Rate limits: per user (all their commands, every process) and per socket.

Fixed windows counted by the ``limits`` library: in Redis when ``RATE_LIMIT_STORAGE`` names
it (``REDIS_URL`` by default, so limits hold across server processes), else in this process's
memory. If the store is unreachable the limit fails open: a table must keep playing when Redis
hiccups, and the log is safe either way.
"""

from __future__ import annotations

import logging
import threading
import time

from django.conf import settings
from limits import RateLimitItem, RateLimitItemPerHour, RateLimitItemPerMinute, RateLimitItemPerSecond
from limits.storage import storage_from_string
from limits.strategies import FixedWindowRateLimiter

from .errors import ActionError

log = logging.getLogger(__name__)
_shared: tuple | None = None  # (the storage URI it was made from, the limiter)
_making = threading.Lock()
# A frozen Redis must not hold a command for redis-py's default timeouts: the counters fail open.
REDIS_TIMEOUTS = {"socket_timeout": 0.5, "socket_connect_timeout": 0.5}


def _limiter() -> FixedWindowRateLimiter:
    """The counters' limiter, one per process and storage URI: every socket's token check and every
    command counts from some database thread, and one Redis client (its pool is thread-safe) serves
    them all; a client per thread would open a Redis connection each."""
    global _shared
    uri = settings.RATE_LIMIT_STORAGE
    shared = _shared
    if shared is None or shared[0] != uri:
        with _making:  # database threads start together: one of them makes it
            shared = _shared
            if shared is None or shared[0] != uri:
                options = REDIS_TIMEOUTS if uri.startswith(("redis://", "rediss://", "redis+unix://")) else {}
                shared = _shared = (uri, FixedWindowRateLimiter(storage_from_string(uri, **options)))
    return shared[1]


def reset() -> None:
    """Forget every counter (tests: a window must not leak from one test into the next)."""
    try:
        _limiter().storage.reset()
    except Exception as e:  # nothing to forget in a store that is down
        log.warning("rate limit store unavailable: %r", e)


class RateLimited(ActionError):
    status = 429
    code = "rate_limited"


def _check_this_minute(kind: str, user_id: int, limit: int, what: str) -> None:
    """Count one ``kind`` for ``user_id``; raise :class:`RateLimited` past ``limit`` a minute.

    On Redis one round trip (the library's script increments the counter and, for a new window,
    sets its expiry, atomically); 0 counted when the store is down (fail open)."""
    try:
        allowed = _limiter().hit(RateLimitItemPerMinute(limit), kind, str(user_id))
    except Exception as e:  # fail open
        log.warning("rate limit store unavailable: %r", e)
        return
    if not allowed:
        raise RateLimited(f"Slow down: at most {limit} {what} a minute. Try again in a few seconds.")


def check_user_rate(user_id: int) -> None:
    """Count one command for ``user_id``; raise :class:`RateLimited` past the limit."""
    _check_this_minute("user", user_id, settings.RATE_LIMIT_USER_PER_MINUTE, "commands")


def check_message_rate(user_id: int) -> None:
    """Count one chat message for ``user_id`` (on top of the command limit): a flood of text
    fills every member's log, which a flood of rolls does less."""
    _check_this_minute("message", user_id, settings.RATE_LIMIT_MESSAGES_PER_MINUTE, "messages")


def check_preview_rate(user_id: int) -> None:
    """Count one odds preview for ``user_id``. Its own limit, not the commands': the table page asks
    for odds by itself as a form's fields change and as its "Roll now" lines are drawn, so typing
    must not use up the rolls a player may send; a script asking for nothing else stops here."""
    _check_this_minute("preview", user_id, settings.RATE_LIMIT_PREVIEWS_PER_MINUTE, "odds previews")


class SocketBucket:
    """At most ``limit`` frames per 10 seconds on one socket (in memory: a socket lives in one process)."""

    def __init__(self, limit: int | None = None, period: float = 10.0):
        self.limit = limit or settings.RATE_LIMIT_SOCKET_PER_10S
        self.period = period
        self.window_start = time.monotonic()
        self.count = 0

    def take(self) -> None:
        now = time.monotonic()
        if now - self.window_start >= self.period:
            self.window_start, self.count = now, 0
        self.count += 1
        if self.count > self.limit:
            raise RateLimited(f"Slow down: at most {self.limit} messages every {int(self.period)} seconds on one connection.")


# --- failed logins and wrong tokens -------------------------------------------------------

FAILURE_WINDOW = 300  # seconds


def client_address(meta_or_scope) -> str:
    """The client's address from a request's META or a socket's scope.

    Behind a proxy (``BEHIND_PROXY``) every connection comes from the proxy, so the
    address is the last X-Forwarded-For entry: the one the proxy itself added.
    """
    if "REMOTE_ADDR" in meta_or_scope or "HTTP_X_FORWARDED_FOR" in meta_or_scope:
        remote = meta_or_scope.get("REMOTE_ADDR") or "?"
        forwarded = meta_or_scope.get("HTTP_X_FORWARDED_FOR", "")
    else:
        client = meta_or_scope.get("client") or ("?", 0)
        remote = str(client[0])
        headers = dict(meta_or_scope.get("headers") or [])
        forwarded = headers.get(b"x-forwarded-for", b"").decode("latin1")
    if settings.SECURE_PROXY_SSL_HEADER and forwarded.strip():
        return forwarded.split(",")[-1].strip()[:64]
    return remote[:64]


def _failure_item() -> RateLimitItemPerSecond:
    return RateLimitItemPerSecond(settings.LOGIN_FAILURES_PER_5_MINUTES, FAILURE_WINDOW)


def account_failure_item() -> RateLimitItemPerHour:
    """The slower limit of one account's failures, from any address (campaign.views: the right
    password from a device that logged in to it before passes it)."""
    return RateLimitItemPerHour(settings.LOGIN_ACCOUNT_FAILURES_PER_HOUR)


def reset_mail_item() -> RateLimitItemPerHour:
    """Password reset requests naming one email address, from anywhere (campaign/accounts.py): a
    stranger can't fill someone's mailbox with reset mails."""
    return RateLimitItemPerHour(settings.PASSWORD_RESET_MAILS_PER_HOUR)


def check_failures(kind: str, item: RateLimitItem | None = None, **who: str) -> None:
    """Refuse while any of ``who`` (an account, an address) failed too often in this window
    (``item``: the limit, by default ``LOGIN_FAILURES_PER_5_MINUTES`` in 5 minutes)."""
    item = item or _failure_item()
    try:
        limiter = _limiter()
        refused = any(not limiter.test(item, kind, name, value) for name, value in who.items() if value)
    except Exception as e:  # fail open, like the command limit
        log.warning("rate limit store unavailable: %r", e)
        return
    if refused:
        raise RateLimited("Too many failed attempts: wait a few minutes and try again.")


def record_failure(kind: str, item: RateLimitItem | None = None, **who: str) -> None:
    item = item or _failure_item()
    for name, value in who.items():
        if not value:
            continue
        try:
            _limiter().hit(item, kind, name, value)
        except Exception as e:
            log.warning("rate limit store unavailable: %r", e)
            return
