"""The Redis channel layer: a cancelled read always ends, and takes nothing with it.

A consumer's channel-layer read is cancelled when its socket closes. On Python 3.11, redis-py's
``asyncio.wait_for`` around each command write returned the write's result instead of raising
when the cancel arrived during the write (CPython gh-86296), and channels-redis then re-sent
BZPOPMIN every 5 s for ever. It showed up after the socket fuzzer's refused connect, whose read
is cancelled a few loop steps after it starts, once per full run (sessions/layers.py).

Each test cancels at every loop step of the operation's start, so the race is not left to
timing: a step count either lands inside a write or it does not, the same way every run.
"""

import asyncio

import pytest
from django.conf import settings

from sessions.layers import ResilientRedisChannelLayer

pytestmark = pytest.mark.redis
STEPS = 60  # more than a read takes to connect, select the database, clean up and block in BZPOPMIN


@pytest.fixture
async def layer(require_redis):
    layer = ResilientRedisChannelLayer(**settings.CHANNEL_LAYERS["default"]["CONFIG"])
    yield layer
    await layer.flush()


async def steps(n: int) -> None:
    for _ in range(n):
        await asyncio.sleep(0)


async def test_a_command_cancelled_while_it_is_written_raises(layer):
    pool = layer.connection(0).connection_pool
    lost = []
    for n in range(STEPS):
        connection = await pool.get_connection()
        try:
            write = asyncio.ensure_future(connection.send_command("PING"))
            await steps(n)
            requested = write.cancel()
            await asyncio.wait([write])
            if requested and not write.cancelled():
                lost.append(n)
        finally:
            await connection.disconnect()
            await pool.release(connection)
    assert not lost, f"writes cancelled after {lost} loop steps carried on as if nothing happened"


@pytest.mark.parametrize("cancels", [1, 2], ids=["cancelled", "cancelled-twice"])
async def test_a_read_cancelled_at_any_step_ends_and_leaves_the_message(layer, cancels):
    """A consumer's read is cancelled once by its socket closing, and often again by whoever tears
    the loop down. Either way the read ends at once, and the next message is still there for the
    next read: a read whose cancel was lost would take it (so no wait is needed to see it)."""
    channel = await layer.new_channel()
    for n in range(STEPS):
        read = asyncio.ensure_future(layer.receive(channel))
        await steps(n)
        for _ in range(cancels):
            read.cancel()
            await steps(1)
        await layer.send(channel, {"type": "doorbell", "n": n})
        await asyncio.wait([read])
        assert read.cancelled(), f"a read cancelled after {n} loop steps received {read.result()}"
        async with asyncio.timeout(10):  # bounded: the message is already there
            assert (await layer.receive(channel))["n"] == n


async def test_a_socket_joins_its_tables_group_and_its_users_in_one_round_trip(layer, monkeypatch):
    """Sitting down (and every heartbeat) joins both groups: a reconnect storm makes hundreds."""
    from types import SimpleNamespace

    from sessions.transport import group_name, user_group
    from sessions.consumers import _join_groups

    socket = SimpleNamespace(channel_name=await layer.new_channel(), campaign_id=7,
                             membership=SimpleNamespace(user_id=3))
    sent = round_trips(monkeypatch)
    await _join_groups(layer, [socket])
    assert len(sent) == 1, sent
    monkeypatch.undo()
    connection = layer.connection(0)
    for group in (group_name(7), user_group(3)):
        assert await connection.zrange(layer._group_key(group), 0, -1) == [socket.channel_name.encode()], group


def round_trips(monkeypatch) -> list:
    """Every Redis round trip from now on: a command, or a pipeline of them."""
    from redis.asyncio.client import Pipeline, Redis

    sent = []
    for cls, name in ((Redis, "execute_command"), (Pipeline, "execute")):
        real = getattr(cls, name)
        monkeypatch.setattr(cls, name, lambda self, *a, __real=real, **k: sent.append(a[:1]) or __real(self, *a, **k))
    return sent


async def test_a_doorbell_is_two_round_trips_and_is_read_as_channels_redis_wrote_it(layer, monkeypatch):
    """channels-redis sends a group message in four round trips; ours in two, one when everyone in the
    group heard it from memory, with the same cleanup, expiry and capacity, read by its receive."""
    from sessions.transport import group_name

    group, key = group_name(41), layer._group_key(group_name(41))
    other = ResilientRedisChannelLayer(**settings.CHANNEL_LAYERS["default"]["CONFIG"])  # another process's
    here, there = await layer.new_channel(), await other.new_channel()
    for channel in (here, there):
        await layer.group_add(group, channel)
    connection = layer.connection(0)
    await connection.zadd(key, {"specific.gone!x": 1})  # a member whose process died a day ago
    there_key = other.prefix + other.non_local_name(there)
    await connection.zadd(there_key, {b"a stale message": 1})  # older than the layer's expiry
    await connection.script_flush()  # a Redis that has not seen the script (or was restarted)
    await layer.group_send(group, {"type": "table.events", "n": 0}, exclude=frozenset({here}))  # loads it

    sent = round_trips(monkeypatch)
    await layer.group_send(group, {"type": "table.events", "n": 1}, exclude=frozenset({here}))
    assert len(sent) == 2, sent
    sent.clear()
    await layer.group_send(group, {"type": "table.events", "n": 2}, exclude=frozenset({here, there}))
    assert len(sent) == 1, sent  # no one left to ring
    monkeypatch.undo()

    assert await connection.zscore(key, "specific.gone!x") is None  # the group's expired member went
    assert await connection.zcard(there_key) == 2  # the stale message went, both doorbells came
    assert await connection.ttl(there_key) > 0
    async with asyncio.timeout(10):  # bounded: both are there already
        assert [(await other.receive(there))["n"] for _ in range(2)] == [0, 1]
    assert await connection.zcard(layer.prefix + layer.non_local_name(here)) == 0  # heard from memory
    await other.flush()


async def test_a_doorbell_to_a_full_channel_is_left_out(require_redis):
    """At capacity a channel misses the doorbell (and catches up from the log), as in channels-redis."""
    from sessions.transport import group_name

    config = {**settings.CHANNEL_LAYERS["default"]["CONFIG"], "capacity": 1}
    layer = ResilientRedisChannelLayer(**config)
    try:
        channel = await layer.new_channel()
        await layer.group_add(group_name(42), channel)
        for n in range(3):
            await layer.group_send(group_name(42), {"type": "table.events", "n": n})
        assert await layer.connection(0).zcard(layer.prefix + layer.non_local_name(channel)) == 1
        async with asyncio.timeout(10):
            assert (await layer.receive(channel))["n"] == 0
    finally:
        await layer.flush()


async def test_a_message_for_a_channel_whose_reader_is_gone_is_not_kept(layer):
    """channels-redis reads every message of the process's channels from one list and queues each for
    its channel; a queue no read will take (its socket closed) used to keep its messages for ever
    (channels_redis#384). A channel whose reader is gone keeps nothing; the others are untouched."""
    gone, here = await layer.new_channel(), await layer.new_channel()
    layer.reader_gone(gone)
    await layer.send(gone, {"type": "table.presence", "n": 0})
    await layer.send(here, {"type": "table.presence", "n": 1})
    async with asyncio.timeout(10):  # bounded: both are in Redis already, the first read before the second
        assert (await layer.receive(here))["n"] == 1
    assert gone not in layer.receive_buffer and here not in layer.receive_buffer


async def test_a_channel_read_again_after_its_reader_went_gets_its_messages(layer):
    channel = await layer.new_channel()
    layer.reader_gone(channel)
    read = asyncio.ensure_future(layer.receive(channel))
    await steps(STEPS)
    await layer.send(channel, {"type": "table.presence", "n": 2})
    async with asyncio.timeout(10):
        assert (await read)["n"] == 2


def test_channels_whose_reader_went_are_forgotten_after_a_while(monkeypatch):
    from sessions import layers

    now = [1000.0]
    monkeypatch.setattr(layers.time, "monotonic", lambda: now[0])
    buffer = layers.ReceiveBuffer(capacity=5, remember_s=60)
    buffer["a"].put_nowait({"n": 0})
    buffer.reader_gone("a")
    assert "a" not in buffer and list(buffer.gone) == ["a"]
    buffer["a"].put_nowait({"n": 1})  # dropped
    assert "a" not in buffer
    now[0] += 61
    buffer.reader_gone("b")
    assert list(buffer.gone) == ["b"]  # "a" is forgotten: no message can still come for it


@pytest.mark.django_db(transaction=True)
async def test_a_closed_table_socket_says_its_reader_is_gone(require_redis, transactional_table):
    from channels.layers import get_channel_layer

    from tests.sessions.test_table_consumer import connect, until_ready

    comm = await connect(transactional_table, transactional_table.alice)
    await until_ready(comm)
    buffer = get_channel_layer().receive_buffer
    before = set(buffer.gone)
    await comm.disconnect()
    assert len(set(buffer.gone) - before) == 1
