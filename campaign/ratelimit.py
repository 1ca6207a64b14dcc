"""Rate limits: per user (all their commands, every process) and per socket.

Fixed windows in the cache (Redis when configured, so limits hold across
server processes). If the cache is unreachable the limit fails open: a table
must keep playing when Redis hiccups, and the log is safe either way.
"""

from __future__ import annotations

import logging
import time

from django.conf import settings
from django.core.cache import caches

from .actions import ActionError

log = logging.getLogger(__name__)
_shared: tuple | None = None  # (the CACHES setting it was made from, the cache)


def _store():
    """The counters' cache: one per process. ``django.core.cache.cache`` is one per thread and
    asyncio context, and each RedisCache opens its own connection pool, so every socket's token
    check and every command on a database thread opened a new Redis connection (issue #12).
    redis-py's pool is thread-safe, as is LocMemCache, so one serves every thread."""
    global _shared
    if _shared is None or _shared[0] is not settings.CACHES:
        _shared = (settings.CACHES, caches.create_connection("default"))
    return _shared[1]


class RateLimited(ActionError):
    status = 429
    code = "rate_limited"


def _count_this_minute(kind: str, user_id: int) -> int:
    """One more for ``user_id`` in this minute's window of ``kind``; 0 when the store is down (fail open)."""
    key = f"rate:{kind}:{user_id}:{int(time.time() // 60)}"
    try:
        return 1 if _store().add(key, 1, timeout=70) else _store().incr(key)
    except Exception as e:  # fail open
        log.warning("rate limit store unavailable: %r", e)
        return 0


def check_user_rate(user_id: int) -> None:
    """Count one command for ``user_id``; raise :class:`RateLimited` past the limit."""
    limit = settings.RATE_LIMIT_USER_PER_MINUTE
    if _count_this_minute("user", user_id) > limit:
        raise RateLimited(f"Slow down: at most {limit} commands a minute. Try again in a few seconds.")


def check_message_rate(user_id: int) -> None:
    """Count one chat message for ``user_id`` (on top of the command limit): a flood of text
    fills every member's log, which a flood of rolls does less."""
    limit = settings.RATE_LIMIT_MESSAGES_PER_MINUTE
    if _count_this_minute("message", user_id) > limit:
        raise RateLimited(f"Slow down: at most {limit} messages a minute. Try again in a few seconds.")


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


def _failure_keys(kind: str, who: dict[str, str]) -> list[str]:
    window = int(time.time() // FAILURE_WINDOW)
    return [f"fail:{kind}:{name}:{value}:{window}" for name, value in who.items() if value]


def check_failures(kind: str, **who: str) -> None:
    """Refuse while any of ``who`` (an account, an address) failed too often in this window."""
    limit = settings.LOGIN_FAILURES_PER_5_MINUTES
    try:
        counts = _store().get_many(_failure_keys(kind, who))
    except Exception as e:  # fail open, like the command limit
        log.warning("rate limit store unavailable: %r", e)
        return
    if any(count >= limit for count in counts.values()):
        raise RateLimited("Too many failed attempts: wait a few minutes and try again.")


def record_failure(kind: str, **who: str) -> None:
    for key in _failure_keys(kind, who):
        try:
            if not _store().add(key, 1, timeout=FAILURE_WINDOW + 10):
                _store().incr(key)
        except Exception as e:
            log.warning("rate limit store unavailable: %r", e)
            return
