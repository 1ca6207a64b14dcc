"""The Redis channel layer: a cancelled read always ends, and takes nothing with it.

A consumer's channel-layer read is cancelled when its socket closes. On Python 3.11, redis-py's
``asyncio.wait_for`` around each command write returned the write's result instead of raising
when the cancel arrived during the write (CPython gh-86296), and channels-redis then re-sent
BZPOPMIN every 5 s for ever. It showed up after the socket fuzzer's refused connect, whose read
is cancelled a few loop steps after it starts, once per full run (campaign/layers.py).

Each test cancels at every loop step of the operation's start, so the race is not left to
timing: a step count either lands inside a write or it does not, the same way every run.
"""

import asyncio

import pytest
from django.conf import settings

from campaign.layers import ResilientRedisChannelLayer

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

    from redis.asyncio.client import Pipeline, Redis

    from campaign.broadcast import group_name, user_group
    from sessions.consumers import _join_groups

    socket = SimpleNamespace(channel_name=await layer.new_channel(), campaign_id=7,
                             membership=SimpleNamespace(user_id=3))
    sent = []
    for cls, name in ((Redis, "execute_command"), (Pipeline, "execute")):
        real = getattr(cls, name)
        monkeypatch.setattr(cls, name, lambda self, *a, __real=real, **k: sent.append(a[:1]) or __real(self, *a, **k))
    await _join_groups(layer, [socket])
    assert len(sent) == 1, sent
    monkeypatch.undo()
    connection = layer.connection(0)
    for group in (group_name(7), user_group(3)):
        assert await connection.zrange(layer._group_key(group), 0, -1) == [socket.channel_name.encode()], group
