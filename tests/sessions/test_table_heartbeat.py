"""The per-table heartbeat (sessions/consumers.py ``_beat``): a socket that left stays gone, and one stuck socket does not stop the others."""

import asyncio

import pytest

from tests.conftest import HANG
from tests.sessions.test_table_consumer import connect, until_ready

pytestmark = pytest.mark.django_db(transaction=True)


async def test_a_socket_that_leaves_during_its_tables_beat_is_not_brought_back(transactional_table, settings,
                                                                                monkeypatch):
    """The table's beat takes its list of sockets, reads the head, then refreshes the presence and the
    groups of the sockets on that list. A socket that left in between (its presence entry and its groups
    removed by ``disconnect``) must not be put back: the table would show a member who has gone, and the
    layer would keep ringing a dead channel until the group expires."""
    from sessions import consumers, presence

    settings.TABLE_HEARTBEAT_SECONDS = 0.2
    table = transactional_table
    gm = await connect(table, table.gm)
    await until_ready(gm)
    bob = await connect(table, table.bob)
    await until_ready(bob)

    entered, gate = asyncio.Event(), asyncio.Event()
    real_shared = consumers.shared

    async def held_shared(key, since, fn, *args):  # the beat's head read takes a while
        if key[0] == "head" and not gate.is_set():
            entered.set()
            await gate.wait()
        return await real_shared(key, since, fn, *args)

    monkeypatch.setattr(consumers, "shared", held_shared)
    store = presence.store()
    refreshed, real_refresh = asyncio.Event(), store.still_here_many

    async def spy(campaign_id, entries):
        await real_refresh(campaign_id, entries)
        if gate.is_set():
            refreshed.set()

    monkeypatch.setattr(store, "still_here_many", spy)

    await asyncio.wait_for(entered.wait(), HANG)  # the beat has its list of sockets, bob's among them
    await bob.disconnect()  # bob closes his tab: disconnect() has run to its end
    assert "bob" not in [m["username"] for m in await store.members(table.campaign.id)]
    gate.set()
    await asyncio.wait_for(refreshed.wait(), HANG)
    assert "bob" not in [m["username"] for m in await store.members(table.campaign.id)], \
        "the table's heartbeat brought back the presence of a socket that had left"
    await gm.disconnect()


async def test_one_sockets_stuck_catch_up_does_not_stop_the_tables_heartbeat_for_the_others(
        transactional_table, settings, monkeypatch):
    """Each socket's part of the beat (its catch-up, under its send lock, across reads of the log) is
    awaited together with every other socket's before the table's presence and groups are refreshed and
    before the next beat. One socket whose catch-up does not end (its lock held by a read that hangs)
    stops the heartbeat of the whole table in this process: no heartbeat frame for anyone else, no
    presence refresh (every member looks gone after presence.ttl), no group refresh (the table group
    expires and with it every doorbell). A per-socket heartbeat kept that failure to its own socket."""
    from sessions import consumers

    settings.TABLE_HEARTBEAT_SECONDS = 0.05
    table = transactional_table
    gm = await connect(table, table.gm)
    await until_ready(gm)
    bob = await connect(table, table.bob)
    await until_ready(bob)

    stuck, real_beat = asyncio.Event(), consumers.TableConsumer.beat

    async def beat(self, head):
        if self.membership.user_id == table.gm.id:
            stuck.set()
            await asyncio.Event().wait()  # the GM's catch-up never ends
        await real_beat(self, head)

    monkeypatch.setattr(consumers.TableConsumer, "beat", beat)
    await asyncio.wait_for(stuck.wait(), HANG)
    # Drain what bob had heard so far, then he must still hear his table's heartbeat.
    while not await bob.receive_nothing(timeout=0.01):
        await bob.receive_json_from()
    heard = []
    try:
        for _ in range(200):  # a hundred heartbeat periods
            frame = await bob.receive_json_from(timeout=HANG)  # a stopped heartbeat ends the loop here
            heard.append(frame["type"])
            if frame["type"] == "heartbeat":
                break
    except asyncio.TimeoutError:
        pass
    assert "heartbeat" in heard, "bob's heartbeat stopped because the GM's socket's catch-up hung"
    for comm in (gm, bob):
        await comm.disconnect()
