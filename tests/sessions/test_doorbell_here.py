"""A doorbell rung in the process that committed reaches that process's sockets from memory
(sessions.transport.sit_down_here) and every other process's through the channel layer, which
leaves this process's sockets out (sessions.layers: ``group_send(..., exclude=...)``)."""

from __future__ import annotations

import asyncio

import pytest

from tests.conftest import HANG
from tests.sessions.test_table_consumer import command, connect, next_event, until_ready

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def doorbells_wait_for_redis(monkeypatch):
    """This process's doorbells go through Redis however slowly a loaded machine sends them.

    In play a doorbell that waited ``STALE_AFTER`` (3 s) in the process's queue is dropped unsent,
    and one Redis has not taken within ``LAYER_TIMEOUT`` (2 s) is given up: the sockets catch up
    from the log at their next heartbeat (those drops have tests of their own,
    tests/sessions/test_transport.py). The channels these tests listen on have no heartbeat: a
    doorbell dropped on a loaded machine left them waiting for a message that never came. Here
    the sender's clock stands still and Redis has ``HANG`` to answer."""
    from sessions import layers, transport

    monkeypatch.setattr(transport._Sender, "clock", staticmethod(lambda: 0.0))
    monkeypatch.setattr(transport._Sender, "SEND_TIMEOUT", HANG)
    monkeypatch.setattr(layers, "LAYER_TIMEOUT", HANG)


def sends_of_the_doorbell(monkeypatch) -> list[list[str]]:
    """The channels each Redis send of a ``table.events`` message names (a spy under the exclusion)."""
    from channels_redis.core import RedisChannelLayer

    sent, real = [], RedisChannelLayer._map_channel_keys_to_connection

    def spy(self, channel_names, message):
        if message.get("type") == "table.events":
            sent.append(sorted(channel_names))
        return real(self, channel_names, message)

    monkeypatch.setattr(RedisChannelLayer, "_map_channel_keys_to_connection", spy)
    return sent


async def doorbells_sent() -> None:
    """Wait until this process's sender has sent every doorbell handed to it so far: the campaign's
    own, rung as the fixture set it up. Sent once a test's socket or channel had joined the group,
    they reached it before the roll's doorbell (seq 1 where the test waited for its roll's)."""
    from sessions import transport

    sender = transport._Sender.get()

    async def drained():
        # Handed over before this coroutine was, so each drain it started is in ``draining`` by now.
        while sender.draining:
            await asyncio.gather(*list(sender.draining), return_exceptions=True)

    await asyncio.wait_for(asyncio.wrap_future(asyncio.run_coroutine_threadsafe(drained(), sender.loop)), HANG)


async def doorbell(layer, channel) -> dict:
    """The next ``table.events`` message on ``channel`` (presence announcements come and go)."""
    async with asyncio.timeout(HANG):  # a bound on a hang: the message comes, or the test fails
        while (message := await layer.receive(channel))["type"] != "table.events":
            pass
    return message


@pytest.mark.redis
async def test_the_doorbell_reaches_this_process_from_memory_and_another_through_redis(
        transactional_table, require_redis, doorbells_wait_for_redis, monkeypatch):
    from channels.layers import channel_layers

    from sessions.transport import group_name

    table = transactional_table
    await doorbells_sent()
    comm = await connect(table, table.bob)
    _, ready = await until_ready(comm)
    other = channel_layers.make_backend("default")  # another server process's layer, on the same Redis
    elsewhere = await other.new_channel()
    await other.group_add(group_name(table.campaign.id), elsewhere)
    sent = sends_of_the_doorbell(monkeypatch)
    stored = await command(table, table.alice, {"type": "roll", "notation": "1d6"})
    here = await next_event(comm)
    there = await doorbell(other, elsewhere)
    assert here["seq"] == stored.events[0].seq == ready["seq"] + 1
    assert [e["seq"] for e in there["events"]] == [here["seq"]]
    assert sent == [[elsewhere]]  # bob's socket is not in Redis's send: it heard the doorbell from memory
    await comm.disconnect()
    await other.flush()


@pytest.mark.redis
async def test_a_socket_that_left_is_rung_through_redis_again(transactional_table, require_redis,
                                                              doorbells_wait_for_redis):
    """Standing up takes a socket out of the process's list: a doorbell after that leaves nobody out."""
    from channels.layers import get_channel_layer

    from sessions import transport

    table = transactional_table
    await doorbells_sent()
    comm = await connect(table, table.bob)
    await until_ready(comm)
    channel = next(iter(transport._here[transport.group_name(table.campaign.id)]))
    await comm.disconnect()
    assert all(channel not in sockets for sockets in transport._here.values())
    layer = get_channel_layer()
    await layer.group_add(transport.group_name(table.campaign.id), channel)  # as if its discard had failed
    stored = await command(table, table.alice, {"type": "roll", "notation": "1d6"})
    message = await doorbell(layer, channel)  # through Redis: nobody here is listening for it any more
    assert [e["seq"] for e in message["events"]] == [stored.events[0].seq]


async def test_the_in_memory_layer_leaves_out_the_sockets_that_heard_it_here(transactional_table, settings,
                                                                             monkeypatch):
    """One process, no Redis (``make run``): its sockets hear each doorbell once, from memory."""
    from channels.layers import channel_layers, get_channel_layer

    settings.CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}
    channel_layers.backends.clear()
    layer = get_channel_layer()
    sent = []
    send = layer.send
    monkeypatch.setattr(layer, "send", lambda channel, message: (
        message["type"] == "table.events" and sent.append(channel), send(channel, message))[1])
    table = transactional_table
    comm = await connect(table, table.bob)
    _, ready = await until_ready(comm)
    await command(table, table.alice, {"type": "roll", "notation": "1d6"})
    assert (await next_event(comm))["seq"] == ready["seq"] + 1
    assert sent == []
    await comm.disconnect()


async def test_a_socket_whose_application_is_cancelled_leaves_the_list(transactional_table):
    """daphne cancels an application that outlives its client, and disconnect() never runs."""
    from sessions import transport

    table = transactional_table
    comm = await connect(table, table.bob)
    await until_ready(comm)
    channel = next(iter(transport._here[transport.group_name(table.campaign.id)]))
    comm.future.cancel()
    with pytest.raises(asyncio.CancelledError):
        await comm.future
    assert all(channel not in sockets for sockets in transport._here.values())


async def test_a_revoke_reaches_the_socket_before_the_events_committed_after_it(transactional_table):
    """A GM made a player, then a GM-only roll: the socket, opened as a GM, closes without it."""
    table = transactional_table
    await command(table, table.gm, {"type": "change_role", "username": "bob", "role": "gm"})
    comm = await connect(table, table.bob)
    await until_ready(comm)
    await command(table, table.gm, {"type": "change_role", "username": "bob", "role": "player"})
    await command(table, table.gm, {"type": "roll", "notation": "1d6", "visibility": "gm"})
    while True:
        frame = await comm.receive_output(timeout=HANG)
        if frame["type"] == "websocket.close":
            assert frame["code"] == 4403
            break
        assert '"type": "event"' not in frame.get("text", ""), frame  # nothing after the revoke
