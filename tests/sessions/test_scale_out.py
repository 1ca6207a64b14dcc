"""Two server processes sharing Redis: a roll made through one reaches a socket on the other."""

from __future__ import annotations

import asyncio
import json
import urllib.request

import pytest
import websockets

from campaign.models import ApiToken
from tests.servers import daphne

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.redis]


def post_roll(base, token, client_id):
    request = urllib.request.Request(
        f"http://{base}/api/campaigns/torn-road/commands",
        data=json.dumps({"id": client_id, "action": {"type": "roll", "notation": "2d6"}}).encode(),
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
        method="POST",
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        return response.status, json.loads(response.read())


def test_roll_through_one_process_reaches_a_socket_on_another(transactional_table, require_redis):
    table = transactional_table
    alice = ApiToken.objects.create(user=table.alice).key
    bob = ApiToken.objects.create(user=table.bob).key
    # Heartbeats off: only the Redis broadcast can deliver the event in time.
    slow = {"TABLE_HEARTBEAT_SECONDS": "3600"}
    with daphne(redis_url=require_redis, **slow) as a, daphne(redis_url=require_redis, **slow) as b:

        async def scenario():
            async with websockets.connect(f"ws://{b}/ws/campaigns/torn-road/table/?after=0",
                                          additional_headers={"Authorization": f"Bearer {bob}"}) as ws:
                while json.loads(await asyncio.wait_for(ws.recv(), 10))["type"] != "ready":
                    pass
                status, event = await asyncio.to_thread(post_roll, a, alice, "via-a")
                assert status == 201
                while True:
                    frame = json.loads(await asyncio.wait_for(ws.recv(), 10))
                    if frame["type"] == "event":
                        return event, frame["event"]

        posted, received = asyncio.run(scenario())
    assert received["seq"] == posted["seq"]
    assert received["payload"] == posted["payload"]
