"""Dice anyone can verify (the scheme is specified in docs/fair-dice.md).

* When a play session starts, the server draws a secret 32-byte seed and
  publishes ``SHA-256(seed)`` in the ``session_started`` event.
* Every die rolled in that session is derived from the seed, the campaign,
  the session, the seq of the command's first event, the die's index in the
  command, and the players' seeds added so far (``add_seed``), by
  HMAC-SHA256 with rejection sampling, so no face is favoured.
* Every die drawn is recorded, in order, in the first event's
  ``payload["dice_log"]`` as ``[sides, face]`` pairs.
* When the session ends, the seed is revealed in the ``session_ended`` event,
  and anyone can recompute every die (:func:`verify_session`).

Hidden rolls are sealed: their payload carries a random ``nonce`` and a
``commitment`` (SHA-256 of the payload without the commitment), which is all
other members see until the GM reveals the roll.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass, field

from rules import SecretDice

from .log import canonical_json
from .models import Campaign, DiceSeed, Event

SCHEME = "talekeeper-hmac-sha256-v1"
MAX_PLAYER_SEED = 64


def new_seed(campaign: Campaign, session: int) -> DiceSeed:
    return DiceSeed.objects.create(campaign=campaign, session=session, seed=secrets.token_hex(32))


def seed_commitment(seed_hex: str) -> str:
    return hashlib.sha256(bytes.fromhex(seed_hex)).hexdigest()


def player_mix(seeds: list[str]) -> str:
    """The players' contribution: SHA-256 over their seeds in log order (hex)."""
    return hashlib.sha256("\n".join(seeds).encode("utf-8")).hexdigest()


def derive_face(seed_hex: str, campaign_id: int, session: int, seq: int, index: int, sides: int, mix: str,
                nonce: str = "") -> int:
    """The face of die ``index`` of the command starting at ``seq``: uniform in 1..sides.

    A hidden roll's ``nonce`` is part of the message, so its dice stay secret
    after the seed is revealed, until the roll itself is revealed.
    """
    key = bytes.fromhex(seed_hex)
    limit = (2**64 // sides) * sides  # values at or above this would favour low faces
    suffix = f":{nonce}" if nonce else ""
    counter = 0
    while True:
        message = f"{campaign_id}:{session}:{seq}:{index}:{counter}:{mix}{suffix}".encode("ascii")
        value = int.from_bytes(hmac.new(key, message, hashlib.sha256).digest()[:8], "big")
        if value < limit:
            return value % sides + 1
        counter += 1


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
    """The dice of one command inside a play session, derived from the session seed."""

    def __init__(self, seed_hex: str, campaign_id: int, session: int, seq: int, mix: str, nonce: str = ""):
        self.seed_hex, self.campaign_id, self.session, self.seq, self.mix = seed_hex, campaign_id, session, seq, mix
        self.nonce = nonce
        self.index = 0

    def roll(self, sides: int) -> int:
        face = derive_face(self.seed_hex, self.campaign_id, self.session, self.seq, self.index, sides, self.mix,
                           self.nonce)
        self.index += 1
        return face


def session_mix(campaign: Campaign, session: int, before_seq: int | None = None) -> str:
    qs = Event.objects.filter(campaign=campaign, session=session, type="seed_added")
    if before_seq is not None:
        qs = qs.filter(seq__lt=before_seq)
    return player_mix([e.payload["seed"] for e in qs.order_by("seq")])


def dice_for(campaign: Campaign, nonce: str = "") -> RecordingDice:
    """The dice for the next command of a locked ``campaign``.

    In a running session they derive from its seed; outside one (setting up
    characters between sessions) they come from ``secrets`` and are not
    verifiable, which the events say.
    """
    if campaign.current_session is not None:
        seed = DiceSeed.objects.filter(campaign=campaign, session=campaign.current_session).first()
        if seed is not None:
            source = SessionDice(seed.seed, campaign.id, campaign.current_session, campaign.last_seq + 1,
                                 session_mix(campaign, campaign.current_session), nonce)
            return RecordingDice(source)
    return RecordingDice(SecretDice())


def new_nonce() -> str:
    return secrets.token_hex(16)


def seal(payload: dict, nonce: str) -> dict:
    """A hidden roll's payload with its nonce and a commitment to all of it."""
    sealed = {**payload, "nonce": nonce}
    sealed["commitment"] = commitment_of(sealed)
    return sealed


def commitment_of(payload: dict) -> str:
    """SHA-256 over the canonical JSON of the payload without its ``commitment``."""
    return hashlib.sha256(canonical_json({k: v for k, v in payload.items() if k != "commitment"})).hexdigest()


@dataclass
class DiceReport:
    ok: bool
    session: int
    events: int = 0
    dice: int = 0
    problems: list[tuple[int | None, str]] = field(default_factory=list)

    def summary(self) -> str:
        if self.ok:
            return f"OK session {self.session}: {self.dice} dice in {self.events} events match the revealed seed"
        return "; ".join(f"seq {seq}: {msg}" if seq else msg for seq, msg in self.problems)


def verify_session(campaign: Campaign, session: int) -> DiceReport:
    """Recompute every die of ``session`` from its revealed seed; report mismatches by seq."""
    report = DiceReport(ok=True, session=session)
    events = list(Event.objects.filter(campaign=campaign, session=session).order_by("seq"))
    start = next((e for e in events if e.type == "session_started"), None)
    end = next((e for e in events if e.type == "session_ended"), None)
    if start is None:
        report.problems.append((None, f"session {session} has no start event"))
    elif end is None:
        report.problems.append((None, f"session {session} has not ended: its seed is still secret"))
    else:
        seed = end.payload.get("dice_seed", "")
        if seed_commitment(seed) != start.payload.get("dice_commitment"):
            report.problems.append((end.seq, "the revealed seed does not match the commitment published at the start"))
        else:
            _check_dice(campaign, session, seed, events, report)
    for event in events:
        if event.type == "roll_revealed" and commitment_of(event.payload["payload"]) != event.payload["payload"].get(
                "commitment"):
            report.problems.append((event.payload["seq"], "the revealed roll does not match its commitment"))
    report.ok = not report.problems
    return report


def _check_dice(campaign, session, seed, events, report) -> None:
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
            expected = derive_face(seed, campaign.id, session, event.seq, index, sides, mix,
                                   event.payload.get("nonce", "") if event.visibility != "public" else "")
            if expected != face:
                report.problems.append((event.seq, f"die {index + 1} (d{sides}) shows {face}, the seed gives {expected}"))
                break
