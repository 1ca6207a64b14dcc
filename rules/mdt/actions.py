"""Mundo das Trevas Lite: one pure function per action, ``(state, action, dice) -> [Event]``.

Every rolling action first *plans* (validates the action against the state,
works out the pools and the exact odds) and only then rolls, so the odds in
the event are the ones shown before the roll and ``preview`` shares the code.

Dice order: the character's pool, die by die, then (opposed tests and contest
rounds) the opponent's pool. A pool of 0 dice or fewer rolls one Luck die.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any, Callable

from .. import health
from ..base import DiceSource, Event, RuleError, SheetError, odds_json, require_int
from . import odds as O
from .settings import health_boxes
from .sheet import (
    ATTRIBUTE_MAX,
    ATTRIBUTES,
    MAX_SPECIALIZATIONS,
    SPECIALIZATION_MAX,
    clean_specialization_name,
    find_specialization,
)

MAX_MODIFIER = 10
MAX_PROJECTS = 10
MAX_EARNED = 1_000_000  # a sanity cap so points stay small numbers
MAX_TEXT = 200


# ---------------------------------------------------------------- validation helpers

def _text(action: dict, key: str, max_len: int = MAX_TEXT, required: bool = False) -> str:
    value = action.get(key)
    if value is None and not required:
        return ""
    if not isinstance(value, str) or (required and not value.strip()):
        raise RuleError(f"'{key}' must be text of 1 to {max_len} characters.", "invalid")
    value = value.strip()
    if len(value) > max_len:
        raise RuleError(f"'{key}' must be at most {max_len} characters.", "invalid")
    return value


def _bool(action: dict, key: str, default: bool = False) -> bool:
    value = action.get(key, default)
    if not isinstance(value, bool):
        raise RuleError(f"'{key}' must be true or false.", "invalid")
    return value


def _modifier(action: dict, key: str = "modifier") -> int:
    return require_int(action, key, -MAX_MODIFIER, MAX_MODIFIER, default=0)


def _attribute(action: dict) -> str:
    value = action.get("attribute")
    key = value.strip().casefold() if isinstance(value, str) else None
    if key not in ATTRIBUTES:
        raise RuleError(f"'attribute' must be one of: {', '.join(ATTRIBUTES)}.", "invalid")
    return key


def _specialization(state: dict, action: dict) -> str | None:
    """The sheet's name of the action's specialization, or None if none is used."""
    value = action.get("specialization")
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise RuleError("'specialization' must be the name of one of the character's specializations.", "invalid")
    known = state["sheet"]["specializations"]
    name = find_specialization(known, value)
    if name is None:
        listed = ", ".join(known) or "none"
        raise RuleError(f"The character has no specialization '{value.strip()[:40]}' (they have: {listed}).")
    return name


def _pool(state: dict, attribute: str, specialization: str | None, *modifiers: int) -> dict:
    """1 + ATTRIBUTE + SPECIALIZATION + MODIFIERS, with each part recorded."""
    sheet = state["sheet"]
    parts = {
        "attribute": attribute,
        "attribute_rating": sheet["attributes"][attribute],
        "specialization": specialization,
        "specialization_rating": sheet["specializations"][specialization] if specialization else 0,
        "modifier": sum(modifiers),
    }
    parts["pool"] = 1 + parts["attribute_rating"] + parts["specialization_rating"] + parts["modifier"]
    return parts


def _check_pool(pool: int, whose: str = "A pool") -> int:
    if pool > O.MAX_POOL:
        raise RuleError(f"{whose} may have at most {O.MAX_POOL} dice, not {pool}.", "invalid")
    return pool


def _options(state: dict) -> dict:
    return state["sheet"]["options"]


def _contest(state: dict) -> dict:
    if not state.get("contest"):
        raise RuleError("There is no contest running. The Storyteller starts one with start_contest.")
    return state["contest"]


def _project(state: dict, action: dict) -> dict:
    value = action.get("project")
    if not isinstance(value, str) or not value.strip():
        raise RuleError("'project' must be the name of one of the character's projects.", "invalid")
    for name, project in state["projects"].items():
        if name.casefold() == value.strip().casefold():
            return project
    listed = ", ".join(state["projects"]) or "none"
    raise RuleError(f"The character has no project '{value.strip()[:60]}' (projects: {listed}).")


# ---------------------------------------------------------------- rolling

def roll_pool(dice: DiceSource, pool: int, options: dict) -> dict:
    """Roll a pool (or one Luck die if ``pool <= 0``) and count successes.

    Returns ``{"pool", "luck_test", "dice": [{"face", "successes"}], "successes",
    "dramatic_failure"}``; a Dramatic Failure is no successes and any 1.
    """
    luck = pool <= 0
    faces = [dice.roll(10) for _ in range(1 if luck else pool)]
    rolled = []
    for face in faces:
        if luck:
            got = options["luck_ten_successes"] if face == 10 else 0
        else:
            got = 2 if face == 10 else 1 if face >= 7 else 0
        rolled.append({"face": face, "successes": got})
    total = sum(d["successes"] for d in rolled)
    can_fail_dramatically = options["luck_dramatic_failure"] or not luck
    return {
        "pool": pool,
        "luck_test": luck,
        "dice": rolled,
        "successes": total,
        "dramatic_failure": total == 0 and 1 in faces and can_fail_dramatically,
    }


# ---------------------------------------------------------------- plans (validation + odds)

def _plan_test(state: dict, action: dict) -> tuple[dict, dict]:
    parts = _pool(state, _attribute(action), _specialization(state, action), _modifier(action))
    difficulty = O.require_difficulty(action)
    parts.update(difficulty=difficulty, difficulty_name=O.DIFFICULTY_NAMES[difficulty][0],
                 difficulty_label=O.DIFFICULTY_NAMES[difficulty][1],
                 exceptional_at=difficulty + _options(state)["exceptional_margin"])
    odds = O.odds_of_test(parts["pool"], difficulty, _options(state))
    if _options(state).get("consequences_band") and difficulty > 1:
        # Setting consequences_band (docs/rules.md MdT 26): one success already succeeds, at a cost
        # below the difficulty. "consequences" is part of "success", as "exceptional" is.
        at_least_one = O.odds_of_test(parts["pool"], 1, _options(state))["success"]
        odds = {**odds, "success": at_least_one, "failure": 1 - at_least_one,
                "consequences": at_least_one - odds["success"]}
    return parts, odds


def _plan_opposed(state: dict, action: dict) -> tuple[dict, dict]:
    parts = _pool(state, _attribute(action), _specialization(state, action), _modifier(action))
    vs_pool = require_int(action, "vs_pool", -O.MAX_POOL, O.MAX_POOL)
    tie_goes_to = O.require_tie_rule(action)
    parts.update(vs_pool=vs_pool, tie_goes_to=tie_goes_to, opponent=_text(action, "opponent", 100))
    return parts, O.odds_of_opposed(parts["pool"], vs_pool, tie_goes_to, _options(state))


def _plan_contest_round(state: dict, action: dict) -> tuple[dict, dict]:
    contest = _contest(state)
    round_modifier, vs_modifier = _modifier(action), _modifier(action, "vs_modifier")
    parts = _pool(state, contest["attribute"], contest["specialization"], contest["modifier"], round_modifier)
    _check_pool(parts["pool"])
    vs_pool = _check_pool(contest["vs_pool"] + vs_modifier, "The opponent's pool")
    parts.update(round_modifier=round_modifier, vs_pool=vs_pool, vs_modifier=vs_modifier)
    return parts, O.odds_of_contest_round(parts["pool"], vs_pool, contest["mine"], contest["theirs"],
                                          contest["target"], _options(state))


def _plan_project_roll(state: dict, action: dict) -> tuple[dict, dict]:
    project = _project(state, action)
    roll_modifier = _modifier(action)
    parts = _pool(state, project["attribute"], project["specialization"], project["modifier"], roll_modifier)
    _check_pool(parts["pool"])
    parts["roll_modifier"] = roll_modifier
    return parts, O.odds_of_project_roll(parts["pool"], project["progress"], project["target"], _options(state))


# ---------------------------------------------------------------- actions

def take_test(state: dict, action: dict, dice: DiceSource) -> list[Event]:
    """A test: roll the pool, count successes against the difficulty (1..3)."""
    parts, odds = _plan_test(state, action)
    roll = roll_pool(dice, parts["pool"], _options(state))
    success = roll["successes"] >= parts["difficulty"]
    exceptional = roll["successes"] >= parts["exceptional_at"]
    dramatic = roll["dramatic_failure"]
    consequences = bool(_options(state).get("consequences_band")) and not success and roll["successes"] >= 1
    outcome = "exceptional" if exceptional else "success" if success else "consequences" if consequences else \
        "dramatic_failure" if dramatic else "failure"
    payload = {**parts, **roll, "outcome": outcome, "success": success or consequences, "exceptional": exceptional,
               "odds": odds_json(odds)}
    if _options(state).get("consequences_band"):
        payload["consequences"] = consequences
    return [Event("test", payload)]


def take_opposed_test(state: dict, action: dict, dice: DiceSource) -> list[Event]:
    """Both sides roll once; more successes wins (ties per ``tie_goes_to``)."""
    parts, odds = _plan_opposed(state, action)
    roll = roll_pool(dice, parts["pool"], _options(state))
    opponent_roll = roll_pool(dice, parts["vs_pool"], _options(state))
    mine, theirs = roll["successes"], opponent_roll["successes"]
    if mine == theirs and parts["tie_goes_to"] != "none":
        outcome = "win" if parts["tie_goes_to"] == "character" else "loss"
    else:
        outcome = "win" if mine > theirs else "loss" if mine < theirs else "tie"
    return [Event("opposed_test", {
        **parts, "roll": roll, "opponent_roll": opponent_roll, "outcome": outcome,
        "success": outcome == "win", "dramatic_failure": roll["dramatic_failure"],
        "odds": odds_json(odds),
    })]


def start_contest(state: dict, action: dict, dice: DiceSource) -> list[Event]:
    """(Storyteller) Start a race: the first side to ``target`` successes wins."""
    if state.get("contest"):
        raise RuleError("A contest is already running; finish it or end it with end_contest first.")
    attribute, specialization = _attribute(action), _specialization(state, action)
    modifier = _modifier(action)
    _check_pool(_pool(state, attribute, specialization, modifier)["pool"])
    return [Event("start_contest", {
        "label": _text(action, "label", 100),
        "attribute": attribute,
        "specialization": specialization,
        "modifier": modifier,
        "vs_pool": _check_pool(require_int(action, "vs_pool", -O.MAX_POOL, O.MAX_POOL), "The opponent's pool"),
        "target": require_int(action, "target", 1, O.MAX_CONTEST_TARGET),
        "mine": 0,
        "theirs": 0,
        "round": 0,
    })]


def contest_round(state: dict, action: dict, dice: DiceSource) -> list[Event]:
    """One round of the running race; successes accumulate toward the target."""
    contest = _contest(state)
    parts, odds = _plan_contest_round(state, action)
    roll = roll_pool(dice, parts["pool"], _options(state))
    opponent_roll = roll_pool(dice, parts["vs_pool"], _options(state))
    mine = contest["mine"] + roll["successes"]
    theirs = contest["theirs"] + opponent_roll["successes"]
    outcome = O.race_outcome(mine, theirs, contest["target"])
    return [Event("contest_round", {
        **parts, "label": contest["label"], "round": contest["round"] + 1, "target": contest["target"],
        "carried_in": {"mine": contest["mine"], "theirs": contest["theirs"]},
        "roll": roll, "opponent_roll": opponent_roll, "mine": mine, "theirs": theirs,
        "outcome": outcome, "finished": outcome != "continue", "success": outcome == "win",
        "dramatic_failure": roll["dramatic_failure"], "odds": odds_json(odds),
    })]


def end_contest(state: dict, action: dict, dice: DiceSource) -> list[Event]:
    """Abandon the running contest without a winner (either side concedes, the scene moves on)."""
    contest = _contest(state)
    return [Event("end_contest", {
        "label": contest["label"], "round": contest["round"], "mine": contest["mine"],
        "theirs": contest["theirs"], "target": contest["target"], "reason": _text(action, "reason"),
    })]


def start_project(state: dict, action: dict, dice: DiceSource) -> list[Event]:
    """(Storyteller) Start a long task that completes at ``target`` accumulated successes."""
    name = _text(action, "name", 60, required=True)
    if any(known.casefold() == name.casefold() for known in state["projects"]):
        raise RuleError(f"The character already has a project called '{name}'.")
    if len(state["projects"]) >= MAX_PROJECTS:
        raise RuleError(f"A character can run at most {MAX_PROJECTS} projects at once; finish or abandon one.")
    attribute, specialization = _attribute(action), _specialization(state, action)
    modifier = _modifier(action)
    _check_pool(_pool(state, attribute, specialization, modifier)["pool"])
    return [Event("start_project", {
        "name": name,
        "target": require_int(action, "target", 1, O.MAX_PROJECT_TARGET),
        "attribute": attribute,
        "specialization": specialization,
        "modifier": modifier,
        "interval": _text(action, "interval", 30),
        "reset_on_dramatic_failure": _bool(action, "reset_on_dramatic_failure"),
        "progress": 0,
        "rolls": 0,
    })]


def project_roll(state: dict, action: dict, dice: DiceSource) -> list[Event]:
    """One interval's test of a project; its successes add to the running total."""
    project = _project(state, action)
    parts, odds = _plan_project_roll(state, action)
    roll = roll_pool(dice, parts["pool"], _options(state))
    lost = roll["dramatic_failure"] and project["reset_on_dramatic_failure"]
    progress = 0 if lost else project["progress"] + roll["successes"]
    complete = progress >= project["target"]
    return [Event("project_roll", {
        **parts, "project": project["name"], "interval": project["interval"], "roll_number": project["rolls"] + 1,
        "target": project["target"], "progress_before": project["progress"], "roll": roll,
        "progress": progress, "lost_progress": lost, "complete": complete,
        "outcome": "complete" if complete else "continue",
        "dramatic_failure": roll["dramatic_failure"], "odds": odds_json(odds),
    })]


def abandon_project(state: dict, action: dict, dice: DiceSource) -> list[Event]:
    """Drop a project unfinished."""
    project = _project(state, action)
    return [Event("abandon_project", {
        "project": project["name"], "progress": project["progress"], "target": project["target"],
        "reason": _text(action, "reason"),
    })]


def say_yes(state: dict, action: dict, dice: DiceSource) -> list[Event]:
    """(Storyteller) "Diga sim": the goal simply succeeds, no dice."""
    return [Event("say_yes", {"goal": _text(action, "goal"), "dice": [], "outcome": "success",
                              "success": True, "odds": odds_json({"success": Fraction(1)})})]


def award_points(state: dict, action: dict, dice: DiceSource) -> list[Event]:
    """(Storyteller) Award advancement points."""
    points = require_int(action, "points", 1, 100)
    if state["points"]["earned"] + points > MAX_EARNED:
        raise RuleError(f"A character can earn at most {MAX_EARNED} points in all.")
    return [Event("award_points", {"points": points, "reason": _text(action, "reason")})]


def advance_cost(state: dict, action: dict) -> dict:
    """What ``buy_advance`` would buy: ``{kind, name, from, to, cost}``; RuleError if forbidden."""
    options = _options(state)
    sheet = state["sheet"]
    has_attribute, has_spec = "attribute" in action, "specialization" in action
    if has_attribute == has_spec:
        raise RuleError("Buy one advance at a time: give either 'attribute' or 'specialization'.", "invalid")
    if has_attribute:
        name = _attribute(action)
        now = sheet["attributes"][name]
        if now >= ATTRIBUTE_MAX:
            raise RuleError(f"{ATTRIBUTES[name]} ({name}) is already at the maximum of {ATTRIBUTE_MAX}.")
        return {"kind": "attribute", "name": name, "from": now, "to": now + 1,
                "cost": (now + 1) * options["attribute_cost"]}
    try:
        wanted = clean_specialization_name(action.get("specialization"))
    except SheetError as error:
        raise RuleError("'specialization' must be a name of 1 to 40 characters.", "invalid") from error
    name = find_specialization(sheet["specializations"], wanted) or wanted
    now = sheet["specializations"].get(name, 0)
    if now >= SPECIALIZATION_MAX:
        raise RuleError(f"The specialization '{name}' is already at the maximum of {SPECIALIZATION_MAX}.")
    if now == 0 and len(sheet["specializations"]) >= MAX_SPECIALIZATIONS:
        raise RuleError(f"A character can have at most {MAX_SPECIALIZATIONS} specializations.")
    return {"kind": "specialization", "name": name, "from": now, "to": now + 1,
            "cost": (now + 1) * options["specialization_cost"]}


def buy_advance(state: dict, action: dict, dice: DiceSource) -> list[Event]:
    """Raise an attribute or a specialization by one, paying its cost in points."""
    advance = advance_cost(state, action)
    available = state["points"]["earned"] - state["points"]["spent"]
    if advance["cost"] > available:
        raise RuleError(f"Raising {advance['name']} to {advance['to']} costs {advance['cost']} points; "
                        f"you have {available}.")
    return [Event("buy_advance", {**advance, "available_before": available,
                                  "available_after": available - advance["cost"]})]


ACTIONS: dict[str, Callable[[dict, dict, DiceSource], list[Event]]] = {
    "test": take_test,
    "opposed_test": take_opposed_test,
    "start_contest": start_contest,
    "contest_round": contest_round,
    "end_contest": end_contest,
    "start_project": start_project,
    "project_roll": project_roll,
    "abandon_project": abandon_project,
    "say_yes": say_yes,
    "award_points": award_points,
    "buy_advance": buy_advance,
}

# The health track house rule (off unless the campaign turns it on; rules/health.py).
ACTIONS.update({spec.type: spec for spec in health.actions(health_boxes)})

GM_ACTIONS = frozenset({"mark_harm", "heal_harm"}) | frozenset({"start_contest", "start_project", "say_yes", "award_points"})

_PLANS = {
    "test": _plan_test,
    "opposed_test": _plan_opposed,
    "contest_round": _plan_contest_round,
    "project_roll": _plan_project_roll,
}


def plan_odds(state: dict, action: Any) -> dict:
    """Exact odds of ``action`` for this character before rolling; {} for actions without dice."""
    if not isinstance(action, dict):
        raise RuleError("An action must be a JSON object.", "invalid")
    kind = action.get("type")
    if not isinstance(kind, str):
        kind = None
    if kind in _PLANS:
        return _PLANS[kind](state, action)[1]
    if kind == "say_yes":
        return {"success": Fraction(1)}
    if kind in ACTIONS:
        return {}
    raise RuleError(f"Mundo das Trevas Lite has no action '{kind}'.", "unknown_action")
