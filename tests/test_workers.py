"""The suite's own plumbing for pytest-xdist workers (tests/workers.py)."""

from __future__ import annotations

import os

import pytest

from tests.workers import redis_url_for_worker


def test_each_worker_takes_its_own_redis_database_below_the_configured_one():
    assert redis_url_for_worker("redis://127.0.0.1:6379/15", "gw0") == "redis://127.0.0.1:6379/15"
    assert redis_url_for_worker("redis://127.0.0.1:6379/15", "gw1") == "redis://127.0.0.1:6379/14"
    assert redis_url_for_worker("redis://:secret@redis.lan:6380/9", "gw3") == "redis://:secret@redis.lan:6380/6"
    with pytest.raises(ValueError, match="too low"):
        redis_url_for_worker("redis://127.0.0.1:6379", "gw1")


def test_django_read_the_workers_redis_url(settings):
    """The rewrite happens before Django reads its settings, or the channel layer, the cache and
    presence of two workers would share one Redis database."""
    assert settings.REDIS_URL == os.environ.get("REDIS_URL", "")
    if settings.REDIS_URL:
        assert settings.CACHES["default"]["LOCATION"] == settings.REDIS_URL
        assert settings.CHANNEL_LAYERS["default"]["CONFIG"]["hosts"][0]["address"] == settings.REDIS_URL
