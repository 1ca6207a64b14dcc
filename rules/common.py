"""Events every system folds the same way: the campaign's settings, the GM's
adjustments of a sheet, the health track house rule, and points awarded.

Each system's ``evolve`` includes :data:`HANDLERS` (and maps its own
``points_awarded``, declared in its own words, to :func:`earn_points`); the decisions that make
these events are in ``campaign/`` (settings, adjustments: they are the
platform's, not a rule text's) and in :mod:`rules.health` (the track).
"""

from __future__ import annotations

import functools
from typing import Any, Mapping

from . import conditions
from .base import RuleError, copy_json
from .declare import EventSpec
from .options import CONFIGURED, apply_configured

ADJUSTED = "sheet_adjusted"
MAX_ADJUSTMENTS = 20


def _get(state: Mapping, path: str) -> Any:
    value: Any = state
    for part in path.split("."):
        if isinstance(value, list):
            if not part.isdigit() or int(part) >= len(value):
                raise KeyError(path)
            value = value[int(part)]
        elif isinstance(value, dict) and part in value:
            value = value[part]
        else:
            raise KeyError(path)
    return value


def _set(state: dict, path: str, value: Any) -> None:
    *parents, last = path.split(".")
    target: Any = state
    for part in parents:
        target = target[int(part)] if isinstance(target, list) else target[part]
    if isinstance(target, list):
        target[int(last)] = copy_json(value)
    else:
        target[last] = copy_json(value)


def plan_adjustment(state: dict, changes: Any) -> list[dict]:
    """``[{"path", "from", "to"}]`` for a GM's ``{"path": new value}`` on a character's state.

    A path names a number, a true/false or a piece of text already in the
    state (``"fate"``, ``"sheet.skills.Strike"``, ``"attributes.warrior"``);
    the new value must be of the same kind. The system then re-checks the
    adjusted sheet (``campaign`` calls ``validate_sheet`` on it), so an
    adjustment can leave creation limits behind but never the sheet's ranges.
    Raises :class:`RuleError`.
    """
    if not isinstance(changes, dict) or not 1 <= len(changes) <= MAX_ADJUSTMENTS:
        raise RuleError(f"'changes' must be an object of 1 to {MAX_ADJUSTMENTS} {{\"path\": value}} pairs, "
                        "e.g. {\"sheet.skills.Strike\": 3}.", "invalid")
    planned = []
    for path, value in changes.items():
        if not isinstance(path, str) or not 1 <= len(path) <= 120:
            raise RuleError("Each path in 'changes' must be text of 1 to 120 characters.", "invalid")
        try:
            old = _get(state, path)
        except (KeyError, ValueError):
            raise RuleError(f"'{path[:60]}' is not a value on this character's sheet.", "invalid") from None
        kinds = (bool,) if isinstance(old, bool) else (int,) if isinstance(old, int) else (str,) \
            if isinstance(old, str) else None
        if kinds is None:
            raise RuleError(f"'{path[:60]}' is not a single number, true/false or text: adjust what is inside it.",
                            "invalid")
        if not isinstance(value, kinds) or (kinds == (int,) and isinstance(value, bool)):
            raise RuleError(f"'{path[:60]}' holds {type(old).__name__ if kinds != (str,) else 'text'}: give the "
                            "same kind of value.", "invalid")
        if isinstance(value, int) and not isinstance(value, bool) and abs(value) > 1_000_000:
            raise RuleError(f"'{path[:60]}' must be within -1000000..1000000.", "invalid")
        if isinstance(value, str) and len(value) > 200:
            raise RuleError(f"'{path[:60]}' must be at most 200 characters.", "invalid")
        if value != old:
            planned.append({"path": path, "from": copy_json(old), "to": copy_json(value)})
    if not planned:
        raise RuleError("Those are already the character's values: nothing to adjust.", "unchanged")
    return planned


def adjusted(state: dict, changes: list[dict]) -> dict:
    """A copy of ``state`` with the planned ``changes`` applied (to re-check it before storing)."""
    state = copy_json(state)
    _adjust(state, {"changes": changes})
    return state


def _adjust(state: dict, p: Mapping) -> None:
    for change in p["changes"]:
        _set(state, change["path"], change["to"])


def _harm(state: dict, p: Mapping) -> None:
    state["harm"] = p["harm_after"]
    # What the last blow marked, which WYRM's "ignore an attack that would have killed the character"
    # clears (rules/wyrm/actions.py approve_fate); a heal settles it.
    state["last_harm"] = p.get("marked", 0)


def earn_points(state: dict, p: Mapping) -> None:
    """``points_awarded`` in every system: the points (XP, advancement points...) join those earned.

    Each system declares the event in its own words; what it does to the state is the same."""
    state["points"]["earned"] += p["points"]


def _fight(state: dict, p: Mapping) -> None:
    """A side's part of a fight of several sides (rules/fights.py): its numbers in the fight, ``None``
    once it ends (Tale's end also leaves damage to spread: rules/tale/evolve.py)."""
    state["fight"] = copy_json(p.get("fight"))


def _fight_round(state: dict, p: Mapping) -> None:
    conditions.round_over("fight_round_rolled", state, p)  # a round of its fight has passed
    _fight(state, p)


HANDLERS = {
    CONFIGURED: apply_configured,
    "fight_started": _fight,
    "fight_round_rolled": _fight_round,
    "fight_ended": _fight,
    ADJUSTED: _adjust,
    "harm_marked": _harm,
    "harm_healed": _harm,
    conditions.APPLIED: conditions.applied,
    conditions.REMOVED: conditions.removed,
    "turn_advanced": functools.partial(conditions.round_over, "turn_advanced"),
    "encounter_ended": functools.partial(conditions.round_over, "encounter_ended"),
    **{kind: conditions.scene_over for kind in conditions.SCENE_OVER},
}


def handlers(own: Mapping) -> dict:
    """A system's handlers with the ones every system shares; where both handle an event (a scene's
    end: the system's own scene-long things and the conditions; a contest's round: the system's own and
    the conditions' count), both run, the system's first."""
    shared = {**HANDLERS, **{kind: functools.partial(conditions.round_over, kind)
                             for kind in conditions.CONTEST_ROUNDS if kind in own}}
    merged = {**own, **shared}
    for kind in set(own) & set(shared):
        def both(state, p, first=own[kind], then=shared[kind]):
            state = first(state, p) or state
            return then(state, p) or state
        merged[kind] = both
    return merged


# Declared once here, included in every system's EventBook (rules/declare.py).
EVENTS = (
    EventSpec(CONFIGURED, "changed the rules settings: {changed:changes}",
        payload={"changed": "dict", "options": "dict", "reason": "str", "witnessed_rolls": "str?"}),
    EventSpec(ADJUSTED, "adjusted the sheet: {changes:changes}",
        payload={"changes": "list", "reason": "str"}),
    EventSpec("harm_marked", "marked {marked} boxes of harm ({harm_after} of {boxes})",
        payload={"amount": "int", "boxes": "int", "harm_after": "int", "marked": "int", "reason": "str",
                 "taken_out": "bool"}),
    EventSpec("harm_healed", "healed {healed} boxes of harm ({harm_after} of {boxes})",
        payload={"amount": "int", "boxes": "int", "harm_after": "int", "healed": "int", "reason": "str",
                 "taken_out": "bool"}),
    EventSpec("fight_started", "started the fight “{label}”",
        payload={"fight": "dict", "label": "str"}),
    EventSpec("fight_choice_made", "chose for round {round} of the fight",
        payload={"choice": "dict", "fight": "int", "round": "int"}),
    EventSpec("fight_round_rolled", "{label}, round {round}",
        payload={"choices": "dict", "entries": "dict", "fight": "int", "kind": "str", "label": "str",
                 "result": "dict", "round": "int"}),
    EventSpec("fight_ended", "the fight “{label}” ended after {rounds|round|rounds}",
        payload={"fight": "int", "label": "str", "reason": "str", "rounds": "int", "winner": "str?"}),
    EventSpec(conditions.APPLIED, "is {name} {lasts}",
        payload={"duration": "str", "lasts": "str", "modifier": "int", "name": "str", "replaces": "bool",
                 "rounds": "int?"}),
    EventSpec(conditions.REMOVED, "is no longer {name}",
        payload={"name": "str"}),
)


# --- what each advance costs, for the forms -------------------------------------------------------

def advance_price(advance_cost, state: Mapping, action: Mapping) -> dict:
    """What buying ``action`` (a declared-valid ``buy_advance``) would cost now, by the system's own
    ``advance_cost`` (the function ``buy_advance`` charges by): ``{"to", "cost"}``, or
    ``{"refused": why}`` when the rules forbid it whatever the points (a rating at its maximum).
    Whether the points cover it is the page's to compare: they are on the same sheet."""
    try:
        advance = advance_cost(state, action)
    except RuleError as e:
        return {"refused": e.message}
    return {"to": advance["to"], "cost": advance["cost"]}
