"""The health track house rule, for systems whose texts have none (WYRM, MdT).

Off unless the campaign turns it on (setting ``health.enabled``): the texts
define no hit points, so a track is the group's choice, not the game's. The
track has ``boxes`` (each system says how many, from its settings and the
sheet); the GM marks harm and heals it. The state keeps ``harm`` (marked
boxes, 0 when absent); filling every box takes the character out.
"""

from __future__ import annotations

from typing import Callable

from .base import DiceSource, Event, RuleError
from .declare import ActionSpec, Integer, Text, action

MAX_HARM_STEP = 30
MAX_TEXT = 200

FIELDS = {
    "amount": Integer(1, MAX_HARM_STEP, label="Boxes"),
    "reason": Text(MAX_TEXT, optional=True, label="Reason"),
}


def track(state: dict, boxes: Callable[[dict], int]) -> dict:
    """``{"boxes", "harm", "left", "taken_out"}``; :class:`RuleError` if the campaign has no track."""
    health = state["sheet"]["options"].get("health", {})
    if not health.get("enabled"):
        raise RuleError("This campaign plays without a health track (a house rule the GM can turn on in the "
                        "campaign's settings).", "no_health_track")
    total = max(1, boxes(state))
    harm = min(state.get("harm", 0), total)
    return {"boxes": total, "harm": harm, "left": total - harm, "taken_out": harm >= total}


def harm_action(amount: int, reason: str) -> dict:
    """The GM action that marks a roll's damage on the track (a system's ``Damage.action``), at most
    one step's worth."""
    return {"type": "mark_harm", "amount": min(amount, MAX_HARM_STEP), "reason": reason}


def actions(boxes: Callable[[dict], int]) -> tuple[ActionSpec, ActionSpec]:
    """The two GM actions of a system's track, ``boxes(state)`` giving its size."""

    @action("mark_harm", title="Mark harm", by="gm", emits=("harm_marked",), fields=FIELDS,
            help="Mark boxes of the health track (a house rule); filling every box takes the character out.")
    def mark_harm(state: dict, action: dict, dice: DiceSource) -> list[Event]:
        """GM: mark ``amount`` boxes of harm (a hit, a fall); more than the free boxes fills the track."""
        now = track(state, boxes)
        amount = action["amount"]
        if now["taken_out"]:
            raise RuleError("Every box of the track is already marked.")
        after = min(now["boxes"], now["harm"] + amount)
        return [Event("harm_marked", {"amount": amount, "marked": after - now["harm"], "boxes": now["boxes"],
                                      "harm_after": after, "taken_out": after >= now["boxes"],
                                      "reason": action["reason"] or ""})]

    @action("heal_harm", title="Heal harm", by="gm", emits=("harm_healed",), fields=FIELDS,
            help="Clear boxes of the health track (rest, first aid, magic).")
    def heal_harm(state: dict, action: dict, dice: DiceSource) -> list[Event]:
        """GM: heal ``amount`` boxes (rest, first aid, magic)."""
        now = track(state, boxes)
        amount = action["amount"]
        if not now["harm"]:
            raise RuleError("There is no harm to heal.")
        after = max(0, now["harm"] - amount)
        return [Event("harm_healed", {"amount": amount, "healed": now["harm"] - after, "boxes": now["boxes"],
                                      "harm_after": after, "taken_out": False, "reason": action["reason"] or ""})]

    return mark_harm, heal_harm
