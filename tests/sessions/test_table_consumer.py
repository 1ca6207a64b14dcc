"""The live table socket: backlog then live events, exactly once, members only."""

from __future__ import annotations

import asyncio
import threading

import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from django.db import transaction

from campaign.asgi import application
from campaign.models import ApiToken
from rules import get_system
from tests.conftest import HANG

pytestmark = pytest.mark.django_db(transaction=True)


@database_sync_to_async
def token_for(user):
    return ApiToken.objects.create(user=user).key


@database_sync_to_async
def command(table, user, action, client_id=None):
    return table.command(user, action, client_id=client_id)


async def connect(table, user, after=0, origin=b"http://127.0.0.1:8000", slug="torn-road", token=None):
    # A browser sends its page's Origin and the server's Host; they must name the same origin.
    headers = [(b"origin", origin), (b"host", origin.split(b"://")[1])] if origin else []
    if user is not None or token is not None:
        key = token if token is not None else await token_for(user)
        headers.append((b"authorization", f"Bearer {key}".encode()))
    comm = WebsocketCommunicator(application, f"/ws/campaigns/{slug}/table/?after={after}", headers=headers)
    connected, _ = await comm.connect()
    assert connected
    return comm


async def connect_signed_in(user):
    """A socket opened by a page of a browser signed in as ``user`` (its session cookie);
    returns the socket and the browser's test client (to log out with, say)."""
    from django.test import Client

    client = Client()
    await database_sync_to_async(client.force_login)(user)
    cookie = f"sessionid={client.cookies['sessionid'].value}".encode()
    comm = WebsocketCommunicator(application, "/ws/campaigns/torn-road/table/",
                                 headers=[(b"origin", b"http://localhost"), (b"host", b"localhost"), (b"cookie", cookie)])
    assert (await comm.connect())[0]
    return comm, client


async def until_ready(comm):
    """Read frames up to ``ready``; return the events before it."""
    events = []
    while True:
        frame = await comm.receive_json_from(timeout=HANG)
        if frame["type"] == "ready":
            return events, frame
        assert frame["type"] == "event", frame
        events.append(frame["event"])


async def next_event(comm, timeout=HANG):
    while True:
        frame = await comm.receive_json_from(timeout=timeout)
        if frame["type"] == "event":
            return frame["event"]


async def receive(comm, timeout=HANG):
    """The next frame that is not presence (presence frames come and go as people connect)."""
    while True:
        frame = await comm.receive_json_from(timeout=timeout)
        if frame["type"] != "presence":
            return frame


async def head(table):
    return await database_sync_to_async(lambda: type(table.campaign).objects.get(pk=table.campaign.pk).last_seq)()


def presence_announced(monkeypatch) -> list:
    """Every presence announcement sent through the channel layer from now on (a spy on the layer)."""
    from channels.layers import get_channel_layer

    layer, sent = get_channel_layer(), []
    group_send = layer.group_send

    async def spy(group, message):
        if message.get("type") == "table.presence":
            sent.append(message)
        await group_send(group, message)

    monkeypatch.setattr(layer, "group_send", spy)
    return sent


async def handled(comm) -> None:
    """Wait until ``comm``'s consumer has handled every frame sent before (frames are handled in order)."""
    await comm.send_json_to({"type": "ping"})
    while (await comm.receive_json_from(timeout=HANG))["type"] != "pong":
        pass


async def log_head(table) -> dict:
    """The campaign's head as frames carry it: the seq and hash of its newest event."""
    def read():
        newest = table.campaign.events.order_by("-seq").first()
        return {"seq": newest.seq, "hash": newest.hash}
    return await database_sync_to_async(read)()


async def test_backlog_then_live_events_in_order(transactional_table):
    table = transactional_table
    await command(table, table.alice, {"type": "roll", "notation": "1d6"})
    comm = await connect(table, table.bob)
    backlog, ready = await until_ready(comm)
    assert [e["seq"] for e in backlog] == list(range(1, await head(table) + 1))
    assert ready["seq"] == backlog[-1]["seq"] and ready["you"]["role"] == "player"
    await command(table, table.alice, {"type": "roll", "notation": "2d6"})
    live = await next_event(comm)
    assert live["seq"] == ready["seq"] + 1 and live["type"] == "roll" and live["actor"] == "alice"
    await comm.disconnect()


async def test_reconnect_after_n_gets_exactly_the_rest(transactional_table):
    table = transactional_table
    for _ in range(5):
        await command(table, table.alice, {"type": "roll", "notation": "1d6"})
    total = await head(table)
    comm = await connect(table, table.bob, after=3)
    backlog, ready = await until_ready(comm)
    assert [e["seq"] for e in backlog] == list(range(4, total + 1))
    await comm.disconnect()


async def test_command_over_socket_is_acked_and_broadcast_once(transactional_table):
    table = transactional_table
    alice = await connect(table, table.alice)
    bob = await connect(table, table.bob)
    await until_ready(alice)
    _, ready = await until_ready(bob)
    await alice.send_json_to({"type": "command", "id": "s1", "action": {"type": "roll", "notation": "3d6"}})
    frames = [await receive(alice), await receive(alice)]
    ack = next(f for f in frames if f["type"] == "ack")
    event = next(f for f in frames if f["type"] == "event")["event"]
    assert ack["id"] == "s1" and ack["seq"] == event["seq"] == ready["seq"] + 1
    assert (await next_event(bob))["seq"] == event["seq"]
    # The same id again: the original, no second roll, no second broadcast.
    await alice.send_json_to({"type": "command", "id": "s1", "action": {"type": "roll", "notation": "3d6"}})
    again = await receive(alice)
    assert again["type"] == "ack" and again["seq"] == event["seq"] and again["replayed"]
    # Bob's next event is the next command's: the replay stored and broadcast nothing (no wait for absence).
    await alice.send_json_to({"type": "command", "id": "s2", "action": {"type": "roll", "notation": "1d6"}})
    following = next(f for f in [await receive(alice), await receive(alice)] if f["type"] == "ack")
    assert following["seq"] == event["seq"] + 1
    assert (await next_event(bob))["seq"] == following["seq"]
    await alice.disconnect()
    await bob.disconnect()


@pytest.mark.parametrize("frame, code", [
    ("not json", "bad_json"),
    ("[1]", "bad_frame"),
    ('{"type": "dance"}', "bad_frame"),
    ('{"type": "command", "id": "e1", "action": {"type": "roll", "notation": "1d0"}}', "bad_notation"),
    ('{"type": "command", "id": "e2", "action": {"type": "start_scene"}}', "forbidden"),
    ('{"type": "command", "id": "e3"}', "invalid"),
    ("x" * 70000, "too_large"),
])
async def test_bad_frames_get_error_frames_and_store_nothing(transactional_table, frame, code):
    table = transactional_table
    comm = await connect(table, table.alice)
    await until_ready(comm)
    before = await head(table)
    await comm.send_to(text_data=frame)
    reply = await receive(comm)
    assert reply["type"] == "error" and reply["code"] == code and reply["message"]
    assert await head(table) == before
    await comm.disconnect()


async def test_non_utf8_bytes_get_an_error_frame(transactional_table):
    table = transactional_table
    comm = await connect(table, table.alice)
    await until_ready(comm)
    await comm.send_to(bytes_data=b"\xff\xfe\x00")
    reply = await receive(comm)
    assert reply["code"] == "bad_json"
    await comm.disconnect()


async def test_outsider_is_refused_and_learns_nothing(transactional_table):
    table = transactional_table
    replies = []
    for slug in ("torn-road", "no-such-campaign"):
        comm = await connect(table, table.outsider, slug=slug)
        replies.append(await comm.receive_json_from(timeout=HANG))
        closed = await comm.receive_output(timeout=HANG)
        assert closed["type"] == "websocket.close" and closed["code"] == 4404
    assert replies[0] == replies[1]
    assert replies[0]["type"] == "error" and replies[0]["code"] == "not_found"


async def test_anonymous_and_bad_token_are_refused(transactional_table):
    table = transactional_table
    comm = await connect(table, None)
    assert (await comm.receive_json_from(timeout=HANG))["code"] == "unauthenticated"
    comm = await connect(table, None, token="forged")
    assert (await comm.receive_json_from(timeout=HANG))["code"] == "unauthenticated"


async def test_foreign_origin_is_refused(transactional_table):
    comm = WebsocketCommunicator(application, "/ws/campaigns/torn-road/table/",
                                 headers=[(b"origin", b"http://evil.example")])
    connected, _ = await comm.connect()
    assert not connected


async def test_session_cookie_login_works(transactional_table):
    comm, _ = await connect_signed_in(transactional_table.gm)
    _, ready = await until_ready(comm)
    assert ready["you"] == {"username": "gm", "role": "gm"}
    await comm.disconnect()


async def test_broadcast_waits_for_commit(transactional_table, doorbells):
    table = transactional_table
    comm = await connect(table, table.bob)
    await until_ready(comm)
    appended, looked = asyncio.Event(), threading.Event()
    # doorbells.rung: every doorbell, as it is sent (a spy: no waiting to see that none arrives)

    def append_and_wait(loop):
        with transaction.atomic():
            table.command(table.alice, {"type": "roll", "notation": "1d6"})
            loop.call_soon_threadsafe(appended.set)
            looked.wait(timeout=60)  # commit only once the test has listened for a doorbell

    task = asyncio.ensure_future(database_sync_to_async(append_and_wait)(asyncio.get_running_loop()))
    await appended.wait()
    try:
        assert doorbells.rung == []  # the command is stored, its transaction still open: no doorbell yet
    finally:
        looked.set()
    await task
    assert len(doorbells.rung) == 1
    assert (await next_event(comm))["type"] == "roll"
    await comm.disconnect()


async def test_a_lost_doorbell_is_recovered_from_the_log(transactional_table, settings, doorbells):
    """The channel layer drops a message: the next one (or a heartbeat) fills the gap."""
    table = transactional_table
    comm = await connect(table, table.bob)
    _, ready = await until_ready(comm)
    with doorbells.lost():
        await command(table, table.alice, {"type": "roll", "notation": "1d6"})
    await command(table, table.alice, {"type": "roll", "notation": "1d8"})
    got = [await next_event(comm), await next_event(comm)]
    assert [e["seq"] for e in got] == [ready["seq"] + 1, ready["seq"] + 2]
    await comm.disconnect()


async def test_heartbeat_carries_the_newest_seq_and_catches_up(transactional_table, settings, doorbells):
    settings.TABLE_HEARTBEAT_SECONDS = 0.2
    table = transactional_table
    comm = await connect(table, table.bob)
    _, ready = await until_ready(comm)
    with doorbells.lost():
        await command(table, table.alice, {"type": "roll", "notation": "1d6"})
    event = await next_event(comm)  # delivered by the heartbeat's check
    assert event["seq"] == ready["seq"] + 1
    frame = await receive(comm)
    assert frame == {"type": "heartbeat", "seq": event["seq"], "head": {"seq": event["seq"], "hash": event["hash"]}}
    await comm.disconnect()


async def test_presence_shows_who_is_at_the_table(transactional_table):
    table = transactional_table
    gm = await connect(table, table.gm)
    await until_ready(gm)
    assert (await gm.receive_json_from(timeout=HANG))["members"] == [{"username": "gm", "role": "gm", "head": None}]
    alice = await connect(table, table.alice)
    await until_ready(alice)
    frame = await gm.receive_json_from(timeout=HANG)
    assert frame["type"] == "presence"
    assert [m["username"] for m in frame["members"]] == ["alice", "gm"]
    await alice.disconnect()
    frame = await gm.receive_json_from(timeout=HANG)
    assert [m["username"] for m in frame["members"]] == ["gm"]
    await gm.disconnect()


async def test_socket_rate_limit_sends_an_error_frame(transactional_table, settings):
    settings.RATE_LIMIT_SOCKET_PER_10S = 3
    table = transactional_table
    comm = await connect(table, table.alice)
    await until_ready(comm)
    for i in range(4):
        await comm.send_json_to({"type": "ping"})
    frames = [await receive(comm) for _ in range(4)]
    assert [f["type"] for f in frames] == ["pong", "pong", "pong", "error"]
    assert frames[-1]["code"] == "rate_limited"
    await comm.disconnect()


async def test_ready_ack_and_pong_carry_the_logs_head(transactional_table):
    table = transactional_table
    comm = await connect(table, table.alice)
    backlog, ready = await until_ready(comm)
    assert ready["head"] == await log_head(table) == {"seq": backlog[-1]["seq"], "hash": backlog[-1]["hash"]}
    await comm.send_json_to({"type": "command", "id": "h1", "action": {"type": "roll", "notation": "1d6"}})
    frames = [await receive(comm), await receive(comm)]
    ack = next(f for f in frames if f["type"] == "ack")
    event = next(f for f in frames if f["type"] == "event")["event"]
    assert ack["head"] == {"seq": event["seq"], "hash": event["hash"]} == await log_head(table)
    await comm.send_json_to({"type": "ping"})
    pong = await receive(comm)
    assert pong["type"] == "pong" and pong["head"] == await log_head(table)
    await comm.disconnect()


async def gm_then_alice(table):
    """The GM's socket, then Alice's, each ready, with the presence frames of both arrivals read off
    the GM's; Alice's backlog too."""
    gm = await connect(table, table.gm)
    await until_ready(gm)
    await gm.receive_json_from(timeout=HANG)  # presence: the GM alone
    alice = await connect(table, table.alice)
    backlog, _ = await until_ready(alice)
    await gm.receive_json_from(timeout=HANG)  # presence: alice arrived, no head reported yet
    return gm, alice, backlog


async def test_a_reported_head_reaches_everyones_presence(transactional_table, monkeypatch):
    table = transactional_table
    gm, alice, backlog = await gm_then_alice(table)
    reported = {"seq": backlog[-1]["seq"], "hash": backlog[-1]["hash"]}
    await alice.send_json_to({"type": "head", "head": reported})
    frame = await gm.receive_json_from(timeout=HANG)
    assert frame["type"] == "presence"
    assert {m["username"]: m["head"] for m in frame["members"]} == {"alice": reported, "gm": None}
    # The same head again changes nothing, so nobody is told again.
    announced = presence_announced(monkeypatch)
    await alice.send_json_to({"type": "head", "head": reported})
    await handled(alice)
    assert announced == []
    await alice.disconnect()
    await gm.disconnect()


@pytest.mark.parametrize("head", [
    None, 5, {"seq": 1}, {"seq": "1", "hash": "0" * 64}, {"seq": True, "hash": "0" * 64}, {"seq": -1, "hash": "0" * 64},
    {"seq": 1, "hash": "A" * 64}, {"seq": 1, "hash": "0" * 63}, {"seq": 10**18, "hash": "0" * 64},
])
async def test_a_malformed_head_is_refused_and_not_relayed(transactional_table, monkeypatch, head):
    table = transactional_table
    gm = await connect(table, table.gm)
    await until_ready(gm)
    await gm.receive_json_from(timeout=HANG)
    announced = presence_announced(monkeypatch)
    await gm.send_json_to({"type": "head", "head": head})
    frame = await gm.receive_json_from(timeout=HANG)
    assert frame["type"] == "error" and frame["code"] == "bad_frame"
    await handled(gm)
    assert announced == []
    await gm.disconnect()


async def test_a_false_head_is_refused_to_its_sender_and_never_reaches_the_others(transactional_table, monkeypatch):
    """Any member could send a head this log does not have and set off every other member's "another
    member is shown a different log" warning. The server checks it against the log first."""
    table = transactional_table
    gm, alice, backlog = await gm_then_alice(table)
    announced = presence_announced(monkeypatch)
    newest = backlog[-1]
    for false in ({"seq": newest["seq"], "hash": "d" * 64},  # the head's seq, another hash
                  {"seq": 1, "hash": newest["hash"]},  # an older seq with a hash it does not have
                  {"seq": newest["seq"] + 1, "hash": "d" * 64}):  # beyond the log
        await alice.send_json_to({"type": "head", "head": false})
        frame = await receive(alice)
        assert frame["type"] == "error" and frame["code"] == "false_head", frame
        assert frame["id"] is None and f"#{false['seq']}" in frame["message"]
    await handled(alice)
    assert announced == []  # nobody was told
    # A true head still goes round, the newest and an older one (read from the log) alike.
    for true in ({"seq": 1, "hash": backlog[0]["hash"]}, {"seq": newest["seq"], "hash": newest["hash"]}):
        await alice.send_json_to({"type": "head", "head": true})
        frame = await gm.receive_json_from(timeout=HANG)
        assert frame["type"] == "presence" and {m["username"]: m["head"] for m in frame["members"]} == {
            "alice": true, "gm": None}
    await alice.disconnect()
    await gm.disconnect()


async def test_a_reported_head_the_socket_gave_its_client_is_passed_on_without_reading_the_log(
        transactional_table, monkeypatch):
    """The table reports the head it has just verified, so the check costs no database trip then."""
    from sessions import consumers

    table = transactional_table
    reads, stored_hash = [], consumers.stored_hash
    monkeypatch.setattr(consumers, "stored_hash", lambda *a: (reads.append(a), stored_hash(*a))[1])
    alice = await connect(table, table.alice)
    backlog, ready = await until_ready(alice)
    await alice.send_json_to({"type": "head", "head": ready["head"]})  # the head `ready` stated
    await handled(alice)
    await alice.send_json_to({"type": "command", "id": "h2", "action": {"type": "roll", "notation": "1d6"}})
    event = await next_event(alice)
    await alice.send_json_to({"type": "head", "head": {"seq": event["seq"], "hash": event["hash"]}})  # the last sent
    await handled(alice)
    assert reads == []
    await alice.send_json_to({"type": "head", "head": {"seq": 1, "hash": backlog[0]["hash"]}})  # an older one
    await handled(alice)
    assert reads == [(table.campaign.id, 1)]
    await alice.disconnect()


async def test_doorbells_that_ring_out_of_order_are_sent_in_order_without_reading_the_log(
        transactional_table, monkeypatch, doorbells):
    """Two commits of one table on two threads (or processes) may ring in the opposite order. The
    socket keeps the early doorbell until the one before it rings, then sends both in order, each
    with its sheets: no read of the log, so no frame without sheets and no sheet fetch in the page."""
    from sessions import consumers

    table = transactional_table
    monkeypatch.setattr(consumers, "GAP_WAIT", 3600)  # only the late doorbell can fill the gap in time
    hero = await database_sync_to_async(lambda: table.create_character(table.alice, "Hero", get_system("tote").example_sheet).id)()
    comm = await connect(table, table.bob)
    _, ready = await until_ready(comm)
    reads = []
    backlog = consumers._backlog
    monkeypatch.setattr(consumers, "_backlog", lambda *a: (reads.append(a), backlog(*a))[1])
    with doorbells.held() as held:
        for notation in ("1d6", "1d8"):
            await database_sync_to_async(table.command)(table.alice, {"type": "roll", "notation": notation,
                                                                      "character": hero})
    assert [data[-1]["seq"] for _, data, _ in held] == [ready["seq"] + 1, ready["seq"] + 2]
    for args in reversed(held):  # the second commit rings first
        await database_sync_to_async(doorbells.ring)(*args)
    frames = [await receive(comm), await receive(comm)]
    assert [f["event"]["seq"] for f in frames] == [ready["seq"] + 1, ready["seq"] + 2]
    assert all(f["sheets"] and f["sheets"][0]["character"] == hero for f in frames)
    assert reads == []
    await comm.disconnect()


async def test_a_doorbell_that_never_comes_is_read_from_the_log_with_the_sheets(transactional_table, monkeypatch,
                                                                                 doorbells):
    """The doorbell before an early one is lost: after GAP_WAIT the socket reads the log, and the
    page it sends carries the sheets (so the browser fetches nothing)."""
    from sessions import consumers

    table = transactional_table
    monkeypatch.setattr(consumers, "GAP_WAIT", 0)
    hero = await database_sync_to_async(lambda: table.create_character(table.alice, "Hero", get_system("tote").example_sheet).id)()
    comm = await connect(table, table.bob)
    _, ready = await until_ready(comm)
    with doorbells.lost():
        await database_sync_to_async(table.command)(table.alice, {"type": "roll", "notation": "1d6", "character": hero})
    await database_sync_to_async(table.command)(table.alice, {"type": "roll", "notation": "1d8", "character": hero})
    frames = [await receive(comm), await receive(comm)]
    assert [f["event"]["seq"] for f in frames] == [ready["seq"] + 1, ready["seq"] + 2]
    assert frames[0]["sheets"] == [] and [s["character"] for s in frames[1]["sheets"]] == [hero]
    await comm.disconnect()


async def test_a_doorbell_costs_no_hop_to_the_synchronous_thread(transactional_table, monkeypatch):
    """Channels closes stale database connections before every handler, on the one synchronous
    thread; this consumer keeps no connection (sessions/db.py), so its doorbells skip that hop."""
    import channels.consumer

    table = transactional_table
    comm = await connect(table, table.bob)
    _, ready = await until_ready(comm)
    hops = []

    async def counted():
        hops.append(1)

    monkeypatch.setattr(channels.consumer, "aclose_old_connections", counted)
    for notation in ("1d6", "1d8"):
        await command(table, table.alice, {"type": "roll", "notation": notation})
    assert [(await next_event(comm))["seq"] for _ in range(2)] == [ready["seq"] + 1, ready["seq"] + 2]
    await handled(comm)
    assert hops == []
    await comm.disconnect()


async def test_the_sockets_of_a_table_share_one_heartbeat_per_process(transactional_table, settings, monkeypatch):
    """A table's sockets in one process beat together: one head read, one presence refresh and one
    group refresh for all of them (sessions/consumers.py ``_beat``), and each hears the heartbeat."""
    from sessions import consumers, presence

    settings.TABLE_HEARTBEAT_SECONDS = 0.2
    table = transactional_table
    sockets = []
    for user in (table.gm, table.alice, table.bob):
        sockets.append(await connect(table, user))
        await until_ready(sockets[-1])
    store, refreshed, calls = presence.store(), asyncio.Event(), []
    real = store.still_here_many

    # A beat that took its list of sockets before the third sat down refreshes two: the first beat
    # that started with all three at the table refreshes them in one call.
    async def spy(campaign_id, entries):
        calls.append(sorted(channel for channel, *_ in entries))
        if len(calls[-1]) == len(sockets):
            refreshed.set()
        await real(campaign_id, entries)

    monkeypatch.setattr(store, "still_here_many", spy)
    await asyncio.wait_for(refreshed.wait(), HANG)
    beats = [state for (_, campaign), state in consumers._beats.items() if campaign == table.campaign.id]
    assert len(beats) == 1 and len(beats[0]["sockets"]) == 3
    everyone = sorted(s.channel_name for s in beats[0]["sockets"])
    assert everyone in calls and all(set(call) <= set(everyone) for call in calls)
    for comm in sockets:
        while (await comm.receive_json_from(timeout=HANG))["type"] != "heartbeat":
            pass
        await comm.disconnect()
    assert not [k for k in consumers._beats if k[1] == table.campaign.id]


def test_the_in_memory_doorbell_rings_only_for_sockets_of_this_process(table, settings, monkeypatch):
    """Without a socket of this process in the group there is no one to ring for: no loop and no
    thread per command (async_to_sync from a thread without a loop starts both)."""
    from asgiref.sync import async_to_sync
    from channels.layers import channel_layers, get_channel_layer

    from sessions import transport

    settings.CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}
    channel_layers.backends.clear()
    rung = []
    monkeypatch.setattr(transport, "async_to_sync", lambda send: lambda layer, channels, message: rung.append(channels))
    table.command(table.alice, {"type": "roll", "notation": "1d6"})
    assert rung == []
    async_to_sync(get_channel_layer().group_add)(transport.group_name(table.campaign.id), "a-socket")
    table.command(table.alice, {"type": "roll", "notation": "1d6"})
    assert rung == [["a-socket"]]
