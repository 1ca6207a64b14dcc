"""A daphne whose clock runs two minutes ahead of the others.

Presence deadlines (who is at the table, each user's socket count) are kept in Redis and read by
every process. Taken from each process's own clock, a process 120 s ahead wrote deadlines 120 s
late: its sockets were listed, and counted against their user's limit, two minutes after it died.
They are taken from Redis's clock (sessions/presence.py), so every deadline this process writes,
at arrival and at each heartbeat, is at most one TTL past Redis's now.

The process's clock is moved by a ``sitecustomize`` module on its ``PYTHONPATH`` (``time.time``
from its first import on). The PostgreSQL cluster and redis-server are the test's own
(tests/faults/conftest.py).
"""

from __future__ import annotations

import asyncio
import json
import os

import pytest
import redis

from sessions.presence import RedisPresence
from tests.servers import ROOT

from .helpers import SLUG, get_head

pytestmark = [pytest.mark.slow]

AHEAD = 120  # seconds
HEARTBEAT = 1  # seconds (own_daphnes' default): the TTL is 3 heartbeats and 5 s
TTL = 3 * HEARTBEAT + 5
HANG = 60  # seconds a frame may take before the test fails (a bound on a hang, never what is checked)
SITECUSTOMIZE = f"""import time

_real = time.time
time.time = lambda: _real() + {AHEAD}  # this process's clock runs ahead of every other one's
"""


def test_a_process_whose_clock_runs_ahead_keeps_presence_in_redis_time(own_db, own_redis, own_daphnes, tmp_path):
    (tmp_path / "ahead").mkdir()
    (tmp_path / "ahead" / "sitecustomize.py").write_text(SITECUSTOMIZE)
    path = os.pathsep.join([str(tmp_path / "ahead"), str(ROOT), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    (server,) = own_daphnes(1, PYTHONPATH=path, TABLE_HEARTBEAT_SECONDS=str(HEARTBEAT))
    alice = own_db.tokens["alice"]
    head = get_head(server.base, alice)
    [(campaign,)] = own_db.sql("SELECT id FROM campaign_campaign WHERE slug = %s", (SLUG,))
    [(user,)] = own_db.sql("SELECT id FROM auth_user WHERE username = 'alice'")
    client = redis.Redis.from_url(own_redis.url)

    def lateness() -> list[float]:
        """How far past Redis's now each of the process's deadlines lies."""
        seconds, micro = client.time()
        now = seconds + micro / 1e6
        keys = (f"{RedisPresence.PREFIX}:c:{campaign}", f"{RedisPresence.PREFIX}:u:{user}")
        return [deadline - now for key in keys for _, deadline in client.zrange(key, 0, -1, withscores=True)]

    async def scenario():
        import websockets

        async with websockets.connect(f"ws://{server.base}/ws/campaigns/{SLUG}/table/?after={head}",
                                      additional_headers={"Authorization": f"Bearer {alice}"},
                                      open_timeout=HANG, ping_interval=None) as ws:
            seen = []
            for kind in ("ready", "heartbeat", "heartbeat"):  # its arrival, then heartbeats that push it
                while json.loads(await asyncio.wait_for(ws.recv(), HANG))["type"] != kind:
                    pass
                seen.append(lateness())
            return seen

    try:
        seen = asyncio.run(scenario())
    finally:
        client.close()
    assert all(len(late) == 2 and all(0 < x <= TTL for x in late) for late in seen), seen
    assert "Traceback" not in server.log_text()
