"""A daphne killed with sockets open: its channels leave the table's group in bounded time.

A killed process never discards its sockets from the channel layer's groups. With
channels-redis's default (a day) every broadcast kept writing to the dead channels until
they were "over capacity". Now group memberships expire after ``CHANNEL_GROUP_EXPIRY``
seconds unless refreshed, and each live socket's heartbeat refreshes its own: the dead
channels go, the live ones stay and keep hearing every roll.

The redis-server and PostgreSQL are the test's own (tests/faults/conftest.py).
"""

from __future__ import annotations

import asyncio

import pytest
import redis

from campaign.broadcast import group_name

from .helpers import TableClient, describe, post_command, wait_until

pytestmark = [pytest.mark.slow]

EXPIRY = 3  # seconds; heartbeats (and so refreshes) come every second


def test_a_killed_servers_sockets_leave_the_group_and_the_live_ones_stay(own_db, own_redis, own_daphnes):
    a, b = own_daphnes(2, CHANNEL_GROUP_EXPIRY=str(EXPIRY))
    key = own_db.tokens
    (campaign_id,) = own_db.sql("SELECT id FROM campaign_campaign WHERE slug = 'torn-road'")[0]
    layer = redis.Redis(port=own_redis.port)
    group = f"asgi:group:{group_name(campaign_id)}"
    rolls = iter(range(1000))

    def members() -> int:
        return layer.zcard(group)

    async def roll_through_b() -> int:  # a broadcast: channels-redis drops expired members on send
        status, body = await asyncio.to_thread(post_command, b.base, key["alice"], f"roll-{next(rolls)}")
        assert status == 201, body
        return body["seq"]

    async def scenario():
        on_a = [TableClient("gm@a", key["gm"], a.base), TableClient("watcher@a", key["watcher"], a.base)]
        on_b = TableClient("bob@b", key["bob"], b.base)
        clients = [*on_a, on_b]
        for c in clients:
            c.start()
        try:
            await wait_until(lambda: all(c.readies for c in clients) and members() == 3, 10,
                             "three sockets in the table's group")
            for c in on_a:
                await c.stop()  # the clients go quiet; the process dies without a word
            a.kill()
            head = 0

            async def only_b_left() -> bool:
                nonlocal head
                head = await roll_through_b()
                return members() == 1

            deadline = asyncio.get_running_loop().time() + 6 * EXPIRY + 10
            while not await only_b_left():
                assert asyncio.get_running_loop().time() < deadline, (
                    f"the killed server's sockets are still in the group ({members()} members)")
                await asyncio.sleep(0.5)  # pacing the rolls (a poll, not a synchronisation)
            # bob's socket outlived several expiries: its heartbeat kept it in, and it heard every roll.
            await wait_until(lambda: on_b.last == head, 5, "bob to hear the last roll: " + describe(on_b))
        finally:
            for c in clients:
                await c.stop()
        return on_b

    on_b = asyncio.run(scenario())
    assert on_b.opened == 1 and not on_b.problems, describe(on_b)
    assert [(e["seq"], e["hash"]) for e in on_b.events] == own_db.events()
