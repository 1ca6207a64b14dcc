"""Two worlds, witnessed: what a member may not read never reaches her through a witnessed roll.

The worlds of tests/campaign/test_two_worlds.py, with ``witnessed_rolls`` on ("gm" or "everyone") and
every member's table online, each witnessing every roll that lists her (as witnessing.js does): a
command that waits for witnesses appends a ``roll_pending`` (and, sealed, a public ``witness_call``),
the witnesses' ``roll_committed``, the public ``commitments_closed``, their ``roll_witnessed`` and then
the decision. The two worlds differ only in what the GM
keeps hidden: the dice of hidden commands and an NPC hidden from the players (its name, its numbers
and its random id). Alice, Bob and the spectator must receive exactly the same, both through every
HTTP read (command answers, the events API, sheets, exports, statistics) and on the live socket
(every event frame, with the sheets it carries).

The pending step is read by exactly its decision's readers (campaign/actions/commands.py
``command_readers``): a GM's check against the hidden NPC that her earlier hidden change makes GM-only
must not publish, in its pending event, the action naming the NPC. And whether a command that reads
what some member may not see draws a die (so waits) is not theirs to learn: a player's Resolve on top
of her own GM-only hide waits whether or not the hidden dice started the contest it rolls in.
"""

from __future__ import annotations

import base64
import hashlib
import json

import pytest
from channels.db import database_sync_to_async
from django.contrib.auth import get_user_model

from campaign.actions import ActionError, do_command
from campaign.actions import witnesses as witnessing
from campaign.eventlog import serialize_event
from campaign.models import Campaign, Character, Event
from campaign.pipeline import error_json, http_status
from campaign.visibility import Viewer, for_viewer
from rules.witness import CALL, COMMIT, CONTRIBUTE, PENDING, commitment
from tests.campaign.test_two_worlds import OBSERVERS, World, pad
from tests.conftest import HANG
from tests.sessions.test_table_consumer import connect, until_ready
from tests.signing import signed

# Does not depend on the database engine (tests/campaign/test_two_worlds.py keeps the visibility queries'
# check on SQLite): the SQLite pass leaves it out.
pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.one_database, pytest.mark.spread]

FOE = "FOE"  # in an action: the hidden NPC's id in each world

# (who, action, visibility, this world's dice, the other world's): the steps of each evening. The
# first world's hidden NPC is ``NPCS[0]``, the second's ``NPCS[1]``.
NPCS = ({"name": "Lich", "rating": 4}, {"name": "Shade", "rating": 2})
EVENINGS = {
    # The GM's hidden change of Alice's hero makes the GM's check against the hidden NPC hers alone:
    # its pending event named the NPC to the whole table.
    "wyrm: the GM's check against a hidden NPC, GM-only": ("wyrm", [
        ("gm", {"type": "grant_fate", "amount": 1}, "gm", [], []),
        ("gm", {"type": "check", "attribute": "rogue", "vs_character": FOE, "vs_attribute": "mage"},
         "public", pad([3, 4]), pad([3, 4])),
        # Alice's check on top of her own secret one is hers and the GM's: so is its pending event.
        ("alice", {"type": "check", "attribute": "rogue", "skills": ["Stealth"], "dl": 12}, "secret",
         pad([2, 5]), pad([2, 5])),
        ("alice", {"type": "check", "attribute": "warrior", "dl": 9}, "public", pad([6, 1]), pad([6, 1])),
        # The GM's hidden check and a reroll of it: hidden dice.
        ("gm", {"type": "check", "attribute": "mage", "dl": 12}, "gm", pad([6, 6, 2]), pad([1, 1, 1])),
        ("alice", {"type": "spend_fate", "use": "reroll"}, "public", pad([4, 4]), pad([4, 4])),
    ]),
    # Whether Alice's round draws dice depends on her GM-only hide's dice (a hidden contest starts only
    # when it succeeds): it waits either way.
    "tale: a round after a GM-only hide": ("tale", [
        ("alice", {"type": "hide", "place": "open_space", "seeker_pool": 2}, "gm",
         pad([6] * 8 + [1] * 8), pad([1] * 8 + [6] * 8)),
        ("alice", {"type": "iterated_round"}, "public", pad([3] * 10), pad([3] * 10)),
        ("alice", {"type": "straight_roll", "target": 12}, "public", pad([4] * 4), pad([4] * 4)),
        ("gm", {"type": "straight_roll", "target": 10}, "gm", pad([2] * 4), pad([5] * 4)),
    ]),
    # A player's Resolve on top of the GM's hidden test, and the GM's secret test.
    "tote: Resolve on top of a GM-only test": ("tote", [
        ("gm", {"type": "skill_test", "skill": "Persuade", "target": 8}, "gm", pad([5, 2, 5]), pad([2, 2, 2])),
        ("alice", {"type": "spend_resolve", "totem": "Bear"}, "public", pad([]), pad([])),
        ("gm", {"type": "skill_test", "skill": "Persuade", "target": 8}, "secret", pad([6, 6, 6]), pad([1, 1, 1])),
        ("alice", {"type": "skill_test", "skill": "Strike", "target": 9}, "public", pad([4, 4, 4]), pad([4, 4, 4])),
    ]),
}


def entropy(tag: str) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(tag.encode()).digest()).rstrip(b"=").decode()


class WitnessedWorld(World):
    """A world whose commands use the server's own dice (scripted by ``TEST_DICE_FILE``), so witnessed
    ones wait; its hidden NPC is made before the session starts."""

    def __init__(self, system: str, people: dict, mode: str, npc: dict, dice_file):
        self.mode, self.npc_spec, self.dice_file, self.npc = mode, npc, dice_file, None
        super().__init__(system, people)

    def run(self, who: str, action: dict, faces=()) -> None:
        if action["type"] == "start_session" and self.npc is None:
            self.send(who, {"type": "configure_campaign", "settings": {"witnessed_rolls": self.mode}})
            self.send(who, {"type": "create_character", "npc": True, "shown": "hidden", "name": self.npc_spec["name"],
                            "quick": {"rating": self.npc_spec["rating"]}})
            self.npc = Character.objects.get(campaign__slug=self.slug, npc=True).id
        self.send(who, action, faces)

    def send(self, who: str, action: dict, faces=()) -> None:
        """As served.send, but with the server's dice (``faces``, or what is left of the last command's
        when None: a contribution draws none); then every witness's table contributes."""
        if faces is not None:
            self.dice_file.write_text(json.dumps({"faces": list(faces)}))
        member = self.members[who]
        member.campaign.refresh_from_db()
        if action.get("vs_character") == FOE:
            action = {**action, "vs_character": self.npc}
        body = signed(member.campaign, who, {"id": f"c{next(self.commands)}", "action": action})
        try:
            result = do_command(member, body)
        except ActionError as e:
            answer = (http_status(e), error_json(e))
        else:
            events = [for_viewer(serialize_event(e), Viewer.of(member)) for e in result.events]
            answer = (201, {**events[0], "events": events})
            # A witness's table answers the pending event, or the call of one sealed from her.
            called = {e.payload["command_of"] if e.type == CALL else e.seq: e.payload["witnesses"]
                      for e in result.events if e.type in (PENDING, CALL) and "witnesses" in e.payload}
            for roll, witnesses in called.items():
                self.witness(roll, witnesses)
        if who in OBSERVERS:
            self.seen[who].append(("answer", *answer))

    def witness(self, roll: int, witnesses: list[int]) -> None:
        """Every witness's table commits (the last one's closes the roll), then reveals."""
        names = {m.user_id: name for name, m in self.members.items()}
        for user_id in witnesses:
            self.send(names[user_id], {"type": COMMIT, "roll": roll,
                                       "commitment": commitment(roll, user_id, entropy(names[user_id]))}, None)
        for user_id in witnesses:
            self.send(names[user_id], {"type": CONTRIBUTE, "roll": roll, "entropy": entropy(names[user_id])}, None)

    def play(self, who: str, action: dict, visibility: str, faces) -> None:
        self.run(who, {**action, "character": self.hero, "visibility": visibility}, faces)

    def character(self, value):
        return "FOE" if str(value) == str(self.npc) else super().character(value)


@pytest.fixture
def people(transactional_db):
    User = get_user_model()
    return {name: User.objects.create_user(name, password=f"pw-{name}-123456")
            for name in ("gm", "alice", "bob", "watcher")}


@pytest.fixture
def everyone_online(monkeypatch):
    monkeypatch.setattr(witnessing, "_presence", lambda campaign_id: {"gm", "alice", "bob", "watcher"})


async def frames(world: WitnessedWorld, sockets: dict) -> dict:
    """Every event frame each observer's socket received, up to the log's head."""
    head = await database_sync_to_async(lambda: Campaign.objects.get(slug=world.slug).last_seq)()
    out = {}
    for name, comm in sockets.items():
        got = []
        while not got or got[-1]["event"]["seq"] < head:
            frame = await comm.receive_json_from(timeout=HANG)
            if frame["type"] == "event":
                got.append(frame)
        await comm.disconnect()
        out[name] = world.comparable(got)
    return out


@pytest.mark.parametrize("mode", ["gm", "everyone"])
@pytest.mark.parametrize("evening", sorted(EVENINGS))
async def test_members_receive_the_same_in_two_worlds_whose_hidden_things_differ_under_witnessed_rolls(
        people, everyone_online, settings, tmp_path, mode, evening):
    system, steps = EVENINGS[evening]
    settings.TEST_DICE_FILE = str(tmp_path / "dice.json")
    dice_file = tmp_path / "dice.json"
    make = database_sync_to_async(WitnessedWorld)
    worlds = [await make(system, people, mode, npc, dice_file) for npc in NPCS]
    sockets = []
    for world in worlds:
        sockets.append({})
        for name in OBSERVERS:
            sockets[-1][name] = comm = await connect(None, people[name], slug=world.slug)
            await until_ready(comm)
    for who, action, visibility, faces, other_faces in steps:
        for world, world_faces in zip(worlds, (faces, other_faces)):
            await database_sync_to_async(world.play)(who, action, visibility, world_faces)
    pending = await database_sync_to_async(
        lambda: Event.objects.filter(campaign__slug=worlds[0].slug, type=PENDING).count())()
    assert pending, "the evening stored no witnessed roll: it tests nothing"
    received = [await database_sync_to_async(w.received)() for w in worlds]
    live = [await frames(w, s) for w, s in zip(worlds, sockets)]
    for name in OBSERVERS:
        for what in received[0][name]:
            assert received[0][name][what] == received[1][name][what], f"{name}'s {what} differ between the worlds"
        assert live[0][name] == live[1][name], f"{name}'s live socket differs between the worlds"
