"""The suite on several pytest-xdist workers (`make test` runs three): what each worker must not share.

Loaded with ``-p tests.workers`` (pytest.ini), so it runs before pytest-django sets Django up, and
in every worker process before that worker reads its settings.

* **Its own Redis database.** Every worker's test database numbers its campaigns from 1 and the
  channel-layer groups are named after the campaign, so two workers on one Redis database would
  ring each other's tables; and every test clears the cache (the rate-limit counters), which on
  Redis is a FLUSHDB of the whole database. Worker ``gwN`` takes the database N below
  ``REDIS_URL``'s (15, 14, ... for `make test`'s ``/15``). Servers a test starts get the worker's
  URL from the environment like everything else.
* **Its own PostgreSQL database:** pytest-django already suffixes the test database (``_gw0``).
* **A test file runs whole on one worker** (``xdist_group``, set in ``tests/conftest.py``, with
  ``--dist loadgroup``): module-scoped servers (the fuzzers' daphne) start once. Browser modules
  spread over the workers like the rest (kept on one, they were the run's long pole); a worker's
  browser tests share one daphne and one Chromium (package-scoped, ``tests/browser/conftest.py``),
  and the pages' expectations wait long enough (10 s) for three Chromiums sharing the cores. A file
  marked ``spread`` (the two-worlds searches: a few long tests sharing nothing module-scoped) is the
  exception: each of its tests goes to whichever worker is free, instead of the whole file running on
  alone at the end of the run, which pytest-xdist's order (files with most tests first) gives it.
"""

from __future__ import annotations

import os
from urllib.parse import urlsplit, urlunsplit


def redis_url_for_worker(url: str, worker: str) -> str:
    """``redis://host:6379/15`` for worker ``gw1`` -> ``redis://host:6379/14``."""
    parts = urlsplit(url)
    database = int(parts.path.strip("/") or 0)
    index = int(worker.removeprefix("gw"))
    if index > database:
        raise ValueError(f"REDIS_URL names database {database}: too low for worker {worker}; use /15")
    return urlunsplit(parts._replace(path=f"/{database - index}"))


_worker = os.environ.get("PYTEST_XDIST_WORKER")
if _worker and os.environ.get("REDIS_URL"):
    os.environ["REDIS_URL"] = redis_url_for_worker(os.environ["REDIS_URL"], _worker)
