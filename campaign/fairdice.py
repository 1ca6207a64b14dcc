"""Dice anyone can verify (the scheme is specified in docs/fair-dice.md).

* When a play session starts, the server draws a secret 32-byte seed and
  publishes ``SHA-256(seed)`` in the ``session_started`` event.
* Scheme v2 (every session started since): a die depends only on the seed, the
  campaign, the session, the acting member, the command id the member's
  client chose, and the die's index in the command. Nothing the server can
  vary afterwards (seq, other events, other members' seeds or commands) moves
  it, so "grinding" a member's next die with filler events does nothing.
* A hidden command's nonce is derived the same way (no server draw), so the
  server has no free choice over a sealed roll either; except for an event sealed
  from its own actor (a blind roll, a decision on a character hidden from her),
  whose nonce is drawn (``nonce_drawn``): she knows her command id, so a derived
  one would let her test each possible body against the digest once the seed is out.
* The command's first event records ``command_id``, ``action``,
  ``dice_log`` and ``dice_scheme``: with the revealed seed anyone recomputes
  the dice and replays the rules (:func:`replay_command`).
* When the session ends, the seed is revealed in ``session_ended``.

Scheme v1 sessions (older logs: dice keyed on seq and on players' seeds)
still verify as they were made (:func:`derive_face_v1`).
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass, field

from rules import SecretDice, replay

import rules.witness as witnessed

from .eventlog import body_digest, canonical_json, event_body, hashed_fields
from .member_keys import signature_problems
from .models import VISIBILITY_PUBLIC, Campaign, DiceSeed, Event
from .projections import state_as_of

SCHEME_V1 = "talekeeper-hmac-sha256-v1"
SCHEME = "talekeeper-hmac-sha256-v2"
# Scheme v2's derivation with "v3" in its prefixes: the sessions of a campaign whose members sign their
# commands (docs/fair-dice.md, "Signed commands"), so a signed log's dice can't pass for unsigned ones.
SCHEME_V3 = "talekeeper-hmac-sha256-v3"
# A witnessed command's dice (rules/witness.py): v3's derivation with "v4" in its prefixes and
# the digest of its witnesses' contributions after its command id (witnessed.dice_id).
SCHEME_V4 = witnessed.DICE_SCHEME
DERIVED = {SCHEME: "v2", SCHEME_V3: "v3", SCHEME_V4: "v4"}
MAX_PLAYER_SEED = 64
# What the server adds to a command's first event beside what the rules decided (rules/replay.py).
RECORD_KEYS = replay.RECORD_KEYS


def scheme_for(campaign: Campaign) -> str:
    """The dice scheme of the campaign's sessions from now on."""
    return SCHEME_V3 if campaign.signed_from is not None else SCHEME


def new_seed(campaign: Campaign, session: int) -> DiceSeed:
    return DiceSeed.objects.create(campaign=campaign, session=session, seed=secrets.token_hex(32))


def seed_commitment(seed_hex: str) -> str:
    return hashlib.sha256(bytes.fromhex(seed_hex)).hexdigest()


def _hmac(seed_hex: str, message: str) -> bytes:
    return hmac.new(bytes.fromhex(seed_hex), message.encode("ascii"), hashlib.sha256).digest()


def _sample(seed_hex: str, message_for, sides: int) -> int:
    """A face in 1..sides from HMAC outputs, by rejection sampling so no face is favoured."""
    limit = (2**64 // sides) * sides  # values at or above this would favour low faces
    counter = 0
    while True:
        value = int.from_bytes(_hmac(seed_hex, message_for(counter))[:8], "big")
        if value < limit:
            return value % sides + 1
        counter += 1


def derive_face(seed_hex: str, campaign_id: int, session: int, actor_id: int, command_id: str, index: int,
                sides: int, version: str = "v2") -> int:
    """Scheme v2 (v3): die ``index`` of member ``actor_id``'s command ``command_id``."""
    prefix = f"talekeeper-dice-{version}|{campaign_id}|{session}|{actor_id}|{command_id}|{index}|"
    return _sample(seed_hex, lambda counter: f"{prefix}{counter}", sides)


def derive_nonce(seed_hex: str, campaign_id: int, session: int, actor_id: int, command_id: str,
                 version: str = "v2") -> str:
    """Scheme v2 (v3): a hidden command's nonce. Secret while the seed is; derivable by anyone after."""
    return _hmac(seed_hex, f"talekeeper-nonce-{version}|{campaign_id}|{session}|{actor_id}|{command_id}").hex()[:32]


def derive_face_v1(seed_hex: str, campaign_id: int, session: int, seq: int, index: int, sides: int, mix: str,
                   nonce: str = "") -> int:
    """Scheme v1 (sessions started before v2): keyed on seq and the players' seed mix."""
    suffix = f":{nonce}" if nonce else ""
    return _sample(seed_hex, lambda counter: f"{campaign_id}:{session}:{seq}:{index}:{counter}:{mix}{suffix}", sides)


def player_mix(seeds: list[str]) -> str:
    """Scheme v1 only: SHA-256 over the session's ``seed_added`` seeds in log order (hex)."""
    return hashlib.sha256("\n".join(seeds).encode("utf-8")).hexdigest()


def commitment_of(payload: dict) -> str:
    """Scheme v1 only: a sealed payload's commitment (SHA-256 of it without ``commitment``)."""
    return hashlib.sha256(canonical_json({k: v for k, v in payload.items() if k != "commitment"})).hexdigest()


class RecordingDice:
    """Wraps a dice source and records every die drawn, as ``[sides, face]``."""

    def __init__(self, source):
        self.source = source
        self.log: list[list[int]] = []

    def roll(self, sides: int) -> int:
        face = self.source.roll(sides)
        self.log.append([sides, face])
        return face


class SessionDice:
    """The dice of one command inside a play session (scheme v2, or v3: ``scheme``)."""

    def __init__(self, seed_hex: str, campaign_id: int, session: int, actor_id: int, command_id: str,
                 scheme: str = SCHEME):
        self.key = (seed_hex, campaign_id, session, actor_id, command_id)
        self.scheme = scheme
        self.index = 0

    def roll(self, sides: int) -> int:
        face = derive_face(*self.key, self.index, sides, DERIVED[self.scheme])
        self.index += 1
        return face

    @property
    def nonce(self) -> str:
        return derive_nonce(*self.key, DERIVED[self.scheme])


@dataclass
class CommandDice:
    """Where one command's dice come from, and what its first event must record about them."""

    dice: RecordingDice
    session_dice: SessionDice | None  # None outside a session: the dice are not verifiable

    @property
    def nonce(self) -> str:
        """The nonce that makes a hidden command's body digest hiding."""
        return self.session_dice.nonce if self.session_dice else drawn_nonce()


def drawn_nonce() -> str:
    """A nonce from the operating system: outside a session, and for an event sealed from its own
    actor (docs/fair-dice.md, section 4). It feeds no die and the digest binds the body whatever it
    is, so that the server chooses it gains the server nothing."""
    return secrets.token_hex(16)


def dice_for(campaign: Campaign, actor_id: int, command_id: str, seed: str | None = None,
             scheme: str | None = None) -> CommandDice:
    """The dice for member ``actor_id``'s command ``command_id`` in the locked ``campaign``.

    In a running session they derive from its seed (``seed``, when the caller
    read it with the lock: ``campaign.eventlog.lock_stream``); outside one (setting
    up characters between sessions) they come from ``secrets`` and the event
    says ``"verifiable": false``.
    """
    if campaign.current_session is not None:
        if seed is None:
            row = DiceSeed.objects.filter(campaign=campaign, session=campaign.current_session).first()
            seed = row.seed if row is not None else None
        if seed is not None:
            source = SessionDice(seed, campaign.id, campaign.current_session, actor_id, command_id,
                                 scheme or scheme_for(campaign))
            return CommandDice(RecordingDice(source), source)
    return CommandDice(RecordingDice(SecretDice()), None)


def record(payload: dict, command_id: str, action: dict, dice_log: list, verifiable: bool,
           scheme: str = SCHEME) -> dict:
    """The first event's payload with what a verifier needs to recompute and replay it."""
    if not verifiable:
        return {**payload, "dice_log": dice_log, "verifiable": False}
    return {**payload, "command_id": command_id, "action": action, "dice_log": dice_log, "dice_scheme": scheme}


# --- verifying a finished session -------------------------------------------------------------

@dataclass
class DiceReport:
    ok: bool
    session: int
    events: int = 0
    dice: int = 0
    problems: list[tuple[int | None, str]] = field(default_factory=list)
    # A key no earlier key of its member vouched for (rules/vouching.py): said, never a problem.
    warnings: list[str] = field(default_factory=list)

    def summary(self) -> str:
        if self.ok:
            return (f"OK session {self.session}: {self.dice} dice in {self.events} events match the revealed seed "
                    "and the rules")
        return "; ".join(f"seq {seq}: {msg}" if seq else msg for seq, msg in self.problems)


def verify_session(campaign: Campaign, session: int) -> DiceReport:
    """Recompute every die of ``session`` from its revealed seed and replay the rules; report by seq."""
    report = DiceReport(ok=True, session=session)
    events = list(Event.objects.filter(campaign=campaign, session=session).select_related("campaign")
                  .order_by("seq"))
    start = next((e for e in events if e.type == "session_started"), None)
    end = next((e for e in events if e.type == "session_ended"), None)
    if start is None:
        report.problems.append((None, f"session {session} has no start event"))
    elif end is None:
        report.problems.append((None, f"session {session} has not ended: its seed is still secret"))
    else:
        _check_bounds(campaign, session, events, start, end, report)
        seed = end.payload.get("dice_seed") or ""
        if end.payload.get("dice_seed") is None:
            report.problems.append((end.seq, f"session {session}'s seed was not kept (restored from an export made "
                                             "while it ran): its dice can't be checked"))
        elif not _is_seed(seed) or seed_commitment(seed) != start.payload.get("dice_commitment"):
            report.problems.append((end.seq, "the revealed seed does not match the commitment published at the start"))
        elif start.payload.get("dice_scheme") == SCHEME_V1:
            _check_dice_v1(campaign, session, seed, events, report)
        else:
            _check_dice_v2(campaign, seed, events, report, start.payload.get("dice_scheme"))
    _check_reveals(campaign, events, report)
    if start is not None:
        # Members' signatures on the session's commands, checked on the whole log (a key is known from
        # where it was added): a command in a member's name she never signed is BAD, not "unverifiable".
        last = end.seq if end is not None else None
        report.problems.extend((seq, why) for seq, why in signature_problems(campaign, report.warnings)
                               if seq >= start.seq and (last is None or seq <= last))
    report.problems.sort(key=lambda p: (p[0] is not None, p[0] or 0))
    report.ok = not report.problems
    return report


def _check_bounds(campaign: Campaign, session: int, events: list[Event], start: Event, end: Event,
                  report: DiceReport) -> None:
    """A session is one start and one end, and every event between them is stamped with it.

    The events are read by their session column: a host's server could answer a roll made while the
    session ran with dice of its choosing, stamped as rolled outside any session (``verifiable:
    false``), or start the session again with a new commitment, and no die of it would be checked."""
    for event in events:
        if event.type in ("session_started", "session_ended") and event not in (start, end):
            report.problems.append((event.seq, f"session {session} {event.type.split('_')[1]} a second time"))
        elif not start.seq <= event.seq <= end.seq:
            report.problems.append((event.seq, f"stamped session {session}, outside its start #{start.seq} "
                                               f"and end #{end.seq}"))
    between = (Event.objects.filter(campaign=campaign, seq__gt=start.seq, seq__lt=end.seq).exclude(session=session)
               .values_list("seq", "session"))
    for seq, stamped in between:
        report.problems.append((seq, f"between session {session}'s start #{start.seq} and end #{end.seq}, "
                                     f"but stamped {'outside any session' if stamped is None else f'session {stamped}'}"))


def _is_seed(value) -> bool:
    try:
        return isinstance(value, str) and len(bytes.fromhex(value)) == 32
    except ValueError:
        return False


def _check_reveals(campaign: Campaign, events: list[Event], report: DiceReport) -> None:
    """A reveal must carry exactly the body the sealed event committed to (its body digest)."""
    for event in events:
        if event.type != "roll_revealed":
            continue
        target = Event.objects.filter(campaign=campaign, seq=event.payload.get("seq")).first()
        if target is None:
            report.problems.append((event.seq, "the reveal names no event of this log"))
            continue
        problem = reveal_problem(target, event.payload)
        if problem:
            report.problems.append((event.seq, problem))


def reveal_problem(target: Event, reveal: dict) -> str:
    """Why a ``roll_revealed`` payload does not match the sealed ``target`` ('' when it does)."""
    body = reveal.get("body")
    if isinstance(body, dict):
        if body_digest(body) != body_digest(event_body(hashed_fields(target))):
            return f"the revealed body of #{target.seq} does not match its body digest (commitment)"
        return ""
    # A scheme-v1 reveal carried the sealed payload, which holds its own commitment.
    payload = reveal.get("payload")
    if not isinstance(payload, dict) or payload != target.payload or \
            commitment_of(payload) != payload.get("commitment"):
        return f"the revealed roll does not match the commitment of #{target.seq}"
    return ""


def _check_dice_v2(campaign: Campaign, seed: str, events: list[Event], report: DiceReport, scheme: str) -> None:
    """Every rolling command: its dice from the seed, then its events from the rules."""
    if scheme not in DERIVED:
        report.problems.append((events[0].seq if events else None, f"the session starts under an unknown dice scheme "
                                                                    f"{str(scheme)[:60]!r}"))
        return
    for event in events:
        log = event.payload.get("dice_log")
        if not log:
            continue
        report.events += 1
        report.dice += len(log)
        if event.payload.get("dice_scheme") != scheme and not (
                witnessed.resolution_of(event.payload) and scheme == SCHEME_V3):
            # A witnessed command's decision is of scheme v4 inside a v3 session (rules/witness.py checks
            # it is one); nothing else leaves its session's scheme.
            report.problems.append((event.seq, "dice rolled in a session without the session's dice scheme"))
            continue
        problem = replay_command(campaign, event, seed, scheme)
        if problem:
            report.problems.append(problem)


def replay_command(campaign: Campaign, first: Event, seed: str, scheme: str = SCHEME) -> tuple[int, str] | None:
    """Recompute one command's dice and re-decide it; ``(seq, problem)`` at the first difference.

    The rules are replayed on the character's full state as of the seq before
    the command (hidden events included: the server decided with them), with
    the action the first event recorded. Each stored event must equal what the
    rules decide, apart from what the server adds (``RECORD_KEYS``).
    """
    payload = first.payload
    command_id, action, log = payload.get("command_id"), payload.get("action"), payload["dice_log"]
    dice_id = command_id
    if witnessed.resolution_of(payload):
        # A witnessed command's decision: its envelope is on its pending event, and its dice hang on the
        # digest of its witnesses' contributions too (docs/fair-dice.md, "Witnessed rolls").
        pending = Event.objects.filter(campaign=campaign, seq=payload.get("command_of"),
                                       type=witnessed.PENDING).first() if type(payload.get("command_of")) is int else None
        command_id = pending.payload.get("command_id") if pending is not None else None
        action = pending.payload.get("action") if pending is not None else None
        dice_id = witnessed.dice_id(command_id, str(payload.get("witness_digest"))) if isinstance(command_id, str) else None
        scheme = SCHEME_V4
    if not isinstance(command_id, str) or not isinstance(action, dict) or first.session is None:
        return first.seq, "the event does not record its command id and action"
    if not isinstance(log, list) or not all(_is_die(d) for d in log):
        return first.seq, "its dice_log is not a list of [sides, face] pairs"
    dice = SessionDice(seed, campaign.id, first.session, first.actor_id, dice_id, scheme)
    for index, (sides, face) in enumerate(log):
        want = dice.roll(sides)
        if want != face:
            return first.seq, f"die {index + 1} (d{sides}) shows {face}, the seed gives {want}"
    if first.visibility != VISIBILITY_PUBLIC and payload.get("nonce_drawn") is not True and payload.get("nonce") != dice.nonce:
        return first.seq, "the hidden roll's nonce is not the one the seed gives"
    if action.get("type") in ("roll", replay.FIGHT_ROUND):
        state = None  # neither reads a sheet
    else:
        state = state_as_of(first.character, first.seq - 1) if first.character_id else None
    filled = payload.get("filled") if isinstance(payload.get("filled"), dict) else None
    return replay.outcome_problem(campaign.rules, state, action, log, _command_events(first), filled)


def _command_events(first: Event) -> list[Event]:
    """The events one command decided, starting with ``first`` (they are contiguous; a witnessed
    command's pending event and its call to witnesses come before its decision and are not the rules')."""
    if first.command_id is None:
        return [first]
    return list(Event.objects.filter(campaign_id=first.campaign_id, command_id=first.command_id, seq__gte=first.seq)
                .order_by("seq"))


def _is_die(entry) -> bool:
    return (isinstance(entry, list) and len(entry) == 2 and all(type(n) is int for n in entry)
            and entry[0] >= 1)


def _check_dice_v1(campaign, session, seed, events, report) -> None:
    seeds: list[str] = []
    for event in events:
        if event.type == "seed_added":
            seeds.append(event.payload["seed"])
        log = event.payload.get("dice_log")
        if not log:
            continue
        report.events += 1
        mix = player_mix(seeds)
        for index, (sides, face) in enumerate(log):
            report.dice += 1
            expected = derive_face_v1(seed, campaign.id, session, event.seq, index, sides, mix,
                                      event.payload.get("nonce", "") if event.visibility != "public" else "")
            if expected != face:
                report.problems.append((event.seq, f"die {index + 1} (d{sides}) shows {face}, the seed gives {expected}"))
                break


def current_commitment(campaign: Campaign) -> str | None:
    """The running session's dice commitment (its session_started's), or None outside a session: what a
    member's page signs its commands under (static/talekeeper/keys.js)."""
    if not campaign.current_session:
        return None
    seed = DiceSeed.objects.filter(campaign=campaign, session=campaign.current_session).values_list("seed", flat=True).first()
    return seed_commitment(seed) if seed else None
