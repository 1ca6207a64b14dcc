"""Witnessed rolls: dice a host who knows the seed cannot grind (docs/fair-dice.md, "Witnessed rolls").

A witnessed command is stored in steps by the pipeline (campaign/actions/commands.py). First a
``roll_pending`` event holding the signed envelope and the members whose tables were online then
(``witnesses``), with no dice. Each witness's table commits to fresh entropy with a signed
``witness_commit`` command, ``{"type": "witness_commit", "roll": <the roll_pending's seq>,
"commitment": <rules.witness.commitment of it>}``, stored as a public ``roll_committed`` event
(:func:`decide_witness_commit`). When every witness committed, or on timeout, the server closes the
commitments (``commitments_closed``); only then does each table reveal its entropy with a signed
``witness_roll``, ``{"type": "witness_roll", "roll": ..., "entropy": <32 random bytes, base64url>}``,
stored as a public ``roll_witnessed`` event once it matches the commitment the close holds
(:func:`decide_witness_roll`). When every closed witness revealed, or on timeout, the command is
decided: its dice come from the seed, the command id and the digest of the reveals included
(rules/witness.py), so no one can know them before every committed entropy was fixed: not its sender,
whose command was stored first, nor a witness, whose entropy was committed before any was revealed.

This module holds what the pipeline asks of it: who is online (from sessions/presence.py, which the
transport layer hands in at start-up: :func:`use_presence`), the timer, and the contribution's decision.
"""

from __future__ import annotations

import logging
import threading
from typing import Callable

from django.conf import settings

import rules.witness as witnessed
from rules.declare import Text

from ..errors import ActionError, Conflict, Forbidden, NotFound
from ..eventlog import Draft
from ..models import Campaign, Event, Membership, WitnessedRoll
from .declared import platform_action, seq_field

log = logging.getLogger(__name__)

_presence: Callable[[int], set[str]] | None = None


def use_presence(online: Callable[[int], set[str]]) -> None:
    """Where :func:`online_members` reads who is at a table (sessions/apps.py, at start-up)."""
    global _presence
    _presence = online


def online_members(campaign_id: int) -> set[str]:
    """The usernames with a live socket at the campaign's table now."""
    if _presence is None:
        return set()
    try:
        return _presence(campaign_id)
    except Exception as e:  # presence is advisory: no witnesses is a roll marked unwitnessed, not an error
        log.warning("presence unavailable for witnesses: %r", e)
        return set()


def schedule(resolve: Callable[[int], None], campaign_id: int, pending_seq: int, seconds: float) -> None:
    """Call ``resolve(campaign_id)`` once the pending roll's phase (its commitments, or its reveals) is
    over, ``seconds`` from now, in this process (the campaign's next command sweeps it if this process
    dies first)."""
    if not settings.WITNESS_TIMER:
        return
    timer = threading.Timer(seconds, _resolve_when_due, (resolve, campaign_id, pending_seq))
    timer.daemon = True
    timer.start()


def _resolve_when_due(resolve: Callable[[int], None], campaign_id: int, pending_seq: int) -> None:
    from django.db import connection

    try:
        resolve(campaign_id)
    except Exception:
        log.exception("resolving the witnessed roll #%s of campaign %s", pending_seq, campaign_id)
    finally:
        connection.close()  # the timer's thread ends here: its connection must not linger


class Ledger:
    """What one transaction under a campaign's lock knows of the pending rolls it stores contributions to:
    each roll's row and who has contributed to it, read once per roll, and kept up to date as the
    transaction stores contributions (no one else can while it holds the lock; a roll is decided, its row
    claimed, by the transaction that holds it too). A command's lock starts one (:func:`ledger`);
    contributions stored together in one transaction share one (commands.do_contributions)."""

    def __init__(self, campaign_id: int):
        self.campaign_id = campaign_id
        self._rows: dict[int, WitnessedRoll | None] = {}
        self._came: dict[int, dict[int, tuple[int, int, str]]] = {}  # roll -> member -> (seq, member, entropy)
        self._committed: dict[int, dict[int, tuple[int, int, str]]] = {}  # roll -> member -> (seq, member, commitment)

    def row(self, seq: int) -> WitnessedRoll | None:
        """The pending roll ``seq``'s row (None: no roll waits for witnesses there)."""
        if seq not in self._rows:
            self._rows[seq] = WitnessedRoll.objects.filter(campaign_id=self.campaign_id, pending_seq=seq).first()
        return self._rows[seq]

    def _contributed(self, seq: int) -> dict[int, tuple[int, int, str]]:
        if seq not in self._came:
            rows = Event.objects.filter(campaign_id=self.campaign_id, type=witnessed.CONTRIBUTION, payload__roll=seq)
            self._came[seq] = {actor: (at, actor, payload["action"]["entropy"])
                               for at, actor, payload in rows.values_list("seq", "actor_id", "payload")}
        return self._came[seq]

    def committed(self, seq: int) -> dict[int, tuple[int, int, str]]:
        """The commitments to roll ``seq`` stored so far: member -> ``(seq, member id, commitment)``."""
        if seq not in self._committed:
            rows = Event.objects.filter(campaign_id=self.campaign_id, type=witnessed.COMMITTED, payload__roll=seq)
            self._committed[seq] = {actor: (at, actor, payload["action"]["commitment"])
                                    for at, actor, payload in rows.values_list("seq", "actor_id", "payload")}
        return self._committed[seq]

    def closed_set(self, seq: int) -> dict[int, tuple[int, int, str]]:
        """The commitments roll ``seq``'s close holds (every one stored before it: none is taken after)."""
        row = self.row(seq)
        if row is None or row.closed_seq is None:
            return {}
        return {m: c for m, c in self.committed(seq).items() if c[0] < row.closed_seq}

    def came(self, seq: int) -> set[int]:
        """The members whose contribution to roll ``seq`` is stored."""
        return set(self._contributed(seq))

    def contributions(self, seq: int) -> list[tuple[int, int, str]]:
        """The contributions to roll ``seq`` stored so far, ``(seq, member id, entropy)`` in seq order."""
        return sorted(self._contributed(seq).values())

    def stored(self, event: Event) -> None:
        """A commitment or a contribution this transaction stored."""
        action = event.payload["action"]
        if event.type == witnessed.COMMITTED:
            self.committed(event.payload["roll"])[event.actor_id] = (event.seq, event.actor_id, action["commitment"])
        else:
            self._contributed(event.payload["roll"])[event.actor_id] = (event.seq, event.actor_id, action["entropy"])


def ledger(campaign: Campaign) -> Ledger:
    """The ledger of the transaction that locked ``campaign`` (the row its lock read), made at first use."""
    found = getattr(campaign, "witness_ledger", None)
    if found is None:
        found = campaign.witness_ledger = Ledger(campaign.id)
    return found


class Resolved(Conflict):
    """The roll was decided already: a contribution now would change nothing, and stores nothing."""

    code = "roll_resolved"


def _waiting_roll(campaign: Campaign, membership: Membership, seq) -> WitnessedRoll:
    """The pending roll ``seq`` a witness's command names, once it is hers to witness and not decided."""
    if isinstance(seq, bool) or not isinstance(seq, int) or not 0 < seq < 2**63:
        raise ActionError("'roll' must be the seq of a pending roll (a whole number).")
    row = ledger(campaign).row(seq)
    if row is None:
        raise NotFound(f"#{seq} is not a roll waiting for witnesses.", "not_pending")
    # Who may witness before what became of the roll: a member who is not its witness learns nothing
    # of its state (whether a roll sealed from her was decided, and in which event).
    if membership.user_id not in row.witnesses:
        raise Forbidden(f"You are not one of roll #{seq}'s witnesses (they are the members online when it was sent).",
                        "not_a_witness")
    if row.resolved_seq is not None:
        raise Resolved(f"Roll #{seq} was decided in #{row.resolved_seq}: contributions are closed.")
    return row


@platform_action(
    witnessed.COMMIT, title="Commit to a roll's entropy", spectators=True, emits=(witnessed.COMMITTED,),
    help="A witness's table commits to the entropy it will reveal once the roll's commitments are closed "
         "(docs/fair-dice.md); spectators' tables witness too.",
    fields={"roll": seq_field("The pending roll (its seq)"),
            "commitment": Text(64, label="Commitment", help="SHA-256 (hex) of the JCS of {entropy, member, roll}.")},
)
def decide_witness_commit(campaign: Campaign, membership: Membership, action: dict, *_) -> Draft:
    seq, commitment = action.get("roll"), action.get("commitment")
    if not witnessed.commitment_ok(commitment):
        raise ActionError("'commitment' must be a SHA-256 digest in lowercase hex (64 characters).")
    row = _waiting_roll(campaign, membership, seq)
    if row.closed_seq is not None:
        raise Conflict(f"Roll #{seq}'s commitments were closed in #{row.closed_seq}: yours came too late to count.",
                       "commitments_closed")
    if membership.user_id in ledger(campaign).committed(seq):
        raise Conflict(f"You already committed to roll #{seq}.", "already_committed")
    return Draft(witnessed.COMMITTED, {"roll": seq})


@platform_action(
    witnessed.CONTRIBUTE, title="Witness a roll", spectators=True, emits=(witnessed.CONTRIBUTION,),
    help="A witness's table reveals the entropy it committed to, once the roll's commitments are closed "
         "(docs/fair-dice.md); spectators' tables witness too.",
    fields={"roll": seq_field("The pending roll (its seq)"),
            "entropy": Text(64, label="Entropy", help=f"{witnessed.ENTROPY_BYTES} random bytes in base64url.")},
)
def decide_witness_roll(campaign: Campaign, membership: Membership, action: dict, *_) -> Draft:
    seq, entropy = action.get("roll"), action.get("entropy")
    if not witnessed.entropy_ok(entropy):
        raise ActionError(f"'entropy' must be {witnessed.ENTROPY_BYTES} random bytes in base64url, no padding.")
    row = _waiting_roll(campaign, membership, seq)
    if row.closed_seq is None:
        raise Conflict(f"Roll #{seq}'s commitments are not closed yet: a reveal before the close could be answered "
                       "by a witness who saw it.", "not_closed")
    known = ledger(campaign)
    mine = known.closed_set(seq).get(membership.user_id)
    if mine is None:
        raise Conflict(f"You have no commitment among those roll #{seq} closed with (#{row.closed_seq}): your entropy "
                       "can't count.", "not_committed")
    if membership.user_id in known.came(seq):
        raise Conflict(f"You already contributed to roll #{seq}.", "already_witnessed")
    if witnessed.commitment(seq, membership.user_id, entropy) != mine[2]:
        raise ActionError(f"That entropy does not match your commitment #{mine[0]} to roll #{seq}.", "reveal_mismatch")
    return Draft(witnessed.CONTRIBUTION, {"roll": seq})
