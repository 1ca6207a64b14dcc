"""Rate limits: per user (all their commands, every process) and per socket.

Fixed windows in the cache (Redis when configured, so limits hold across
server processes). If the cache is unreachable the limit fails open: a table
must keep playing when Redis hiccups, and the log is safe either way.
"""

from __future__ import annotations

import logging
import time

from django.conf import settings
from django.core.cache import cache

from .actions import ActionError

log = logging.getLogger(__name__)


class RateLimited(ActionError):
    status = 429
    code = "rate_limited"


def check_user_rate(user_id: int) -> None:
    """Count one command for ``user_id``; raise :class:`RateLimited` past the limit."""
    limit = settings.RATE_LIMIT_USER_PER_MINUTE
    window = int(time.time() // 60)
    key = f"rate:user:{user_id}:{window}"
    try:
        if cache.add(key, 1, timeout=70):
            count = 1
        else:
            count = cache.incr(key)
    except Exception as e:  # fail open
        log.warning("rate limit store unavailable: %r", e)
        return
    if count > limit:
        raise RateLimited(f"Slow down: at most {limit} commands a minute. Try again in a few seconds.")


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
