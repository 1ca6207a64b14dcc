"""The cache as an optimisation only: an outage (Redis down) costs recomputing, never a 500.

Everything Talekeeper caches (visible sheets, the advancement fold) can be
rebuilt from the log, so every read and write goes through these two.
"""

from __future__ import annotations

import logging

from django.core.cache import cache

log = logging.getLogger(__name__)


def cache_get(key: str):
    try:
        return cache.get(key)
    except Exception as e:  # a cache outage only costs a recomputation
        log.warning("cache unavailable: %r", e)
        return None


def cache_set(key: str, value, timeout: int) -> None:
    try:
        cache.set(key, value, timeout=timeout)
    except Exception as e:
        log.warning("cache unavailable: %r", e)
