"""Sockets while PostgreSQL is away: an open one stays open, a new one is told to come back.

An idle page pings when it has heard nothing for a while; during an outage the ping is answered
with the head the socket last knew (the log cannot have moved without the database), not with a
closed socket. A socket opened during the outage gets ``database_unavailable`` and the close code
``4503``, which the page treats as "try again" (daphne refuses ``1013`` from an application and
closes with ``1011`` instead).

The PostgreSQL cluster and redis-server are the test's own (tests/faults/conftest.py).
"""

from __future__ import annotations

import asyncio
import json
import urllib.error
import urllib.request

import pytest

from .helpers import SLUG, get_head

pytestmark = [pytest.mark.slow]

BOUND = 10  # seconds any one frame may take before the test fails (a bound on a hang)


def probe(base: str, path: str) -> tuple[int, dict]:
    try:
        with urllib.request.urlopen(f"http://{base}{path}", timeout=BOUND) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


async def frame_of(ws, *kinds: str) -> dict:
    while True:
        frame = json.loads(await asyncio.wait_for(ws.recv(), BOUND))
        if frame["type"] in kinds:
            return frame


def test_an_open_socket_is_answered_and_a_new_one_told_to_retry_during_an_outage(pg_cluster, own_db, own_daphnes):
    # Heartbeats every second: the test checks their failures do not close the socket either.
    (server,) = own_daphnes(1)
    alice = own_db.tokens["alice"]
    head = get_head(server.base, alice)
    url = f"ws://{server.base}/ws/campaigns/{SLUG}/table/?after={head}"
    bearer = {"Authorization": f"Bearer {alice}"}

    probes = {}

    async def scenario():
        import websockets

        async with websockets.connect(url, additional_headers=bearer, open_timeout=BOUND, ping_interval=None) as ws:
            ready = await frame_of(ws, "ready")
            pg_cluster.stop()
            await ws.send(json.dumps({"type": "ping"}))
            pong = await frame_of(ws, "pong")
            await ws.send(json.dumps({"type": "ping"}))  # and again: the socket is still open
            again = await frame_of(ws, "pong")
            probes.update(healthz=probe(server.base, "/healthz"), readyz=probe(server.base, "/readyz"))

            async with websockets.connect(url, additional_headers=bearer, open_timeout=BOUND,
                                          ping_interval=None) as late:
                refusal = await frame_of(late, "error")
                with pytest.raises(websockets.ConnectionClosed):
                    await asyncio.wait_for(late.recv(), BOUND)
                closed_with = late.close_code
        return ready, pong, again, refusal, closed_with

    ready, pong, again, refusal, closed_with = asyncio.run(scenario())
    assert pong["head"] == again["head"] == ready["head"], (pong, ready)
    assert pong["seq"] == ready["seq"]
    assert refusal["code"] == "database_unavailable", refusal
    assert closed_with == 4503, closed_with
    # The process is up (a process manager must not restart it), and not ready (a balancer sends no one).
    assert probes["healthz"] == (200, {"status": "ok"}), probes
    assert probes["readyz"] == (503, {"status": "unavailable", "failing": ["database", "migrations"]}), probes
    log = server.log_text()
    assert "Traceback" not in log, log[-3000:]
