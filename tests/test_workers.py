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


def test_the_longest_files_come_first_each_whole_and_in_its_own_order(monkeypatch):
    """What the workers are handed: files by the seconds recorded (tests/durations.py), longest first,
    each file's tests together as it wrote them; a file not recorded after them, in collection order."""
    from types import SimpleNamespace

    import tests.durations
    from tests import workers

    monkeypatch.setattr(tests.durations, "recorded", lambda: {"tests/b.py": 90.0, "tests/c.py": 5.0})
    items = [SimpleNamespace(nodeid=nodeid) for nodeid in (
        "tests/a.py::one", "tests/a.py::two", "tests/c.py::one", "tests/b.py::one", "tests/d.py::one",
        "tests/b.py::two", "tests/c.py::two")]
    workers.pytest_collection_modifyitems(None, items)
    assert [item.nodeid for item in items] == [
        "tests/b.py::one", "tests/b.py::two", "tests/c.py::one", "tests/c.py::two",
        "tests/a.py::one", "tests/a.py::two", "tests/d.py::one"]


def test_a_report_sums_each_files_seconds():
    from tests.durations import from_report

    report = ["0.50s setup    tests/a.py::one@tests/a.py", "3.00s call     tests/b.py::one[x]@tests/b.py",
              "1.50s call     tests/a.py::two", "0.75s teardown tests/a.py::two", "(6480 durations < 0.3s hidden.)"]
    assert from_report(report) == {"tests/b.py": 3.0, "tests/a.py": 2.8}
