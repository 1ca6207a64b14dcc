"""Talekeeper's settings plus Django's PostgreSQL connection pool (an experiment, bench only).

``--app-settings bench.settings_pool`` runs the Talekeeper daphnes with this
module: everything as in ``campaign.settings`` (same environment variables),
except that PostgreSQL connections come from a psycopg pool kept per process
(Django 5.1+, ``OPTIONS["pool"]``; needs the ``psycopg-pool`` package), so a
command does not open a new database connection. Used to measure what the
shipped default (``DB_CONN_MAX_AGE=0``: a new connection per database call)
costs; see docs/performance.md.
"""

import os

from campaign.settings import *  # noqa: F401,F403
from campaign.settings import DATABASES

if DATABASES["default"]["ENGINE"].endswith("postgresql"):
    DATABASES["default"]["CONN_MAX_AGE"] = 0  # the pool and persistent connections exclude each other
    DATABASES["default"].setdefault("OPTIONS", {})["pool"] = {
        "min_size": 1,
        "max_size": int(os.environ.get("BENCH_DB_POOL_MAX") or 8),
        "timeout": 10,
    }
