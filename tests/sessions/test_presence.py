"""Presence off the database: right across reconnects, several devices and process death.

The same tests run against both stores (sessions/presence.py): process memory
(one process, no Redis) and Redis (shared by every process). Time passes by a
clock the test moves, never by waiting.
"""

from __future__ import annotations

import uuid

import pytest

from sessions import presence
from tests.conftest import HANG
from tests.sessions.test_table_consumer import connect, until_ready

HEAD = {"seq": 3, "hash": "a" * 64}


class Clock:
    def __init__(self):
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now

    def pass_(self, seconds: float) -> None:
        self.now += seconds


# The Redis store is marked `redis`, so the SQLite pass (`make test-sqlite`, no Redis) leaves it out.
@pytest.fixture(params=["memory", pytest.param("redis", marks=pytest.mark.redis)])
def stores(request, settings):
    """``make()`` -> a store as one process sees it; with Redis, every store made shares the entries."""
    clock = Clock()
    prefix = f"tk:test-presence:{uuid.uuid4().hex}"
    made = []

    def make():
        if request.param == "memory":
            store = made[0] if made else presence.MemoryPresence(clock)
        else:
            store = presence.RedisPresence(request.getfixturevalue("require_redis"), clock)
            store.PREFIX = prefix
        made.append(store)
        return store

    make.clock = clock
    make.kind = request.param
    return make


def names(members):
    return [m["username"] for m in members]


async def test_arrive_and_leave_list_each_member_once(stores):
    store = stores()
    assert await store.arrive(1, "c-alice-1", 2, "alice", "player", limit=8)
    assert await store.arrive(1, "c-alice-2", 2, "alice", "player", limit=8)  # her phone too
    assert await store.arrive(1, "c-gm", 1, "gm", "gm", limit=8)
    assert await store.arrive(2, "c-bob", 3, "bob", "player", limit=8)  # another campaign
    assert names(await store.members(1)) == ["alice", "gm"]
    await store.report_head(1, "c-alice-2", HEAD)
    assert (await store.members(1))[0] == {"username": "alice", "role": "player", "head": HEAD}
    await store.leave(1, "c-alice-2", 2)
    assert names(await store.members(1)) == ["alice", "gm"]  # still there on the other device
    await store.leave(1, "c-alice-1", 2)
    assert names(await store.members(1)) == ["gm"]
    assert await store.sockets_of(2) == 0


async def test_a_reconnect_keeps_the_member_listed_and_counted_once(stores):
    store = stores()
    await store.arrive(1, "old", 2, "alice", "player", limit=1)
    # The socket dropped and the page reconnected before the old socket's close was seen.
    assert not await store.arrive(1, "new", 2, "alice", "player", limit=1)
    await store.leave(1, "old", 2)
    assert await store.arrive(1, "new", 2, "alice", "player", limit=1)
    assert names(await store.members(1)) == ["alice"] and await store.sockets_of(2) == 1


async def test_a_dead_processs_members_disappear_after_the_ttl(stores, settings):
    settings.TABLE_HEARTBEAT_SECONDS = 15
    crashed, alive = stores(), stores()
    await crashed.arrive(1, "p1-alice", 2, "alice", "player", limit=1)
    await alive.arrive(1, "p2-gm", 1, "gm", "gm", limit=8)
    # Heartbeats go on for the live process only; the crashed one never refreshes or leaves.
    for _ in range(3):
        stores.clock.pass_(settings.TABLE_HEARTBEAT_SECONDS)
        await alive.still_here(1, "p2-gm", 1, "gm", "gm")
        assert names(await alive.members(1)) == ["alice", "gm"]  # within the TTL: maybe just slow
    stores.clock.pass_(presence.ttl() - 3 * settings.TABLE_HEARTBEAT_SECONDS)
    await alive.still_here(1, "p2-gm", 1, "gm", "gm")
    assert names(await alive.members(1)) == ["gm"]
    # Her sockets no longer count against her cap, so she can come back.
    assert await alive.sockets_of(2) == 0
    assert await alive.arrive(1, "p2-alice", 2, "alice", "player", limit=1)
    assert names(await alive.members(1)) == ["alice", "gm"]


async def test_a_socket_that_heartbeats_stays_listed(stores):
    store = stores()
    await store.arrive(1, "c", 2, "alice", "player", limit=8)
    await store.report_head(1, "c", HEAD)
    for _ in range(10):
        stores.clock.pass_(presence.ttl() - 1)
        await store.still_here(1, "c", 2, "alice", "player")
    assert await store.members(1) == [{"username": "alice", "role": "player", "head": HEAD}]


async def test_a_socket_swept_while_it_lived_comes_back_with_its_next_heartbeat(stores):
    store = stores()
    await store.arrive(1, "c", 2, "alice", "player", limit=8)
    stores.clock.pass_(presence.ttl() + 1)  # a stall longer than the TTL (or Redis restarted)
    assert await store.members(1) == []
    await store.still_here(1, "c", 2, "alice", "player")
    assert names(await store.members(1)) == ["alice"] and await store.sockets_of(2) == 1


@pytest.mark.django_db(transaction=True)
async def test_the_table_is_told_when_a_dead_processs_member_lapses(transactional_table, settings):
    settings.TABLE_HEARTBEAT_SECONDS = 0.2
    table = transactional_table
    store = presence.store()
    clock, kept = Clock(), store.clock
    store.clock = clock
    try:
        # Bob's socket was on a process that was killed: his entry is there, nobody refreshes it.
        await store.arrive(table.campaign.id, "killed-process!bob", table.bob.id, "bob", "player", limit=8)
        gm = await connect(table, table.gm)
        await until_ready(gm)
        frame = await gm.receive_json_from(timeout=HANG)
        assert frame["type"] == "presence" and names(frame["members"]) == ["bob", "gm"]
        clock.pass_(presence.ttl() + 1)  # the gm's own heartbeats keep the gm (they refresh from now on)
        for _ in range(20):  # the gm's next heartbeats notice and announce it
            frame = await gm.receive_json_from(timeout=HANG)
            if frame["type"] == "presence":
                break
        assert names(frame["members"]) == ["gm"]
        await gm.disconnect()
    finally:
        store.clock = kept


AHEAD = """
import asyncio, json, os, sys, time
real = time.time
time.time = lambda: real() + 120  # this process's clock runs two minutes ahead, from its first import
import django
django.setup()
from sessions import presence
store = presence.RedisPresence(sys.argv[1])
store.PREFIX = sys.argv[2]
asyncio.run(store.arrive(1, "ahead!1", 1, "alice", "player", limit=8))
"""


@pytest.mark.redis
def test_a_process_whose_clock_runs_ahead_writes_deadlines_in_redis_time(require_redis, settings):
    """Deadlines come from Redis's clock: a process two minutes ahead would otherwise keep its
    sockets listed two minutes after it died (sessions/presence.py)."""
    import os
    import subprocess
    import sys

    import redis

    prefix = f"tk:test-presence:{uuid.uuid4().hex}"
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "campaign.settings", "REDIS_URL": require_redis}
    done = subprocess.run([sys.executable, "-c", AHEAD, require_redis, prefix], env=env, capture_output=True,
                          text=True, timeout=HANG, cwd=str(settings.BASE_DIR))
    assert done.returncode == 0, done.stderr[-2000:]
    client = redis.Redis.from_url(require_redis)
    try:
        seconds, micro = client.time()
        deadline = client.zscore(f"{prefix}:c:1", "ahead!1")
        client.delete(f"{prefix}:c:1", f"{prefix}:m:1", f"{prefix}:u:1")
    finally:
        client.close()
    assert 0 < deadline - (seconds + micro / 1e6) <= presence.ttl(), deadline - seconds
