"""Rate limits: per user (all their commands, every process) and per socket.

Fixed windows in the cache (Redis when configured, so limits hold across
server processes). If the cache is unreachable the limit fails open: a table
must keep playing when Redis hiccups, and the log is safe either way.
"""

from __future__ import annotations

import logging
import threading
import time

from django.conf import settings
from django.core.cache import caches
from django.core.cache.backends.redis import RedisCache

from .actions import ActionError

log = logging.getLogger(__name__)
_shared: tuple | None = None  # (the CACHES setting it was made from, the cache, its Redis client or None)
_making = threading.Lock()


def _store() -> tuple:
    """The counters' cache and its Redis client (None on another cache): one per process.
    ``django.core.cache.cache`` is one per thread and asyncio context, and each RedisCache opens
    its own connection pool, so every socket's token check and every command on a database thread
    would open a new Redis connection. redis-py's pool is thread-safe, as is LocMemCache,
    so one serves every thread."""
    global _shared
    shared = _shared
    if shared is None or shared[0] is not settings.CACHES:
        with _making:  # database threads start together: one of them makes it
            shared = _shared
            if shared is None or shared[0] is not settings.CACHES:
                store = caches.create_connection("default")
                # The cache's own client (its pool, its database), made once: Django makes a new
                # redis.Redis for every call (0.2 ms of CPU each) and has no public name for it.
                client = store._cache.get_client(write=True) if isinstance(store, RedisCache) else None
                shared = _shared = (settings.CACHES, store, client)
    return shared[1:]


class RateLimited(ActionError):
    status = 429
    code = "rate_limited"


def _count(key: str, timeout: int) -> int:
    """One more in the counter ``key`` (a new counter lives ``timeout`` seconds): its count now.

    On Redis one pipelined round trip, SET NX then INCR: the cache's ``add`` and ``incr`` took
    three (its ``incr`` asks EXISTS first) and two new clients, on every command. The
    counter is what ``add`` would have stored (the cache keeps whole numbers unpickled). In one
    MULTI/EXEC: between a plain pipeline's SET (the key still there) and its INCR the key could
    expire, and INCR would make a counter with no expiry: a key left in Redis for good (its name
    holds its window, so no one is refused for longer). Redis 7.0 and later runs a transaction at
    one instant, so nothing expires between the two; an older Redis still counts right but for
    that rare leak."""
    store, redis = _store()
    if redis is not None:
        name = store.make_and_validate_key(key)
        return redis.pipeline(transaction=True).set(name, 0, ex=timeout, nx=True).incr(name).execute()[1]
    return 1 if store.add(key, 1, timeout=timeout) else store.incr(key)


def _counts(keys: list[str]) -> list[int]:
    """The counts of the counters ``keys`` that exist (:func:`_count`'s), in one round trip."""
    store, redis = _store()
    if redis is None:
        return list(store.get_many(keys).values())
    if not keys:
        return []
    return [int(value) for value in redis.mget([store.make_and_validate_key(key) for key in keys]) if value is not None]


def _count_this_minute(kind: str, user_id: int) -> int:
    """One more for ``user_id`` in this minute's window of ``kind``; 0 when the store is down (fail open)."""
    try:
        return _count(f"rate:{kind}:{user_id}:{int(time.time() // 60)}", timeout=70)
    except Exception as e:  # fail open
        log.warning("rate limit store unavailable: %r", e)
        return 0


def _check_this_minute(kind: str, user_id: int, limit: int, what: str) -> None:
    """Count one ``kind`` for ``user_id``; raise :class:`RateLimited` past ``limit`` a minute."""
    if _count_this_minute(kind, user_id) > limit:
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


def _failure_keys(kind: str, who: dict[str, str]) -> list[str]:
    window = int(time.time() // FAILURE_WINDOW)
    return [f"fail:{kind}:{name}:{value}:{window}" for name, value in who.items() if value]


def check_failures(kind: str, **who: str) -> None:
    """Refuse while any of ``who`` (an account, an address) failed too often in this window."""
    limit = settings.LOGIN_FAILURES_PER_5_MINUTES
    try:
        counts = _counts(_failure_keys(kind, who))
    except Exception as e:  # fail open, like the command limit
        log.warning("rate limit store unavailable: %r", e)
        return
    if any(count >= limit for count in counts):
        raise RateLimited("Too many failed attempts: wait a few minutes and try again.")


def record_failure(kind: str, **who: str) -> None:
    for key in _failure_keys(kind, who):
        try:
            _count(key, timeout=FAILURE_WINDOW + 10)
        except Exception as e:
            log.warning("rate limit store unavailable: %r", e)
            return
