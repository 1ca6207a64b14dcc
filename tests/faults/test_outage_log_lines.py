"""A Redis outage in the server's log: one line per incident, not one per socket and heartbeat.

Every socket of a process meets the outage at every heartbeat (its presence, its table's
doorbell); written as they come, a 20 s outage wrote about 1,100 lines per process and buried
whatever else happened. The console handler (campaign/logs.py, ``LOG_INCIDENT_SECONDS``) writes
the first line of each kind and holds back its repeats for the window.

The PostgreSQL cluster and redis-server are the test's own (tests/faults/conftest.py).
"""

from __future__ import annotations

import asyncio
import json
import re
from collections import Counter
from contextlib import AsyncExitStack

import pytest

from .helpers import SLUG, get_head

pytestmark = [pytest.mark.slow]

SOCKETS = 12
BEATS = 3  # heartbeats every socket hears with Redis down
HANG = 60  # seconds a frame may take before the test fails (a bound on a hang, never what is checked)
PROBLEM = re.compile(r" (WARNING|ERROR|CRITICAL) ")
CONTEXT = re.compile(r"\[[^]]*\] ")  # [socket=... campaign=... user=...]


def test_a_redis_outage_seen_by_every_socket_is_a_few_lines(own_db, own_redis, own_daphnes):
    # The window outlasts the test however slow the machine: a repeat is never a new incident here.
    (server,) = own_daphnes(1, SOCKETS_PER_USER=str(SOCKETS), LOG_FORMAT="text",
                            LOG_INCIDENT_SECONDS=str(10 * HANG))
    alice = own_db.tokens["alice"]
    head = get_head(server.base, alice)
    url = f"ws://{server.base}/ws/campaigns/{SLUG}/table/?after={head}"

    async def scenario():
        import websockets

        async def next_frame(ws, kind: str) -> dict:
            while True:
                frame = json.loads(await asyncio.wait_for(ws.recv(), HANG))
                if frame["type"] == kind:
                    return frame

        async with AsyncExitStack() as stack:
            sockets = []
            for _ in range(SOCKETS):
                ws = await stack.enter_async_context(websockets.connect(
                    url, additional_headers={"Authorization": f"Bearer {alice}"}, open_timeout=HANG,
                    ping_interval=None))
                await next_frame(ws, "ready")
                sockets.append(ws)
            before = server.log_text()
            own_redis.stop()
            for _ in range(BEATS + 1):  # the first may have been on its way before the stop
                await asyncio.gather(*(next_frame(ws, "heartbeat") for ws in sockets))
            return before

    before = asyncio.run(scenario())  # the sockets close too, with Redis still down
    during = server.log_text()[len(before):]
    problems = [line for line in during.splitlines() if PROBLEM.search(line)]
    assert problems, during[-3000:]  # the outage is in the log...
    # ...each kind of failure once: the same message from another socket, or with another retry
    # delay, is a repeat.
    kinds = Counter(re.sub(r"[0-9.]+", "N", CONTEXT.sub("", line.split(" ", 1)[1])) for line in problems)
    assert max(kinds.values()) == 1, "\n".join(problems)
