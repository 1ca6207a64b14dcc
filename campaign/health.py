"""Probes for a process manager or a load balancer: ``/healthz`` and ``/readyz``.

* ``/healthz``: the process is up and answers HTTP. No database, no Redis: a probe that restarts
  processes must not restart every one of them because PostgreSQL is away (that is what
  ``/readyz`` says, and a restart would not bring it back).
* ``/readyz``: this process can serve tables: its database answers, its migrations are all
  applied, and its channel layer (Redis, when several processes share one) answers. ``200``, or
  ``503`` naming only which of ``database``, ``migrations`` and ``channel_layer`` failed: no
  addresses, versions or error texts for whoever can reach the port (they are in the log).

Both are unauthenticated, never cached, and exempt from the https redirect (a probe talks to the
process directly, in plain http). Each check is bounded by a short timeout.
"""

from __future__ import annotations

import logging

import redis
from django.conf import settings
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.http import JsonResponse
from django.views.decorators.cache import never_cache

log = logging.getLogger(__name__)

REDIS_TIMEOUT = 1.0  # seconds: a frozen Redis answers "not ready" quickly, not after redis-py's defaults
_migrated = False  # once every migration this code knows is applied, it stays so for this process


@never_cache
def healthz(request):
    return JsonResponse({"status": "ok"})


@never_cache
def readyz(request):
    failing = [name for name, check in (("database", _database), ("migrations", _migrations),
                                        ("channel_layer", _channel_layer)) if not _passes(name, check)]
    if failing:
        return JsonResponse({"status": "unavailable", "failing": failing}, status=503)
    return JsonResponse({"status": "ready"})


def _passes(name: str, check) -> bool:
    try:
        return check()
    except Exception as e:
        log.warning("readyz: %s unavailable: %r", name, e)
        return False


def _database() -> bool:
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
        return cursor.fetchone() == (1,)


def _migrations() -> bool:
    global _migrated
    if not _migrated:
        executor = MigrationExecutor(connection)
        pending = executor.migration_plan(executor.loader.graph.leaf_nodes())
        if pending:
            log.warning("readyz: %d migration(s) not applied, e.g. %s", len(pending), pending[0][0])
        _migrated = not pending
    return _migrated


def _channel_layer() -> bool:
    if "Redis" not in settings.CHANNEL_LAYERS["default"]["BACKEND"]:
        return True  # the in-memory layer is this process's own
    client = redis.Redis.from_url(settings.REDIS_URL, socket_timeout=REDIS_TIMEOUT,
                                  socket_connect_timeout=REDIS_TIMEOUT)
    try:
        return bool(client.ping())
    finally:
        client.close()
