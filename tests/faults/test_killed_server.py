"""A daphne killed with players at the table: they leave the table's channel group and the
others' presence list by themselves, and come back when their page reconnects.

A killed process discards nothing and says goodbye for nobody.

* Channel groups: with channels-redis's default (a day) every broadcast kept writing to the
  dead channels until they were "over capacity". Now memberships expire after
  ``CHANNEL_GROUP_EXPIRY`` seconds unless refreshed, and each live socket's heartbeat refreshes
  its own: the dead channels go, the live ones stay and keep hearing every roll.
* Presence lives in Redis with a deadline per socket (sessions/presence.py): a socket's
  heartbeat pushes its deadline on, a dead process's entries lapse, and each process checks
  once per heartbeat whether the members changed unseen.

The redis-server and PostgreSQL are the test's own (tests/faults/conftest.py).
"""

from __future__ import annotations

import asyncio

import pytest
import redis

from sessions.transport import group_name
from sessions import presence

from .helpers import TableClient, describe, post_command, wait_until

pytestmark = [pytest.mark.slow]

EXPIRY = 3  # seconds; heartbeats (and so refreshes) come every second


def test_a_killed_servers_players_leave_the_group_and_presence_and_come_back_on_reconnect(
        own_db, own_redis, own_daphnes, settings):
    a, b = own_daphnes(2, CHANNEL_GROUP_EXPIRY=str(EXPIRY))
    key = own_db.tokens
    settings.TABLE_HEARTBEAT_SECONDS = 1  # as the servers run: presence.ttl() is theirs
    assert presence.ttl() > EXPIRY + 1  # a lapsed presence entry means a stale group membership
    bound = presence.ttl() + 15  # the lapse, then a heartbeat's check
    (campaign_id,) = own_db.sql("SELECT id FROM campaign_campaign WHERE slug = 'torn-road'")[0]
    layer = redis.Redis(port=own_redis.port)
    group = f"asgi:group:{group_name(campaign_id)}"
    rolls = iter(range(1000))

    def in_group() -> int:
        return layer.zcard(group)

    async def roll_through_b() -> int:  # a broadcast: channels-redis drops expired members on send
        status, body = await asyncio.to_thread(post_command, b.base, key["alice"], f"roll-{next(rolls)}")
        assert status == 201, body
        return body["seq"]

    async def scenario():
        on_a = [TableClient("alice@a", key["alice"], a.base), TableClient("watcher@a", key["watcher"], a.base)]
        bob = TableClient("bob@b", key["bob"], b.base)
        everyone = (*on_a, bob)
        for c in everyone:
            c.start()
        try:
            # A socket is ready once it joined the table's group.
            await wait_until(lambda: all(c.readies for c in everyone) and bob.present == ["alice", "bob", "watcher"],
                             10, f"everyone at the table (bob sees {bob.present})", clients=everyone)
            assert in_group() == 3
            a.kill()  # the process dies without a word: no goodbye, no group_discard
            for c in on_a:
                await c.stop()  # their pages are gone too (no reconnecting elsewhere)

            # The dead process's presence entries lapse, and b's heartbeat check tells bob. By then
            # their group memberships (EXPIRY, shorter than the presence lapse) are stale too: the
            # next broadcast drops them.
            await wait_until(lambda: bob.present == ["bob"], bound, "the killed server's players to leave "
                             f"bob's list (he sees {bob.present})", clients=[bob])
            head = await roll_through_b()
            # The roll's broadcast (sent in the background) drops the stale members; bob's socket
            # outlived several expiries: its heartbeat kept it in, and it hears the roll.
            await wait_until(lambda: in_group() == 1, 5, "the killed server's players to leave the group", poll=0.05)
            await wait_until(lambda: bob.last == head, 5, "bob to hear the roll: " + describe(bob), clients=[bob])

            # Alice's page reconnects, to the surviving process: she is back, in the group and the list.
            again = TableClient("alice@b", key["alice"], b.base)
            again.start()
            try:
                await wait_until(lambda: again.readies and bob.present == ["alice", "bob"] == again.present, 10,
                                 f"alice back (bob sees {bob.present}, alice {again.present})", clients=[bob, again])
                assert in_group() == 2
            finally:
                await again.stop()
        finally:
            for c in everyone:
                await c.stop()
        return bob

    bob = asyncio.run(scenario())
    assert bob.opened == 1 and not bob.problems, describe(bob)
    assert [(e["seq"], e["hash"]) for e in bob.events] == own_db.events()
