"""A rolling restart: a daphne told to stop (SIGTERM) frees its sockets' presence and the user's
socket count, and closes each socket with 4012, so the page reconnects at once to another process
and is not refused as one socket too many (docs/operations.md, "Rolling restarts")."""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
from contextlib import AsyncExitStack

import pytest
import websockets

from campaign.models import ApiToken
from sessions.consumers import CLOSE_RESTARTING
from tests.servers import DAPHNE, ROOT, daphne, free_port, server_environment, wait_for_port

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.redis]
HANG = 60  # a bound on a hang, never what is checked
PER_USER = "3"


async def sit_down(base: str, token: str):
    ws = await websockets.connect(f"ws://{base}/ws/campaigns/torn-road/table/?after=0",
                                  additional_headers={"Authorization": f"Bearer {token}"})
    while True:  # the backlog's events, then ready (or a refusal)
        frame = json.loads(await asyncio.wait_for(ws.recv(), HANG))
        if frame["type"] in ("ready", "error"):
            return ws, frame


def test_a_stopping_process_frees_its_sockets_and_closes_them_to_reconnect_elsewhere(transactional_table,
                                                                                     require_redis):
    token = ApiToken.objects.create(user=transactional_table.gm).key
    # Heartbeats off: nothing but the stopping process can free the slots within the test.
    env = {"TABLE_HEARTBEAT_SECONDS": "3600", "SOCKETS_PER_USER": PER_USER}
    port = free_port()
    stopping = subprocess.Popen([*DAPHNE, str(port), "campaign.asgi:application"], cwd=ROOT,
                                env=server_environment(redis_url=require_redis, **env),
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        wait_for_port(port, stopping)
        with daphne(redis_url=require_redis, **env) as other:

            async def scenario():
                async with AsyncExitStack() as stack:
                    sockets = []
                    for _ in range(int(PER_USER)):  # the GM's every slot, on the process about to stop
                        ws, frame = await sit_down(f"127.0.0.1:{port}", token)
                        stack.push_async_callback(ws.close)
                        assert frame["type"] == "ready"
                        sockets.append(ws)
                    ws, frame = await sit_down(other, token)  # one more, anywhere: refused
                    assert frame["code"] == "too_many_sockets"
                    await asyncio.wait_for(ws.wait_closed(), HANG)
                    stopping.send_signal(signal.SIGTERM)
                    for ws in sockets:
                        await asyncio.wait_for(ws.wait_closed(), HANG)
                    codes = [ws.close_code for ws in sockets]
                    # Every slot is free again: the page's reconnects land on the other process.
                    again = [await sit_down(other, token) for _ in range(int(PER_USER))]
                    for ws, _ in again:
                        stack.push_async_callback(ws.close)
                    return codes, [frame["type"] for _, frame in again]

            codes, frames = asyncio.run(scenario())
        assert codes == [CLOSE_RESTARTING] * int(PER_USER)
        assert frames == ["ready"] * int(PER_USER)
        assert stopping.wait(timeout=HANG) is not None
    finally:
        if stopping.poll() is None:
            stopping.kill()
            stopping.wait()
