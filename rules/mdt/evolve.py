"""Mundo das Trevas Lite: apply one stored event to a character's state.

``evolve`` reads only the event's payload (never re-rolls or recomputes rules)
and changes the state it is given (``rules.base.Evolver`` copies it for callers
that need the old one); what it stores from a payload is copied. Events that change
nothing here (``test``, ``opposed_test``, ``say_yes``, unknown types) return
the state unchanged.
"""

from __future__ import annotations

from typing import Callable

from ..base import copy_json, evolver
from ..declare import EventBook, EventSpec
from .. import common


def _buy_advance(state: dict, p: dict) -> dict:
    state["points"]["spent"] += p["cost"]
    table = "attributes" if p["kind"] == "attribute" else "specializations"
    state["sheet"][table][p["name"]] = p["to"]
    return state


def _start_contest(state: dict, p: dict) -> dict:
    keys = ("label", "attribute", "specialization", "modifier", "vs_pool", "target", "mine", "theirs", "round")
    state["contest"] = copy_json({key: p[key] for key in keys})
    if p.get("opponent_name"):  # who the other side is, in words (a race started before it was recorded: none)
        state["contest"]["opponent_name"] = p["opponent_name"]
    if p.get("opponent") is not None:  # a race against another character: each round is read by both
        state["contest"]["opponent"] = p["opponent"]
    return state


def _contest_round(state: dict, p: dict) -> dict:
    if p["finished"] or not state.get("contest"):
        state["contest"] = None
    else:
        state["contest"].update(mine=p["mine"], theirs=p["theirs"], round=p["round"])
    return state


def _end_contest(state: dict, p: dict) -> dict:
    state["contest"] = None
    return state


def _start_project(state: dict, p: dict) -> dict:
    keys = ("name", "target", "attribute", "specialization", "modifier", "interval",
            "reset_on_dramatic_failure", "progress", "rolls")
    state["projects"][p["name"]] = copy_json({key: p[key] for key in keys})
    return state


def _project_roll(state: dict, p: dict) -> dict:
    if p["complete"]:
        # A finished project leaves the sheet; its last event records the result.
        state["projects"].pop(p["project"], None)
    elif p["project"] in state["projects"]:
        state["projects"][p["project"]].update(progress=p["progress"], rolls=p["roll_number"])
    return state


def _abandon_project(state: dict, p: dict) -> dict:
    state["projects"].pop(p["project"], None)
    return state


def _scene_ended(state: dict, p: dict) -> dict:
    # A contest is a scene's conflict: it lapses with the scene. Projects span scenes.
    state["contest"] = None
    return state


_APPLY: dict[str, Callable[[dict, dict], dict]] = {
    "points_awarded": common.earn_points,
    "advance_bought": _buy_advance,
    "contest_started": _start_contest,
    "contest_round_rolled": _contest_round,
    "contest_ended": _end_contest,
    "project_started": _start_project,
    "project_rolled": _project_roll,
    "project_abandoned": _abandon_project,
    "scene_ended": _scene_ended,
}

# Every event MdT records, once. Logs from before the past-tense names stored the
# action's name (``test``, ``start_contest``, ...): those rows keep it and read as today's.
# A test's pool in a sentence: the attribute, its specialization and the modifier ("Wits 3 + Occult 1 −1").
POOL = ("{attribute:cap} {attribute_rating}[ + {specialization} {specialization_rating}{specialization:if}]"
        "[ {modifier:signed}]")

EVENTS = EventBook([
    EventSpec("test_rolled", POOL + ": [Luck Test (1 die){luck_test:if}|{pool|die|dice}] "
              "vs {difficulty_name:cap} ({difficulty}): {successes|success|successes}", tail=", {outcome:words}",
              formerly=("test",),
        payload={"attribute": "str", "attribute_rating": "int", "dice": "list", "difficulty": "int",
                 "difficulty_label": "str", "difficulty_name": "str", "dramatic_failure": "bool",
                 "exceptional": "bool", "exceptional_at": "int", "luck_test": "bool", "modifier": "int",
                 "odds": "dict", "outcome": "str", "pool": "int", "specialization": "str?",
                 "specialization_rating": "int", "success": "bool", "successes": "int", "consequences": "bool?",
                 "conditions": "list?"}),
    EventSpec("opposed_test_rolled", "opposed " + POOL + " ({pool|die|dice}) vs [{opponent}|opponent] "
              "({vs_pool|die|dice}): {roll.successes} vs {opponent_roll.successes}",
              tail=", {outcome:words}[, dramatic failure{dramatic_failure:if}]", formerly=("opposed_test",),
        payload={"attribute": "str", "attribute_rating": "int", "dramatic_failure": "bool", "modifier": "int",
                 "odds": "dict", "opponent": "str", "opponent_roll": "dict", "outcome": "str", "pool": "int",
                 "roll": "dict", "specialization": "str?", "specialization_rating": "int", "success": "bool",
                 "tie_goes_to": "str", "vs_pool": "int", "conditions": "list?", "vs_conditions": "int?"}),
    # Against another character (``opponent``, its id) the race also records this side's pool and the
    # opponent's attribute and specialization, read from its sheet (rules/contests.py).
    EventSpec("contest_started", "race started: [{label}|contest], first to {target} successes ({attribute:cap} vs "
              "[{opponent_name}, ]{vs_pool|die|dice})", formerly=("start_contest",),
        payload={"attribute": "str", "label": "str", "mine": "int", "modifier": "int", "opponent_name": "str",
                 "round": "int", "specialization": "str?", "target": "int", "theirs": "int", "vs_pool": "int",
                 "opponent": "int?", "pool": "int?", "vs_attribute": "str?", "vs_specialization": "str?"}),
    EventSpec("contest_round_rolled", "[{label}|race], round {round}: +{roll.successes} vs +{opponent_roll.successes} → "
              "{mine}–{theirs} of {target}", tail=", {outcome:words}", formerly=("contest_round",),
        payload={"attribute": "str", "attribute_rating": "int", "carried_in": "dict", "dramatic_failure": "bool",
                 "finished": "bool", "label": "str", "mine": "int", "modifier": "int", "odds": "dict",
                 "opponent_name": "str", "opponent_roll": "dict", "outcome": "str", "pool": "int", "roll": "dict",
                 "round": "int", "round_modifier": "int", "specialization": "str?", "specialization_rating": "int",
                 "success": "bool", "target": "int", "theirs": "int", "vs_modifier": "int", "vs_pool": "int"}),
    EventSpec("contest_ended", "the race [“{label}” ]ended at {mine}–{theirs} of {target}", formerly=("end_contest",),
        payload={"label": "str", "mine": "int", "reason": "str", "round": "int", "target": "int", "theirs": "int"}),
    EventSpec("project_started", "project started: {name}, {target} successes "
              "({attribute:cap}[, one roll per {interval}])",
              formerly=("start_project",),
        payload={"attribute": "str", "interval": "str", "modifier": "int", "name": "str", "progress": "int",
                 "reset_on_dramatic_failure": "bool", "rolls": "int", "specialization": "str?", "target": "int"}),
    EventSpec("project_rolled", "{project}, roll {roll_number}: {roll.successes|success|successes} → "
              "{progress}/{target}",
              tail=", {outcome:words}", formerly=("project_roll",),
        payload={"attribute": "str", "attribute_rating": "int", "complete": "bool", "dramatic_failure": "bool",
                 "interval": "str", "lost_progress": "bool", "modifier": "int", "odds": "dict", "outcome": "str",
                 "pool": "int", "progress": "int", "progress_before": "int", "project": "str", "roll": "dict",
                 "roll_modifier": "int", "roll_number": "int", "specialization": "str?",
                 "specialization_rating": "int", "target": "int"}),
    EventSpec("project_abandoned", "abandoned {project} at {progress}/{target}", formerly=("abandon_project",),
        payload={"progress": "int", "project": "str", "reason": "str", "target": "int"}),
    EventSpec("yes_said", "the GM says yes[: {goal}]", formerly=("say_yes",),
        payload={"dice": "list", "goal": "str", "odds": "dict", "outcome": "str", "success": "bool"}),
    EventSpec("points_awarded", "earned {points|point|points}", formerly=("award_points",),
        payload={"points": "int", "reason": "str"}),
    EventSpec("advance_bought", "raised [{name:cap}{kind=attribute}|{name}] from {from} to {to} for {cost|point|points}",
              formerly=("buy_advance",),
        payload={"available_after": "int", "available_before": "int", "cost": "int", "from": "int", "kind": "str",
                 "name": "str", "to": "int"}),
    *common.EVENTS,
])

# The state after an event; unknown types (generic rolls, ...) change nothing.
evolve = evolver(common.handlers(_APPLY), EVENTS)
