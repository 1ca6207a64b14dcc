"""Witnessed rolls: dice a host who knows the seed cannot grind (docs/fair-dice.md, "Witnessed rolls").

A witnessed command is stored in two steps by the pipeline (campaign/actions/commands.py). First a
``roll_pending`` event holding the signed envelope and the members whose tables were online then
(``witnesses``), with no dice. Each witness's table answers with a signed ``witness_roll`` command,
``{"type": "witness_roll", "roll": <the roll_pending's seq>, "entropy": <32 random bytes, base64url>}``,
stored as a public ``roll_witnessed`` event (:func:`decide_witness_roll`). When the last witness
contributed, or on timeout, the command is decided: its dice come from the seed, the command id and
the digest of the contributions included (rules/witness.py), so its sender can't know them before the
others' entropy arrived, after her command was stored.

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


def schedule(resolve: Callable[[int], None], campaign_id: int, pending_seq: int) -> None:
    """Call ``resolve(campaign_id)`` once the pending roll's witnesses' time is up, in this process (the
    campaign's next command sweeps it if this process dies first)."""
    if not settings.WITNESS_TIMER:
        return
    timer = threading.Timer(settings.WITNESS_TIMEOUT_SECONDS, _resolve_when_due, (resolve, campaign_id, pending_seq))
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

    def came(self, seq: int) -> set[int]:
        """The members whose contribution to roll ``seq`` is stored."""
        return set(self._contributed(seq))

    def contributions(self, seq: int) -> list[tuple[int, int, str]]:
        """The contributions to roll ``seq`` stored so far, ``(seq, member id, entropy)`` in seq order."""
        return sorted(self._contributed(seq).values())

    def stored(self, event: Event) -> None:
        """A contribution this transaction stored."""
        self._contributed(event.payload["roll"])[event.actor_id] = (event.seq, event.actor_id,
                                                                    event.payload["action"]["entropy"])


def ledger(campaign: Campaign) -> Ledger:
    """The ledger of the transaction that locked ``campaign`` (the row its lock read), made at first use."""
    found = getattr(campaign, "witness_ledger", None)
    if found is None:
        found = campaign.witness_ledger = Ledger(campaign.id)
    return found


class Resolved(Conflict):
    """The roll was decided already: a contribution now would change nothing, and stores nothing."""

    code = "roll_resolved"


@platform_action(
    witnessed.CONTRIBUTE, title="Witness a roll", spectators=True, emits=(witnessed.CONTRIBUTION,),
    help="A witness's table adds its entropy to a roll waiting for witnesses (docs/fair-dice.md); spectators' "
         "tables witness too.",
    fields={"roll": seq_field("The pending roll (its seq)"),
            "entropy": Text(64, label="Entropy", help=f"{witnessed.ENTROPY_BYTES} random bytes in base64url.")},
)
def decide_witness_roll(campaign: Campaign, membership: Membership, action: dict, *_) -> Draft:
    seq, entropy = action.get("roll"), action.get("entropy")
    if isinstance(seq, bool) or not isinstance(seq, int) or not 0 < seq < 2**63:
        raise ActionError("'roll' must be the seq of a pending roll (a whole number).")
    if not witnessed.entropy_ok(entropy):
        raise ActionError(f"'entropy' must be {witnessed.ENTROPY_BYTES} random bytes in base64url, no padding.")
    known = ledger(campaign)
    row = known.row(seq)
    if row is None:
        raise NotFound(f"#{seq} is not a roll waiting for witnesses.", "not_pending")
    # Who may contribute before what became of the roll: a member who is not its witness learns nothing
    # of its state (whether a roll sealed from her was decided, and in which event).
    if membership.user_id not in row.witnesses:
        raise Forbidden(f"You are not one of roll #{seq}'s witnesses (they are the members online when it was sent).",
                        "not_a_witness")
    if row.resolved_seq is not None:
        raise Resolved(f"Roll #{seq} was decided in #{row.resolved_seq}: contributions are closed.")
    if membership.user_id in known.came(seq):
        raise Conflict(f"You already contributed to roll #{seq}.", "already_witnessed")
    return Draft(witnessed.CONTRIBUTION, {"roll": seq})
