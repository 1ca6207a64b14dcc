"""Damage that reaches a track: the GM applies a roll's damage to a character in one command
(``apply_damage``: ``{"character": target, "roll": seq}``), stored as the target's own event of its
system (WYRM and MdT: ``harm_marked`` on the health track; Tale: ``damage_taken``, to spread) with
``"applies": seq``, the roll it came from.

Which rolls deal damage, how much, and the GM action that applies it are the system's ``damage``
hook (``rules.base.Damage``; docs/rules.md, "Damage that reaches a track"): WYRM's damage roll its
total; an MdT test or opposed test its successes (the World of Darkness family's reading); a generic
dice roll its total, in every system with a track. The decision is the system's own GM action
(``mark_harm``, ``take_damage``), so it is refused, sealed and stored as that action is; a roll
applies at most once to each character.
"""

from __future__ import annotations

from ..eventlog import Draft
from ..models import VISIBILITY_GM, VISIBILITY_PUBLIC, Campaign, Character, Event, Membership
from .access import access_character
from .declared import character_id, platform_action, seq_field
from ..errors import ActionError, Refused
from ..visibility import readers
from .log_entries import check_seq
from .kept import Readers
from .rules_actions import decide_rules_action, naming_source, rules_readers

APPLY = "apply_damage"


def as_rules_action(campaign: Campaign, membership: Membership, action: dict) -> tuple[dict, int]:
    """The system's own action that applies the roll ``action["roll"]`` to ``action["character"]``,
    and the roll's seq (which the stored event names as ``applies``)."""
    target = access_character(membership, action.get("character"))
    roll = check_seq(campaign, {"seq": action.get("roll")})
    damage = campaign.rules.damage  # the system's hook: which rolls deal damage, and its own action
    dealt = damage.rolls if damage is not None else {}
    if roll.type not in dealt:
        kinds = ", ".join(sorted(dealt)) or "none"
        raise ActionError(f"Event {roll.seq} is not a roll that deals damage here ({kinds}).")
    if Event.objects.filter(campaign=campaign, type="event_voided", payload__seq=roll.seq).exists():
        raise Refused(f"Roll #{roll.seq} was voided: there is nothing to apply.")
    applied = list(Event.objects.filter(campaign=campaign, character=target, payload__applies=roll.seq)
                   .order_by("seq").values_list("seq", flat=True))
    voided = set(Event.objects.filter(campaign=campaign, type="event_voided", payload__seq__in=applied)
                 .values_list("payload__seq", flat=True)) if applied else set()
    done = next((seq for seq in applied if seq not in voided), None)  # a voided application can be redone
    if done is not None:
        raise Refused(f"Roll #{roll.seq} was already applied to {target.name} in #{done}.")
    amount = roll.payload.get(dealt[roll.type])
    if isinstance(amount, bool) or not isinstance(amount, int) or amount < 1:
        raise Refused(f"Roll #{roll.seq} dealt no damage: there is nothing to apply.")
    rules_action = damage.action(amount, f"damage from #{roll.seq}")
    # A hidden roll's total is not the table's to read through what it did: applied, it stays the GM's
    # unless she says otherwise (or reveals the roll first).
    shown = roll.visibility == VISIBILITY_PUBLIC or readers.revealed(roll)
    visibility = action.get("visibility") or (VISIBILITY_PUBLIC if shown else VISIBILITY_GM)
    return {**rules_action, "character": target.id, "visibility": visibility}, roll.seq


def damage_readers(campaign: Campaign, membership: Membership, action: dict, character: Character | None
                   ) -> Readers:
    """Read as the system's own action that applies it is."""
    return rules_readers(campaign, membership, as_rules_action(campaign, membership, action)[0], character)[0]


@platform_action(
    APPLY, title="Apply a roll's damage", by="gm", gm="apply damage",
    help="Stored as the system's own GM action (mark_harm, take_damage) on the character, naming the roll "
         "it applies (`applies`); which rolls deal damage is the system's (docs/rules.md).",
    fields={"character": character_id(label="Target"), "roll": seq_field("Roll (its seq)")},
    readers=damage_readers,
)
def decide_apply_damage(campaign: Campaign, membership: Membership, action: dict, dice, character: Character | None
                        ) -> list[Draft]:
    rules_action, seq = as_rules_action(campaign, membership, action)
    return naming_source(decide_rules_action(campaign, membership, rules_action, dice, character), "applies", seq)
