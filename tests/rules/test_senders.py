"""Who could send a member's command, as rules/senders.py reads a log (docs/fair-dice.md, "Who may send a
command"), on logs written here event by event. ``CASES`` is also what tests/test_js.py gives the
browser's copy (static/talekeeper/senders.js), which must say the same of each."""

from __future__ import annotations

import pytest

from rules.senders import NOT_A_MEMBER, NOT_AS_SIGNED, Seats, problems
from rules.witness import Seen
from rules.witness import problems as witness_problems

GM, ALICE, BOB, WATCHER, SOCK = 1, 2, 3, 4, 9
NAMES = {GM: "gm", ALICE: "alice", BOB: "bob", WATCHER: "watcher", SOCK: "sock"}
SIGNATURE = {"key": "k", "session": None, "commitment": None, "sig": "s"}  # its checks are member_keys' and the verifiers'


def event(seq, kind, payload, actor=GM, session=None, character=None) -> dict:
    return {"seq": seq, "type": kind, "payload": payload, "actor_id": actor, "actor": NAMES.get(actor),
            "session": session, "character": character}


def command(seq, actor, action, kind=None, session=None, character=None, **payload) -> dict:
    """A member's signed command's first event."""
    return event(seq, kind or action["type"], {**payload, "command_id": f"c{seq}", "action": action,
                                               "signature": SIGNATURE}, actor, session, character)


def created(signed=True, witnessed="off") -> dict:
    return event(1, "campaign_created", {"name": "Vale", "system": "tote", "gm": "gm", "witnessed_rolls": witnessed,
                                         **({"signed_commands": True} if signed else {})})


def joined(seq, who, role="player", by=GM, with_id=True) -> dict:
    return event(seq, "member_joined", {"username": NAMES[who], "role": role, **({"user_id": who} if with_id else {})},
                 by)


def removed(seq, who) -> dict:
    return event(seq, "member_removed", {"username": NAMES[who], "user_id": who, "role": "player"})


def roll(seq, actor, character=None, session=1, **extra) -> dict:
    action = {"type": "roll", "notation": "1d20", **({"character": character} if character is not None else {})}
    return command(seq, actor, action, session=session, character=character, dice_log=[[20, 7]], **extra)


def make(seq, actor, character, npc=False, owner=None, payload_owner=None) -> dict:
    """``actor``'s signed create_character making ``character`` (given to ``owner``, a GM's); the payload
    names ``payload_owner`` (as the server would by default)."""
    action = {"type": "create_character", "name": f"C{character}", **({"npc": True} if npc else {}),
              **({"owner": NAMES[owner]} if owner else {})}
    owner_id = payload_owner or owner or actor
    return command(seq, actor, action, kind="character_created", character=character, name=f"C{character}",
                   owner=NAMES[owner_id], owner_id=owner_id, **({"npc": True} if npc else {}))


TABLE = [created(), joined(2, GM, "gm", GM), joined(3, ALICE), joined(4, WATCHER, "spectator"),
         make(5, ALICE, 10), make(6, GM, 11, npc=True), make(7, GM, 12), make(8, GM, 13, owner=ALICE)]
MAY_NOT = "a command for character {}, which its sender may not act for: {}"

# name -> (the log, [(seq, why)] expected)
CASES = {
    "an honest table": (TABLE + [roll(9, ALICE, 10), roll(10, GM, 10), roll(11, GM, 11), roll(12, ALICE, 13),
                                 roll(13, ALICE), command(14, WATCHER, {"type": "post_message", "text": "hi"}),
                                 command(15, GM, {"type": "request_roll", "characters": [10, 11, 13],
                                                  "action": {"type": "roll"}})], []),
    "a player for the GM's NPC": (TABLE + [roll(9, ALICE, 11)], [(9, MAY_NOT.format(11, "an NPC is the GM's"))]),
    "a player for the GM's own": (TABLE + [roll(9, ALICE, 12)], [(9, MAY_NOT.format(12, "it is another member's"))]),
    "a player for a character the log does not show her": (
        TABLE + [roll(9, ALICE, 99)], [(9, MAY_NOT.format(99, "the log shows no character of hers by that id"))]),
    "a spectator for a character": (
        TABLE + [command(9, WATCHER, {"type": "post_message", "text": "hi", "kind": "ic", "character": 10})],
        [(9, MAY_NOT.format(10, "a spectator acts for nobody"))]),
    "a GM's request naming a character of hers, by a player": (
        TABLE + [command(9, ALICE, {"type": "request_roll", "characters": [10, 12], "action": {"type": "roll"}})],
        [(9, MAY_NOT.format(12, "it is another member's"))]),
    "someone who never joined": (TABLE + [roll(9, BOB)], [(9, NOT_A_MEMBER)]),
    "a member after her removal, and again once she rejoined": (
        TABLE + [removed(9, ALICE), roll(10, ALICE, 10), joined(11, ALICE), roll(12, ALICE, 10)],
        [(10, NOT_A_MEMBER)]),
    "a player who was a GM, for the NPC she made then": (
        TABLE + [event(9, "member_role_changed", {"username": "alice", "user_id": ALICE, "from": "player", "role": "gm"}),
                 make(10, ALICE, 14, npc=True),
                 event(11, "member_role_changed", {"username": "alice", "user_id": ALICE, "from": "gm", "role": "player"}),
                 roll(12, ALICE, 14)], [(12, MAY_NOT.format(14, "an NPC is the GM's"))]),
    "a creation whose payload is not what its signed command says": (
        TABLE + [make(9, ALICE, 15, payload_owner=GM), roll(10, ALICE, 15)], [(9, NOT_AS_SIGNED)]),
    "a character given to a member, its owner rewritten as another's": (
        TABLE + [make(9, GM, 15, owner=ALICE, payload_owner=WATCHER), roll(10, ALICE, 15)], [(9, NOT_AS_SIGNED)]),
    "a creation marked an NPC against its signed command": (
        TABLE + [{**make(9, GM, 15), "payload": {**make(9, GM, 15)["payload"], "npc": True}}], [(9, NOT_AS_SIGNED)]),
    "a log read from later than its first event names nobody": (TABLE[1:] + [roll(9, BOB), roll(10, ALICE, 11)], []),
    "unsigned events are left to the signature checks": (
        TABLE + [{**roll(9, BOB), "payload": {k: v for k, v in roll(9, BOB)["payload"].items() if k != "signature"}}],
        []),
    "later events of a command are its first's": (
        TABLE + [event(9, "roll", {"command_of": 5, "dice_log": [[6, 1]], "action": {"type": "roll"},
                                   "signature": SIGNATURE}, BOB, 1)], []),
    "older joins by username, read as the rebuild reads them": (
        [created(signed=False), joined(2, ALICE, by=ALICE, with_id=False), joined(3, BOB, with_id=False),
         event(4, "signed_commands_required", {"signed_commands": True}), roll(5, ALICE), roll(6, BOB)], []),
    "an older join no event ties to an id leaves non-members unnamed": (
        [created(signed=False), event(2, "member_joined", {"username": "zed", "role": "player"}),
         event(3, "signed_commands_required", {"signed_commands": True}), roll(4, SOCK)], []),
    "a join without an id once members sign does not": (
        [created(), event(2, "member_joined", {"username": "zed", "role": "player"}), roll(3, SOCK)],
        [(3, NOT_A_MEMBER)]),
}


def seen(log: list[dict]) -> list[Seen]:
    return [Seen(e["seq"], e["type"], e["payload"], e["actor_id"], e["actor"], e["session"], e["character"]) for e in log]


@pytest.mark.parametrize("name", CASES)
def test_who_could_send_each_command(name):
    log, expected = CASES[name]
    assert problems(seen(log)) == expected


def test_a_sealed_event_is_left_alone_and_a_character_made_sealed_is_unknown_to_its_reader():
    sealed = [Seen(e.seq, None, None, e.actor_id, e.actor, e.session) if e.seq == 6 else e for e in seen(TABLE)]
    log = sealed + seen([roll(9, GM, 11), roll(10, ALICE, 11)])
    assert problems(log) == [(10, MAY_NOT.format(11, "the log shows no character of hers by that id"))]
    hidden_roll = Seen(11, None, None, ALICE, "alice", 1)
    assert problems(log[:-1] + [hidden_roll]) == []


def test_whose_rolls_wait_follows_the_characters_owner_under_gm():
    """Under "gm" a roll for a GM's character (an NPC, one a GM owns, one a member who was a GM in this
    session owns) waits for witnesses whoever sends it; a player's roll for her own, or the table's, does
    not. rules/witness.py reads the owners from :class:`Seats`."""
    table = [created(witnessed="gm")] + TABLE[1:] + [event(9, "session_started", {"session": 1}, session=1)]
    said = ("a roll for a character of a GM's (an NPC, or one a GM owns), whose rolls this campaign witnesses (gm), "
            "stored without waiting for witnesses: its sender could have chosen its dice")
    out = witness_problems(seen(table + [roll(10, ALICE, 10), roll(11, ALICE), roll(12, ALICE, 11),
                                         roll(13, ALICE, 12)]))
    assert out == [(12, said), (13, said)]
    seats = Seats()
    for e in seen(TABLE):
        seats.see(e)
    assert [seats.gms(c) for c in (10, 11, 12, 13, 99, None)] == [False, True, True, False, False, False]


def test_the_hosts_accounts_name_only_whom_the_log_ties_to_no_id():
    """``Seats(account=...)``, as the rebuild reads a log (campaign/roster.py): the account called so now
    names whom a membership event names by a username the log ties to no id yet, and only her: an id, the
    invite link and a name an earlier event gave come first, as every verifier reads them."""
    asked = []

    def account(username):
        asked.append(username)
        return {"zed": 7, "alice": 98, "bob": 99}.get(username)

    log = seen([created(signed=False), joined(2, ALICE, by=ALICE, with_id=False),
                event(3, "member_joined", {"username": "zed", "role": "player"}),
                event(4, "member_role_changed", {"username": "alice", "from": "player", "role": "spectator"}),
                joined(5, BOB), event(6, "member_removed", {"username": "bob", "role": "player"}),
                event(7, "member_joined", {"username": "yan", "role": "player"})])
    host, verifier = Seats(account=account), Seats()
    read = [(host.see(e).change, verifier.see(e).change) for e in log]
    assert [h.who if h else None for h, _ in read] == [None, ALICE, 7, ALICE, BOB, BOB, None]
    assert [v.who if v else None for _, v in read] == [None, ALICE, None, ALICE, BOB, BOB, None]
    assert asked == ["zed", "yan"]
    assert host.roles == {GM: "gm", ALICE: "spectator", 7: "player"}
    assert verifier.roles == {GM: "gm", ALICE: "spectator"} and set(verifier.unnamed) == {"zed", "yan"}


def test_a_username_beside_an_id_that_is_no_text_names_nobody():
    log = seen([created(), event(2, "member_joined", {"username": ["alice"], "user_id": ALICE, "role": "player"}),
                roll(3, ALICE)])
    seats = Seats()
    assert [seats.see(e).problem for e in log] == ["", "", ""]
    assert seats.roles == {GM: "gm", ALICE: "player"} and seats.names == {"gm": GM, "alice": ALICE}  # #3's actor
