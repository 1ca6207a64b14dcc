"""Witnessed rolls, as every verifier checks them (docs/fair-dice.md, "Witnessed rolls").

Pure, like the rest of ``rules/``: the server's checks of its own database (campaign/member_keys.py,
campaign/fairdice.py) and the members' standalone verifier (tools/talekeeper_verify.py, shipped with
``rules/``) read a log through :func:`problems`, so the two can't drift apart. The browser's copy is
static/talekeeper/witness.js, check for check and in the same words (tests/test_js.py reads the same logs
through both).

A witnessed command is a ``roll_pending`` event (its signed envelope, ``witnesses``: member ids), for a
sealed one also a public ``witness_call`` (``command_of`` it, the same ``witnesses``); then each
witness's signed ``witness_commit`` (the :func:`commitment` to her entropy), stored as
``roll_committed``; then the server's ``commitments_closed`` (``command_of`` the pending event,
``committed``: the seqs of the commitments stored before it); then each witness's signed
``witness_roll`` (her entropy, revealed), stored as ``roll_witnessed``; then the command's decision,
whose first event names the reveals it used (``witnessed_by``: their seqs) and their digest
(``witness_digest``), and says ``"unwitnessed": true`` when there are none.

A session whose ``session_started`` says ``"witness_commits": true`` (:data:`COMMITS_MARK`) runs
commit-then-reveal, and so does every later one; a roll of an earlier session was witnessed in one
phase (the reveals alone, no commitments) and verifies as it did.

Whose rolls wait for witnesses follows the members' roles and the characters' owners as rules/senders.py
folds them from the log: a member's whose role the setting covers, and under ``"gm"`` also a roll for a
character of a GM's (an NPC, or one a member who is a GM owns), whoever sent it.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from typing import Iterable, NamedTuple

from .senders import Seats, character_of

MODES = ("off", "gm", "everyone")
PENDING, CALL, CONTRIBUTION = "roll_pending", "witness_call", "roll_witnessed"
COMMITTED, CLOSED = "roll_committed", "commitments_closed"
CONTRIBUTE, COMMIT = "witness_roll", "witness_commit"
COMMITS_MARK = "witness_commits"  # in session_started: its witnessed rolls commit before they reveal
DICE_SCHEME = "talekeeper-hmac-sha256-v4"
ENTROPY_BYTES = 32
SETTING = "witnessed_rolls"


def digest(contributions: Iterable[tuple[int, int, str]]) -> str:
    """SHA-256 (hex) of the JCS of ``[[member id, entropy], ...]`` in member id order, of ``(seq, member
    id, entropy)`` contributions (a member contributes once). Not their seqs: the host chooses where it
    stores each one, and dice that followed them would give it an outcome per placement. (Whole numbers
    and base64url text: Python's compact JSON of them is their JCS.)"""
    rows = sorted([member, entropy] for _, member, entropy in contributions)
    return hashlib.sha256(json.dumps(rows, separators=(",", ":")).encode("ascii")).hexdigest()


def commitment(roll: int, member: int, entropy: str) -> str:
    """A witness's commitment to her entropy: SHA-256 (hex) of the JCS of ``{"entropy", "member", "roll"}``.
    The member and the roll are bound in, so no other witness can send it as hers, nor can it serve
    another roll. (Whole numbers and base64url text: Python's compact JSON of them, keys sorted, is
    their JCS.)"""
    text = json.dumps({"entropy": entropy, "member": member, "roll": roll}, separators=(",", ":"), sort_keys=True)
    return hashlib.sha256(text.encode("ascii")).hexdigest()


def commitment_ok(text) -> bool:
    return isinstance(text, str) and len(text) == 64 and all(c in "0123456789abcdef" for c in text)


def dice_id(command_id: str, witness_digest: str) -> str:
    """What a witnessed command's dice derive from in place of its command id (scheme v4)."""
    return f"{command_id}|{witness_digest}"


def applies(mode, role) -> bool:
    """Whether a member of ``role`` has her dice witnessed under ``mode``."""
    return mode == "everyone" or (mode == "gm" and role == "gm")


def steps_down(mode, was, role) -> bool:
    """Whether a member going from ``was`` to ``role`` would leave her rolls unwitnessed under ``mode``:
    inside a session, a GM-host made a player for one roll (by a GM she holds) would escape its
    witnesses, as with the setting switched off around it. So this happens between sessions only."""
    return applies(mode, was) and not applies(mode, role)


def entropy_ok(text) -> bool:
    if not isinstance(text, str) or len(text) != 43 or not text.replace("-", "").replace("_", "").isalnum() \
            or not text.isascii():
        return False
    try:
        return len(base64.urlsafe_b64decode(text + "=")) == ENTROPY_BYTES
    except (ValueError, binascii.Error):
        return False


class Seen(NamedTuple):
    """One event as a verifier reads it: ``payload`` None when it is sealed from the reader."""

    seq: int
    type: str | None
    payload: dict | None
    actor_id: int | None
    actor: str | None  # the actor's username
    session: int | None
    character: int | None = None  # the character it is about (None when sealed from the reader)


def witness_list_ok(witnesses, sender) -> bool:
    """Whether a pending roll's ``witnesses`` are member ids, each once in ascending order, not its sender's."""
    return isinstance(witnesses, list) and all(type(w) is int for w in witnesses) and sender not in witnesses \
        and all(a < b for a, b in zip(witnesses, witnesses[1:]))


def resolution_of(payload) -> bool:
    """Whether a payload is a witnessed command's decision (its first event)."""
    return isinstance(payload, dict) and "witness_digest" in payload


def problems(events: Iterable[Seen]) -> list[tuple[int, str]]:
    """``(seq, why)`` for each way the log breaks the rules of witnessed rolls, as far as the reader
    can see it: every contribution to a roll stored between its pending event and its decision is
    included, none other; the digest is theirs; a contribution is by a listed witness, once, before
    the decision; a roll is decided once, before its session ends (as far as the reader can tell: an event
    sealed from her after it may be its decision); and where the campaign witnesses a member's rolls, or
    under "gm" a roll for a GM's character, no such roll inside a session is stored without the pending
    step. Under
    commit-then-reveal (a session marked :data:`COMMITS_MARK`): a commitment is by a listed witness,
    once, before the close; the close names every commitment stored before it, none other; a reveal
    comes after the close, by a member whose commitment it names, and matches that commitment; a roll
    listing witnesses is decided after its close."""
    out: list[tuple[int, str]] = []
    mode = "off"
    marked: dict[int | None, bool] = {}  # session -> whether it commits before it reveals
    marked_from = None  # the earliest session_started carrying the marker: every later one must too
    # Roles by member id (a username is no part of the chain, and a host could rename its GM's account),
    # the characters' owners, and who was a GM at any point of the session now read (GM at its start, or
    # made one in it): under "gm" her rolls wait for witnesses to its end, whatever her role now. A removal
    # and a new join as a player would otherwise step her down with no role change for :func:`steps_down`.
    seats = Seats()
    pendings: dict[int, dict] = {}
    last_sealed = None  # the last seq sealed from the reader: a decision may be sealed from her
    for e in events:
        change = seats.see(e).change
        p = e.payload
        if p is None:
            last_sealed = e.seq
            continue
        kind = e.type
        if kind == "campaign_created":  # its actor is the GM
            mode = p.get(SETTING, "off")
            if mode not in MODES:
                out.append((e.seq, f"names no setting of whose rolls are witnessed ({', '.join(MODES)})"))
        elif kind in ("member_joined", "member_role_changed"):
            if e.session is not None and steps_down(mode, change.was, change.role):
                out.append((e.seq, "changes who is a GM inside a session where the GM's rolls are witnessed: as a player "
                                   "her rolls would escape their witnesses"))
        elif kind == "campaign_configured" and (SETTING in p or SETTING in _changes(p)):
            if e.session is not None:  # the server writes the key only with a change
                out.append((e.seq, "changes whose rolls are witnessed inside a session, where rolls could escape "
                                   "their witnesses: it changes between sessions only"))
            mode = p.get(SETTING)
            # Its line of the log reads ``changed``; every check here reads the setting: they must agree.
            to = _changes(p).get(SETTING)
            if mode not in MODES or not isinstance(to, dict) or to.get("to") != mode:
                out.append((e.seq, "sets whose rolls are witnessed otherwise than its line of the log says, or to no "
                                   f"setting ({', '.join(MODES)})"))
        elif kind == "session_started":
            marked[p.get("session")] = p.get(COMMITS_MARK) is True
            if p.get(COMMITS_MARK) is True:
                marked_from = marked_from or e.seq
            elif marked_from is not None:
                out.append((e.seq, f"starts a session whose witnessed rolls reveal without committing first, after "
                                   f"#{marked_from} began committing: a downgrade, the last witness could aim the dice"))
        elif kind == "session_ended":
            for seq, pend in pendings.items():
                # A decision sealed from the reader (a sealed roll's; or one read by fewer than its pending event,
                # the sheet having moved) may be any event sealed from her since the roll: the GM's export says.
                blind = type(seq) is not int or (last_sealed is not None and last_sealed > seq)
                if pend["resolved"] is None and pend["session"] == e.session and not pend.get("named") and not blind:
                    pend["named"] = True
                    out.append((seq, f"a witnessed roll never decided before its session ended (#{e.seq})"))
        if kind == PENDING:
            pendings[e.seq] = _pending(p.get("witnesses"), e.actor_id, e.session, marked.get(e.session, False))
            if not witness_list_ok(p.get("witnesses"), e.actor_id):
                out.append((e.seq, "a witnessed roll whose witnesses are not member ids in ascending order, "
                                   "its sender not among them: no contribution could be checked against them"))
        elif kind == CALL:
            named = p.get("command_of")
            pend = pendings.get(named)
            if pend is None:  # its pending event is sealed from the reader: the call is what she knows of it
                pendings[named] = _pending(p.get("witnesses"), e.actor_id, e.session, marked.get(e.session, False))
            elif pend["witnesses"] != p.get("witnesses"):
                out.append((e.seq, f"calls other witnesses than roll #{named} lists"))
        elif kind == COMMITTED:
            why = _commitment_problem(e, p, pendings)
            if why:
                out.append((e.seq, why))
        elif kind == CLOSED:
            why = _close_problem(e, p, pendings)
            if why:
                out.append((e.seq, why))
        elif kind == CONTRIBUTION:
            why = _contribution_problem(e, p, pendings)
            if why:
                out.append((e.seq, why))
        elif resolution_of(p):
            why = _resolution_problem(e, p, pendings)
            if why:
                out.append((e.seq, why))
        elif p.get("dice_log") and e.session is not None and "command_id" in p:
            why = _unwaited(mode, seats, e.actor_id, p)
            if why:
                out.append((e.seq, why))
    return out


def _unwaited(mode, seats: Seats, actor, payload: dict) -> str:
    """Why a roll inside a session stored without the pending step should have waited for witnesses ('' if
    not): its sender's rolls wait (her role, or under "gm" a GM at any point of the session), or under "gm"
    the character it is for is a GM's, whoever sent it (a sock-puppet player's roll for the GM's NPC)."""
    if applies(mode, seats.roles.get(actor)) or applies(mode, "gm") and actor in seats.gm_this:
        return (f"a roll by a member whose rolls this campaign witnesses ({mode}), stored without waiting for "
                "witnesses: its sender could have chosen its dice")
    if applies(mode, "gm") and seats.gms(character_of(payload)):
        return (f"a roll for a character of a GM's (an NPC, or one a GM owns), whose rolls this campaign witnesses "
                f"({mode}), stored without waiting for witnesses: its sender could have chosen its dice")
    return ""


def _changes(payload: dict) -> dict:
    return payload["changed"] if isinstance(payload.get("changed"), dict) else {}


def _pending(witnesses, actor_id, session, commits: bool) -> dict:
    # ``commits``: its session commits before it reveals; ``committed``: (seq, member, commitment) in seq
    # order; ``closed``: the seq of its close, and ``closed_set``: member -> the commitment it closed with.
    return {"witnesses": witnesses if isinstance(witnesses, list) else None, "actor": actor_id,
            "session": session, "came": [], "resolved": None, "commits": commits, "committed": [],
            "closed": None, "closed_set": {}}


def _two_phase(pend: dict) -> bool:
    """Whether a roll is checked as commit-then-reveal: its session says so, or (a session running when
    the server began committing) a commitment or a close to it was stored."""
    return pend["commits"] or bool(pend["committed"]) or pend["closed"] is not None


def _signed_roll(e: Seen, p: dict, pendings: dict) -> tuple[dict, object, dict | None]:
    """A witness's command to a roll: its signed action, the roll it names, and that roll (None: none waits)."""
    action = p.get("action") if isinstance(p.get("action"), dict) else {}
    roll = action.get("roll")
    return action, roll, pendings.get(roll) if type(roll) is int else None


def _witness_problem(e: Seen, p: dict, roll, pend: dict | None, what: str) -> str:
    """What every witness's command to a roll must be: of the roll she signed, to a waiting roll that lists her."""
    if p.get("roll") != roll:
        return f"a {what} whose roll is not the one its member signed"
    if pend is None:
        return f"a {what} to #{str(roll)[:20]}, which is not a roll waiting for witnesses"
    if pend["resolved"] is not None:
        return f"a {what} to roll #{roll} after it was decided in #{pend['resolved']}"
    if pend["witnesses"] is not None and e.actor_id not in pend["witnesses"]:
        return f"a {what} by a member roll #{roll} does not list as its witness"
    return ""


def _commitment_problem(e: Seen, p: dict, pendings: dict) -> str:
    action, roll, pend = _signed_roll(e, p, pendings)
    if not commitment_ok(action.get("commitment")):
        return "a commitment that is not a SHA-256 digest in hex"
    why = _witness_problem(e, p, roll, pend, "commitment")
    if why:
        return why
    if pend["closed"] is not None:
        return f"a commitment to roll #{roll} after its commitments were closed in #{pend['closed']}"
    if any(member == e.actor_id for _, member, _ in pend["committed"]):
        return f"a second commitment of this member to roll #{roll}"
    pend["committed"].append((e.seq, e.actor_id, action["commitment"]))
    return ""


def _names_exactly(stored: list[int], named, noun: str, roll, why: str) -> str:
    """What is wrong with an event naming the seqs ``named`` among those of the log's events of its kind
    (``noun``) to ``roll`` before it (``stored``): it must name all and only them, in seq order. ``why``:
    what leaving one out lets the host do."""
    if isinstance(named, list) and named == stored:
        return ""
    left = [seq for seq in stored if not isinstance(named, list) or seq not in named]
    if left:
        return f"leaves out the {noun}{'s' if len(left) > 1 else ''} {', '.join(f'#{s}' for s in left)} stored before it: {why}"
    return f"names {noun}s to roll #{roll} that the log does not hold before it"


def _roll_of(p: dict, pendings: dict) -> tuple[object, dict | None]:
    """The roll a close or a decision names (``command_of``), and that roll (None: no roll waits there)."""
    named = p.get("command_of")
    return named, pendings.get(named) if type(named) is int else None


def _close_problem(e: Seen, p: dict, pendings: dict) -> str:
    named, pend = _roll_of(p, pendings)
    if pend is None:
        return f"closes the commitments to #{str(named)[:20]}, which is no roll waiting for witnesses"
    if pend["resolved"] is not None:
        return f"closes the commitments to roll #{named} after it was decided in #{pend['resolved']}"
    if pend["closed"] is not None:
        return f"closes the commitments to roll #{named} a second time (first in #{pend['closed']})"
    pend["closed"] = e.seq
    named_seqs = p.get("committed")
    pend["closed_set"] = {member: (seq, text) for seq, member, text in pend["committed"]
                          if isinstance(named_seqs, list) and seq in named_seqs}
    return _names_exactly([seq for seq, _, _ in pend["committed"]], named_seqs, "commitment", named,
                          "the host chose whose entropy could count")


def _contribution_problem(e: Seen, p: dict, pendings: dict) -> str:
    action, roll, pend = _signed_roll(e, p, pendings)
    if not entropy_ok(action.get("entropy")):
        return f"a contribution whose entropy is not {ENTROPY_BYTES} bytes in base64url"
    why = _witness_problem(e, p, roll, pend, "contribution")
    if why:
        return why
    if any(member == e.actor_id for _, member, _ in pend["came"]):
        return f"a second contribution of this member to roll #{roll}"
    if _two_phase(pend):
        if pend["closed"] is None:
            return (f"reveals its entropy to roll #{roll} before its commitments were closed: a witness who "
                    "saw it could choose hers after")
        mine = pend["closed_set"].get(e.actor_id)
        if mine is None:
            return f"a reveal by a member with no commitment in roll #{roll}'s closed set (#{pend['closed']})"
        if commitment(roll, e.actor_id, action["entropy"]) != mine[1]:
            return f"a reveal that does not match its commitment #{mine[0]}"
    pend["came"].append((e.seq, e.actor_id, action["entropy"]))
    return ""


def _resolution_problem(e: Seen, p: dict, pendings: dict) -> str:
    named, pend = _roll_of(p, pendings)
    if pend is None:
        return f"decides #{str(named)[:20]} as a witnessed roll, but it is no roll waiting for witnesses"
    if pend["resolved"] is not None:
        return f"decides roll #{named} a second time (first in #{pend['resolved']})"
    pend["resolved"] = e.seq
    if _two_phase(pend) and pend["closed"] is None and pend["witnesses"] != []:
        return f"decides roll #{named} before its commitments were closed"
    if p.get("dice_scheme") != DICE_SCHEME:
        return f"a witnessed roll's dice not of scheme {DICE_SCHEME}"
    came = [seq for seq, _, _ in pend["came"]]
    why = _names_exactly(came, p.get("witnessed_by"), "contribution", named, "the host chose which to use")
    if why:
        return why
    if p.get("witness_digest") != digest(pend["came"]):
        return "its witness digest is not the digest of the contributions it names"
    if (p.get("unwitnessed") is True) != (not came):
        return "says unwitnessed with contributions, or witnessed with none"
    return ""
