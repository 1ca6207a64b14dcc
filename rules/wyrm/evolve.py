"""WYRM ``evolve``: apply one stored event to a character's state.

Handlers change the state they are given (``rules.base.Evolver`` copies it
for callers that need the old one) and copy what they store from a payload.
Unknown event types (generic ``roll`` events, other systems' events) leave the
state as it is.
"""

from __future__ import annotations

from typing import Callable

from ..base import copy_json, evolver
from .. import common
from ..declare import EventBook, EventSpec


def _check(state: dict, p: dict) -> None:
    state["rolls"] = p["roll"]
    state["last_roll"] = {
        "kind": "check",
        "roll": p["roll"],
        "bonus": p["attribute_value"] + p["skill_bonus"],  # what the die is added to
        "explodes": p["explodes"],
        "dl": p["dl"],
        "ties_succeed": p["ties_succeed"],
        "dice": copy_json(p["dice"]),
        "total": p["total"],
        "success": p["success"],
        "fate_used": False,
    }


def _damage(state: dict, p: dict) -> None:
    state["rolls"] = p["roll"]
    state["last_roll"] = {
        "kind": "damage",
        "roll": p["roll"],
        "bonus": p["bonus"],
        "dice": copy_json(p["dice"]),
        "total": p["total"],
        "fate_used": False,
    }


def _fate_requested(state: dict, p: dict) -> None:
    state["pending_fate"] = {"use": p["use"], "roll": p["roll"], "die": p["die"], "detail": copy_json(p["detail"])}


def _fate_spent(state: dict, p: dict) -> None:
    state["fate"] = max(0, state["fate"] - 1)
    state["pending_fate"] = None
    if "harm_after" in p:  # an ignored killing attack: its boxes cleared
        state["harm"], state["last_harm"] = p["harm_after"], 0
    last = state["last_roll"]
    if p["use"] in ("reroll", "plus_two") and last is not None and last["roll"] == p["roll"]:
        # How many Fate points changed this roll (False before any; the campaign's fate_per_roll caps it).
        last["fate_used"] = int(last["fate_used"]) + 1
        last["total"] = p["total"]
        if "success" in p:
            last["success"] = p["success"]
        if p["use"] == "reroll":
            last["dice"] = copy_json(p["dice"])
        elif "bonus" in last:
            last["bonus"] += p["bonus"]  # a later reroll (fate_per_roll > 1) keeps the +2


def _fate_denied(state: dict, p: dict) -> None:
    state["pending_fate"] = None


def _fate_granted(state: dict, p: dict) -> None:
    state["fate"] += p["amount"]


def _advance_bought(state: dict, p: dict) -> None:
    state["points"]["spent"] += p["cost"]
    if p["advance"] == "attribute":
        state["attributes"][p["attribute"]] = p["to"]
    else:
        state["skills"].append({"name": p["skill"], "attribute": p["attribute"]})


def _scene_over(state: dict, p: dict) -> None:
    # Fate rerolls and +2 change a roll of the current scene only; an
    # unanswered request lapses with the scene.
    state["last_roll"] = None
    state["pending_fate"] = None


_APPLY: dict[str, Callable[[dict, dict], None]] = {
    "attribute_checked": _check,
    "damage_rolled": _damage,
    "fate_requested": _fate_requested,
    "fate_spent": _fate_spent,
    "fate_denied": _fate_denied,
    "fate_granted": _fate_granted,
    "points_awarded": common.earn_points,
    "advance_bought": _advance_bought,
    "scene_ended": _scene_over,
    "session_ended": _scene_over,
}


# What each use of Fate is, in a Fate event's sentence (``{use:word}``).
FATE_USES = {"use": {"reroll": "reroll the die", "plus_two": "+2 to the check",
                     "ignore_attack": "ignore a killing attack", "minor_detail": "change a minor detail"}}

# Every event WYRM records, once: its name, version and one-line description.
EVENTS = EventBook([
    EventSpec("attribute_checked", "{attribute:cap} check[ + {skills:plus}]: {die_total} + {attribute_value}"
              "[ + {skill_bonus}] = {total} vs [static {opposition.static:if}]DL {dl}[ ({dl_base} {modifier:signed})]",
              tail=", {outcome}", formerly=("attribute_check",),
        payload={"attribute": "str", "attribute_value": "int", "dice": "list", "die_total": "int", "dl": "int",
                 "dl_base": "int", "explode_rule": "str", "explodes": "bool", "modifier": "int", "odds": "dict",
                 "opposed": "bool", "opposition": "dict?", "outcome": "str", "roll": "int", "skill_bonus": "int",
                 "skills": "list", "success": "bool", "task": "str?", "ties_succeed": "bool", "total": "int",
                 "conditions": "list?"}),
    EventSpec("damage_rolled", "damage {dice_count}d6[ + {bonus}]: {die_totals:plus}[ + {bonus}]", tail=" = {total}",
              formerly=("damage_roll",),
        payload={"bonus": "int", "dice": "list", "dice_count": "int", "die_totals": "list", "explode_rule": "str",
                 "explodes": "bool", "odds": "dict", "outcome": "str", "roll": "int", "task": "str?", "total": "int"}),
    EventSpec("automatic_success_granted", "automatic success: {attribute:cap} with {skill}",
              formerly=("automatic_success",),
        payload={"attribute": "str", "attribute_value": "int", "dice": "list", "odds": "dict", "outcome": "str",
                 "skill": "str", "success": "bool", "task": "str?"}),
    EventSpec("fate_requested", "asks to spend Fate: {use:word}[ (roll #{roll}, die {die})| (roll #{roll})]",
              words=FATE_USES,
        payload={"detail": "any?", "die": "int", "fate": "int", "roll": "int", "use": "str"}),
    EventSpec("fate_spent", "[Fate reroll of roll #{roll}: total {original_total} → {total}{use=reroll}"
              "|Fate +2 on roll #{roll}: {original_total} → {total} vs DL {dl}{use=plus_two}|spent Fate to {use:word}]",
              tail="[, {outcome}{kind=check}] ({fate_left} Fate left)", words=FATE_USES,
        payload={"detail": "any?", "dice": "list", "dl": "int", "fate_left": "int", "kind": "str",
                 "new_dice": "list", "odds": "dict", "original_dice": "list", "original_outcome": "str",
                 "original_total": "int", "outcome": "str", "roll": "int", "success": "bool", "total": "int",
                 "use": "str"}),
    EventSpec("fate_denied", "GM denied the Fate request ({use:word})", words=FATE_USES,
        payload={"reason": "str?", "roll": "int", "use": "str"}),
    EventSpec("fate_granted", "was granted {amount} Fate (now {fate})",
        payload={"amount": "int", "fate": "int", "reason": "str?"}),
    EventSpec("points_awarded", "earned {points|point|points}",
        payload={"points": "int", "reason": "str?"}),
    EventSpec("advance_bought", "[raised {attribute:cap} from {from} to {to}{advance=attribute}"
              "|learned {skill} ({attribute:cap})]"
              " for {cost|point|points}",
        payload={"advance": "str", "attribute": "str", "cost": "int", "from": "int", "points_left": "int",
                 "to": "int"}),
    *common.EVENTS,
])

# The state after an event; unknown types (generic rolls, ...) change nothing.
evolve = evolver(common.handlers(_APPLY), EVENTS)
