"""Roll visibility for every role: live on the socket, in the backlog, and in the events API.

public: everyone sees the dice. gm: only the GM. secret: the roller and the GM.
A reveal makes a hidden roll public for everyone from then on.
"""

from __future__ import annotations

import json

import pytest
from django.test import Client

from tests.conftest import HANG
from tests.sessions.test_table_consumer import command, connect, next_event, until_ready

pytestmark = pytest.mark.django_db(transaction=True)

VIEWERS = ["gm", "alice", "bob", "watcher"]
SEES = {
    # (roller, visibility) -> who sees the dice
    ("alice", "public"): {"gm", "alice", "bob", "watcher"},
    ("alice", "secret"): {"gm", "alice"},
    ("alice", "gm"): {"gm"},
    ("gm", "secret"): {"gm"},
    ("gm", "gm"): {"gm"},
}
MARK = "7d13"  # a notation nobody else rolls, so its presence in any text is a leak
QUOTED = json.dumps(MARK)  # as a whole JSON string: hex hashes and nonces may contain "7d13" by chance
SEALED_KEYS = {"seq", "format", "actor", "actor_id", "session", "scene", "visibility", "created_at", "prev_hash",
               "hash", "hidden", "type", "version", "character", "character_name", "body_digest", "payload"}


def leaks(frame_or_event) -> bool:
    return QUOTED in json.dumps(frame_or_event)


@pytest.mark.parametrize("roller, visibility", sorted(SEES))
async def test_live_and_backlog_show_dice_only_to_who_may_see_them(transactional_table, roller, visibility):
    table = transactional_table
    sockets = {}
    for name in VIEWERS:
        sockets[name] = await connect(table, getattr(table, name))
        await until_ready(sockets[name])
    result = await command(table, getattr(table, roller), {"type": "roll", "notation": MARK, "visibility": visibility})
    seq = result.events[0].seq
    for name, comm in sockets.items():
        event = await next_event(comm)
        assert event["seq"] == seq and event["actor"] == roller
        if name in SEES[(roller, visibility)]:
            assert event["type"] == "roll" and event["payload"]["notation"] == MARK and not event.get("hidden")
        else:
            assert event.get("hidden") is True and not leaks(event), f"{name} saw hidden dice"
            # The one sealed shape (docs/fair-dice.md): the body digest is the commitment, nothing else.
            assert event["type"] == "sealed" and event["character"] is None
            assert event["payload"] == {"hidden": True, "commitment": event["body_digest"]}
            assert set(event) == SEALED_KEYS
        await comm.disconnect()
    # The same from the backlog after a reconnect.
    for name in VIEWERS:
        comm = await connect(table, getattr(table, name), after=seq - 1)
        backlog, _ = await until_ready(comm)
        assert [e["seq"] for e in backlog] == [seq]
        assert (not leaks(backlog[0])) == (name not in SEES[(roller, visibility)])
        await comm.disconnect()


@pytest.mark.parametrize("roller, visibility", sorted(SEES))
def test_events_api_honours_visibility(transactional_table, roller, visibility):
    table = transactional_table
    table.command(getattr(table, roller), {"type": "roll", "notation": MARK, "visibility": visibility})
    for name in VIEWERS:
        client = Client()
        client.force_login(getattr(table, name))
        body = client.get("/api/campaigns/torn-road/events?after=0&limit=500").content.decode()
        assert (QUOTED in body) == (name in SEES[(roller, visibility)]), name


def test_command_response_honours_visibility_for_the_roller(transactional_table):
    """A GM-only roll: the player who rolled gets an ack, not the dice."""
    table = transactional_table
    client = Client()
    client.force_login(table.alice)
    res = client.post("/api/campaigns/torn-road/commands", content_type="application/json",
                      data=json.dumps({"id": "g1", "action": {"type": "roll", "notation": MARK, "visibility": "gm"}}))
    assert res.status_code == 201 and QUOTED not in res.content.decode()


async def test_reveal_makes_a_hidden_roll_public(transactional_table):
    table = transactional_table
    hidden = await command(table, table.alice, {"type": "roll", "notation": MARK, "visibility": "gm"})
    seq = hidden.events[0].seq
    bob = await connect(table, table.bob, after=seq)
    await until_ready(bob)
    await command(table, table.gm, {"type": "reveal", "seq": seq})
    revealed = await next_event(bob)
    assert revealed["type"] == "roll_revealed" and revealed["payload"]["seq"] == seq
    assert revealed["payload"]["body"]["payload"]["notation"] == MARK
    await bob.disconnect()
    again = await connect(table, table.bob, after=seq - 1)
    backlog, _ = await until_ready(again)
    assert backlog[0]["payload"]["notation"] == MARK  # the original now shows its dice too
    await again.disconnect()


@pytest.mark.parametrize("who", ["alice", "bob", "watcher"])
async def test_only_the_gm_reveals(transactional_table, who):
    from campaign.actions import Forbidden

    table = transactional_table
    hidden = await command(table, table.alice, {"type": "roll", "notation": MARK, "visibility": "secret"})
    with pytest.raises(Forbidden):
        await command(table, getattr(table, who), {"type": "reveal", "seq": hidden.events[0].seq})


async def test_spectator_reads_but_cannot_act(transactional_table):
    table = transactional_table
    comm = await connect(table, table.watcher)
    await until_ready(comm)
    await comm.send_json_to({"type": "command", "id": "w1", "action": {"type": "roll", "notation": "1d6"}})
    while True:
        frame = await comm.receive_json_from(timeout=HANG)
        if frame["type"] == "error":
            break
    assert frame["code"] == "forbidden"
    await comm.disconnect()
