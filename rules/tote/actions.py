"""TOTE's actions: ``fn(state, action, dice) -> [Event]``, pure, one per action.

Each action is declared above its function (``rules/declare.py``): its fields,
their ranges, who may send it and what it records. The declaration checks the
shape of every field before the function runs; the function refuses only what
depends on the hero (no such skill, no Resolve left) with a :class:`RuleError`
a player can read, rolls every die it needs from ``dice`` (in the order its
docstring gives) and returns the events; ``evolve`` applies them. The
platform's own fields (``visibility``, ``character``, ``note``,
``target_user``) and any other unknown key are ignored.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any, Mapping

from .. import common, conditions
from ..base import DiceSource, Event, RuleError, odds_json
from ..declare import Choice, Integer, Text, action, actions_by_type
from .odds import effect_score, effect_test_odds, is_critical, select_skill_die, skill_test_odds
from .sheet import (
    SKILL_MAX,
    SPEC_BONUS_MAX,
    SPECS_PER_SKILL,
    TOTEM_MAX,
    TOTEMS,
    find_name,
    grid_skills,
    show,
    skill_position,
)

TARGET_MIN, TARGET_MAX = 1, 30
MODIFIER_MAX = 10
ASPECT_PENALTY = -2
# "Each player needs only one Paragon die and up to five plain dice" (tote-basic-rules-v1.1.txt:4):
# an effect test rolls those plain dice (docs/rules.md, TOTE 21).
EFFECT_DICE_MAX = 5
EFFECT_TARGET_MAX = 30
POINTS_MAX = 100
INJURY_COUNT_MAX = 10
GRANT_MAX = 20
REASON_MAX = 500
BUBBLE_CHOICES = (
    ("auto", "the column, else the row"),
    ("column", "the column first"),
    ("row", "the row first"),
    ("none", "no bubble"),
)
NAME_MAX = 60  # a skill's or specialization's name as an action gives it

# Fields several actions share.
SKILL = Text(NAME_MAX, label="Skill", help="One of your hero's skills.")
TOTEM = Choice(TOTEMS, label="Totem")
MODIFIER = Integer(-MODIFIER_MAX, MODIFIER_MAX, default=0, label="Modifier")
REASON = Text(REASON_MAX, optional=True, label="Reason")


# --- reading the raw odds forms (``manage.py odds``); actions are read by their declarations ---


def field_int(action: Mapping, key: str, lo: int, hi: int, default: int | None = None) -> int:
    """An integer field in ``lo..hi``; ``default`` when missing or null (required if no default)."""
    value = action.get(key)
    if value is None:
        value = default
    if value is None:
        raise RuleError(f"'{key}' is required: a whole number from {lo} to {hi}.", "invalid")
    if isinstance(value, bool) or not isinstance(value, int):
        raise RuleError(f"'{key}' must be a whole number from {lo} to {hi}.", "invalid")
    if not lo <= value <= hi:
        raise RuleError(f"'{key}' must be from {lo} to {hi}, not {show(value)}.", "invalid")
    return value


def _skill(state: dict, action: Mapping) -> str:
    names = grid_skills(state["sheet"]["grid"])
    skill = find_name(names, action["skill"])
    if skill is None:
        raise RuleError(f"'skill' must be one of your skills: {', '.join(names)}.", "invalid")
    return skill


# --- what the state says ---------------------------------------------------------------


def blocked_spots(state: dict) -> list[dict]:
    """The filled injury spots that carry a number: ``[{"spot": 1, "number": 5}, ...]``."""
    track = state["sheet"]["options"]["injury_track"]
    return [{"spot": i + 1, "number": n} for i, n in enumerate(track[: state["injuries"]]) if n]


def blocked_values(state: dict) -> list[int]:
    """Skill die faces the injury track forbids selecting, sorted."""
    return sorted({s["number"] for s in blocked_spots(state)})


def available_points(state: dict) -> int:
    return state["points"]["earned"] - state["points"]["spent"]


# --- skill tests ----------------------------------------------------------------------


def prepare_skill_test(state: dict, action: Mapping) -> dict:
    """Gather what a (declared-valid) skill test rolls and adds (shared with ``preview``)."""
    sheet = state["sheet"]
    skill = _skill(state, action)
    row, column = skill_position(sheet["grid"], skill)
    spec = None
    if action["specialization"] is not None:
        specs = sheet["specializations"][skill]
        name = find_name([s["name"] for s in specs], action["specialization"])
        if name is None:
            yours = ", ".join(s["name"] for s in specs) or "none"
            raise RuleError(f"{skill} has no specialization {show(action['specialization'])} (yours: {yours}).", "invalid")
        spec = next(dict(s) for s in specs if s["name"] == name)
    modifier, target, bubble = action["modifier"], action["target"], action["bubble"]
    if state["taken_out"]:
        raise RuleError("Your hero is taken out: the injury track is full. Heal an injury before testing a skill.")
    penalty = state["gm_penalty"]
    # A condition's bonus or penalty, while it lasts (tote-basic-rules-v1.1.txt:8, rules/conditions.py).
    circumstances, applied = conditions.effect(state)
    return {
        "skill": skill,
        "row": row,
        "column": column,
        "rating": sheet["skills"][skill],
        "specialization": spec,
        "modifier": modifier,
        "penalty": penalty,
        "bonus": (spec["bonus"] if spec else 0) + modifier + penalty + circumstances,
        "conditions": applied,
        "target": target,
        "blocked": blocked_values(state),
        "bubble": bubble,
    }


def _choose_bubble(state: dict, row: int, column: int, preference: str) -> tuple[dict | None, str]:
    """Which experience bubble a critical fills: the preferred line, else the other one."""
    if preference == "none":
        return None, "the player chose not to fill a bubble"
    grid = state["sheet"]["grid"]
    order = ("row", "column") if preference == "row" else ("column", "row")
    for line in order:
        index = row if line == "row" else column
        if not state["bubbles"][line + "s"][index]:
            totem = grid["rows" if line == "row" else "columns"][index]
            return {"line": line, "index": index, "totem": totem}, f"filled the {totem} {line} bubble"
    return None, "both of this skill's bubbles are already filled: no more experience from it this Tale"


@action(
    "skill_test", title="Skill test", rolls=True, emits=("skill_tested",),
    help="One d6 per skill rating (the best the injury track allows) + the Paragon d6 + bonuses, against a target.",
    fields={
        "skill": SKILL,
        "target": Integer(TARGET_MIN, TARGET_MAX, label="Target"),
        "specialization": Text(NAME_MAX, optional=True, label="Specialization"),
        "modifier": MODIFIER,
        "bubble": Choice(BUBBLE_CHOICES, default="auto", label="A critical fills"),
    },
)
def skill_test(state: dict, action: Mapping, dice: DiceSource) -> list[Event]:
    """Roll a skill test.

    Action: ``{"type": "skill_test", "skill": str, "target": 1..30,
    "specialization": name (optional), "modifier": -10..10 (optional),
    "bubble": "auto"|"column"|"row"|"none" (which bubble a critical fills)}``.
    Dice, in order: one d6 per skill rating, then the Paragon d6.
    """
    test = prepare_skill_test(state, action)
    odds = skill_test_odds(test["rating"], test["bonus"], test["target"], test["blocked"])
    faces = [dice.roll(6) for _ in range(test["rating"])]
    paragon = dice.roll(6)

    index = select_skill_die(faces, test["blocked"])
    skill_die = 0 if index is None else faces[index]
    total = skill_die + paragon + test["bonus"]
    success = total >= test["target"]
    critical = is_critical(faces, paragon)
    spots = {s["number"]: s["spot"] for s in blocked_spots(state)}

    logged = []
    for i, face in enumerate(faces):
        if i == index:
            why = "selected: the highest face the injury track allows"
        elif face in spots:
            why = f"blocked: injury spot {spots[face]} ({face}) is filled"
        else:
            why = "not selected"
        logged.append({"die": "skill", "face": face, "selected": i == index, "blocked": face in spots, "why": why})
    logged.append({"die": "paragon", "face": paragon, "selected": True, "blocked": False, "why": "the Paragon is always added"})

    bubble, bubble_note = (None, None)
    if critical:
        bubble, bubble_note = _choose_bubble(state, test["row"], test["column"], test["bubble"])
    grid = state["sheet"]["grid"]
    payload = {
        "skill": test["skill"],
        "rating": test["rating"],
        "totems": [grid["rows"][test["row"]], grid["columns"][test["column"]]],
        "specialization": test["specialization"],
        "modifier": test["modifier"],
        "aspect_penalty": test["penalty"],
        # Only when a condition adds something: a log from before conditions replays as it was decided.
        **({"conditions": test["conditions"]} if test["conditions"] else {}),
        "bonus": test["bonus"],
        "target": test["target"],
        "blocked": test["blocked"],
        "dice": logged,
        "skill_die": skill_die,
        "paragon": paragon,
        "total": total,
        "success": success,
        "outcome": "success" if success else "failure",
        "critical": critical,
        "bubble": bubble,
        "bubble_note": bubble_note,
        "odds": odds_json(odds),
    }
    return [Event("skill_tested", payload)]


# --- Resolve and aspects --------------------------------------------------------------


@action("spend_resolve", title="Spend Resolve", emits=("resolve_spent",), fields={"totem": TOTEM},
        help="Add a totem to this scene's last, failed skill test, if that makes it succeed.")
def spend_resolve(state: dict, action: Mapping, dice: DiceSource) -> list[Event]:
    """Spend a point of Resolve on this scene's last, failed skill test, adding a totem.

    Action: ``{"type": "spend_resolve", "totem": "Bear"}``. The aspect's free
    point (if any) is spent before the pool, since it lapses with the scene.
    Refused when there is no such test, it succeeded or was already rescued,
    there is no Resolve, or the totem would not make it succeed. Rolls nothing.
    """
    totem = action["totem"]
    last = state["last_test"]
    if last is None:
        raise RuleError("There is no skill test this scene to spend Resolve on.")
    if last["rescued"]:
        raise RuleError("You already spent Resolve on your last test, and it succeeded.")
    if last["success"]:
        raise RuleError("Your last skill test succeeded: there is nothing to spend Resolve on.")
    if state["scene_resolve"] + state["resolve"] <= 0:
        raise RuleError("You have no Resolve left to spend.")
    value = state["sheet"]["totems"][totem]
    total = last["total"] + value
    if total < last["target"]:
        raise RuleError(
            f"Adding {totem} ({value}) makes {total}, still short of T{last['target']}. "
            "You never need to spend Resolve if it won't make you succeed."
        )
    source = "aspect" if state["scene_resolve"] > 0 else "pool"
    payload = {
        "totem": totem,
        "totem_value": value,
        "skill_totem": totem in last["totems"],  # the table still decides whether it fits
        "source": source,
        "skill": last["skill"],
        "total_before": last["total"],
        "total": total,
        "target": last["target"],
        "success": True,
        "outcome": "success",
        "resolve_left": state["resolve"] - (source == "pool"),
        "scene_resolve_left": state["scene_resolve"] - (source == "aspect"),
    }
    return [Event("resolve_spent", payload)]


@action("invoke_aspect", title="Invoke your aspect", emits=("aspect_invoked",),
        help="A free Resolve point until the scene ends, once a scene.")
def invoke_aspect(state: dict, action: Mapping, dice: DiceSource) -> list[Event]:
    """The player invokes the aspect: a free Resolve point until the scene ends, once a scene.

    Action: ``{"type": "invoke_aspect"}``. Rolls nothing.
    """
    aspect = state["sheet"]["aspect"]
    if not aspect:
        raise RuleError("Your hero has no aspect to invoke.")
    if state["aspect_invoked"]:
        raise RuleError("You have already invoked your aspect this scene.")
    return [Event("aspect_invoked", {"aspect": aspect, "scene_resolve": 1})]


@action("gm_invoke_aspect", title="Invoke the hero's aspect against them", by="gm",
        emits=("aspect_invoked_by_gm",), help="-2 on the hero's next skill test this scene.")
def gm_invoke_aspect(state: dict, action: Mapping, dice: DiceSource) -> list[Event]:
    """GM: invoke the hero's aspect for -2 on the hero's next skill test (this scene).

    Action: ``{"type": "gm_invoke_aspect"}``. Rolls nothing.
    """
    aspect = state["sheet"]["aspect"]
    if not aspect:
        raise RuleError("This hero has no aspect for the GM to invoke.")
    if state["gm_penalty"]:
        raise RuleError("The aspect penalty is already waiting for this hero's next skill test.")
    return [Event("aspect_invoked_by_gm", {"aspect": aspect, "penalty": ASPECT_PENALTY})]


@action("grant_resolve", title="Grant Resolve", by="gm", emits=("resolve_granted",),
        fields={"amount": Integer(1, GRANT_MAX, default=1, label="Resolve"), "reason": REASON},
        help="Up to the campaign's maximum.")
def grant_resolve(state: dict, action: Mapping, dice: DiceSource) -> list[Event]:
    """GM: give the hero Resolve points, up to the campaign maximum.

    Action: ``{"type": "grant_resolve", "amount": 1..20 (default 1), "reason": str}``.
    """
    requested = action["amount"]
    reason = action["reason"] or ""
    cap = state["sheet"]["options"]["resolve_max"]
    if state["resolve"] >= cap:
        raise RuleError(f"This hero's Resolve is already at its maximum of {cap}.")
    amount = min(requested, cap - state["resolve"])
    payload = {"amount": amount, "requested": requested, "resolve": state["resolve"] + amount, "reason": reason}
    return [Event("resolve_granted", payload)]


# --- injuries ------------------------------------------------------------------------


def _injury_payload(state: dict, injuries: int, requested: int, spots: list) -> dict:
    after = dict(state, injuries=injuries)
    track = state["sheet"]["options"]["injury_track"]
    return {
        "requested": requested,
        "spots": spots,
        "injuries": injuries,
        "blocked": blocked_values(after),
        "taken_out": injuries >= len(track),
    }


INJURY_COUNT = Integer(1, INJURY_COUNT_MAX, default=1, label="Spots")


@action("mark_injury", title="Mark injuries", by="gm", emits=("injury_marked",), fields={"count": INJURY_COUNT},
        help="Fill the next spots of the injury track; a full track takes the hero out.")
def mark_injury(state: dict, action: Mapping, dice: DiceSource) -> list[Event]:
    """GM: fill the next ``count`` spots of the injury track (as many as are left).

    Action: ``{"type": "mark_injury", "count": 1..10 (default 1)}``.
    """
    count = action["count"]
    track = state["sheet"]["options"]["injury_track"]
    if state["injuries"] >= len(track):
        raise RuleError("The injury track is already full: the hero is taken out.")
    new = min(len(track), state["injuries"] + count)
    spots = [{"spot": i + 1, "number": track[i]} for i in range(state["injuries"], new)]
    return [Event("injury_marked", _injury_payload(state, new, count, spots))]


@action("heal_injury", title="Heal injuries", by="gm", emits=("injury_healed",), fields={"count": INJURY_COUNT},
        help="Clear the last filled spots of the injury track.")
def heal_injury(state: dict, action: Mapping, dice: DiceSource) -> list[Event]:
    """GM: clear the last ``count`` filled spots of the injury track.

    Action: ``{"type": "heal_injury", "count": 1..10 (default 1)}``.
    """
    count = action["count"]
    if state["injuries"] <= 0:
        raise RuleError("This hero has no injuries to heal.")
    track = state["sheet"]["options"]["injury_track"]
    new = max(0, state["injuries"] - count)
    spots = [{"spot": i + 1, "number": track[i]} for i in range(new, state["injuries"])]
    return [Event("injury_healed", _injury_payload(state, new, count, spots))]


# --- effect tests ---------------------------------------------------------------------


def prepare_effect_test(state: dict, action: Mapping) -> dict:
    """Gather what a (declared-valid) effect test rolls (shared with ``preview``)."""
    options = state["sheet"]["options"]["effect_test"]
    return {
        "dice": action["dice"],
        "modifier": action["modifier"],
        "target": action["target"],
        "label": action["label"],
        "mode": options["mode"],
        "threshold": options["threshold"],
    }


@action(
    "effect_test", title="Effect test", rolls=True, emits=("effect_tested",),
    help="Plain d6s (no Paragon, criticals or injury blocks), summed or counted as the campaign says.",
    fields={
        "dice": Integer(1, EFFECT_DICE_MAX, label="Dice"),
        "modifier": MODIFIER,
        "target": Integer(1, EFFECT_TARGET_MAX, optional=True, label="Target"),
        "label": Text(60, optional=True, label="What for", help="e.g. damage"),
    },
)
def effect_test(state: dict, action: Mapping, dice: DiceSource) -> list[Event]:
    """Roll effect dice: plain d6s, no Paragon, no criticals, no injury blocks.

    Action: ``{"type": "effect_test", "dice": 1..5, "modifier": -10..10,
    "target": 1..60 (optional), "label": str (optional, e.g. "damage")}``.
    The campaign option ``effect_test.mode`` decides the score: ``sum`` of the
    faces (default) or ``count`` of faces >= ``threshold``. Dice: ``dice`` d6s.
    """
    test = prepare_effect_test(state, action)
    odds = effect_test_odds(test["dice"], test["mode"], test["threshold"], test["modifier"], test["target"])
    faces = [dice.roll(6) for _ in range(test["dice"])]
    score = effect_score(faces, test["mode"], test["threshold"])
    total = score + test["modifier"]
    counted = [test["mode"] == "sum" or face >= test["threshold"] for face in faces]
    payload = {
        "label": test["label"],
        "mode": test["mode"],
        "threshold": test["threshold"] if test["mode"] == "count" else None,
        "dice": [{"die": "effect", "face": f, "counted": c} for f, c in zip(faces, counted)],
        "score": score,
        "modifier": test["modifier"],
        "total": total,
        "target": test["target"],
        "success": None if test["target"] is None else total >= test["target"],
        "outcome": "rolled" if test["target"] is None else ("success" if total >= test["target"] else "failure"),
        "odds": odds_json(odds),
    }
    return [Event("effect_tested", payload)]


# --- experience and advancement ---------------------------------------------------------


@action("award_points", title="Award XP", by="gm", emits=("points_awarded",),
        fields={"points": Integer(1, POINTS_MAX, label="XP"), "reason": REASON})
def award_points(state: dict, action: Mapping, dice: DiceSource) -> list[Event]:
    """GM: award experience points. ``{"type": "award_points", "points": 1..100, "reason": str}``."""
    return [Event("points_awarded", {"points": action["points"], "reason": action["reason"] or ""})]


@action("end_tale", title="End the Tale", by="gm", emits=("tale_ended",),
        help="Each filled experience bubble becomes one XP, and the bubbles clear.")
def end_tale(state: dict, action: Mapping, dice: DiceSource) -> list[Event]:
    """GM: the Tale ends; each filled experience bubble becomes one XP, and the bubbles clear.

    Action: ``{"type": "end_tale"}``.
    """
    grid = state["sheet"]["grid"]
    rows = [grid["rows"][i] for i, filled in enumerate(state["bubbles"]["rows"]) if filled]
    columns = [grid["columns"][i] for i, filled in enumerate(state["bubbles"]["columns"]) if filled]
    return [Event("tale_ended", {"xp": len(rows) + len(columns), "rows": rows, "columns": columns})]


@action(
    "buy_advance", title="Buy an advance", emits=("advance_bought",),
    help="Spend XP: the cost is the new rating times the campaign's cost per point.",
    fields={
        "advance": Choice([("skill", "+1 skill"), ("totem", "+1 totem"), ("specialization", "a specialization")],
                          label="Buy"),
        "skill": Text(NAME_MAX, label="Skill", required_when={"advance": ["skill", "specialization"]}),
        "totem": Choice(TOTEMS, label="Totem", required_when={"advance": ["totem"]}),
        "specialization": Text(NAME_MAX, label="Specialization", required_when={"advance": ["specialization"]}),
    },
)
def buy_advance(state: dict, action: Mapping, dice: DiceSource) -> list[Event]:
    """Spend XP on an advance; the cost is the new rating times the campaign's cost per point.

    Actions:
    ``{"type": "buy_advance", "advance": "skill", "skill": "Hunt"}`` (+1 skill, max 5);
    ``{"type": "buy_advance", "advance": "totem", "totem": "Bear"}`` (+1 totem, max 5);
    ``{"type": "buy_advance", "advance": "specialization", "skill": "Hunt",
    "specialization": "Tracking"}`` (+1 to it, or a new one at +1; max +5, 3 per skill).
    """
    payload = advance_cost(state, action)
    have = available_points(state)
    if payload["cost"] > have:
        raise RuleError(f"Raising {payload.pop('what')} to {payload['to']} costs {payload['cost']} XP; you have {have}.")
    payload.pop("what")
    return [Event("advance_bought", payload)]


def advance_cost(state: dict, action: Mapping) -> dict:
    """What ``buy_advance`` would buy: its payload (``advance``, what it raises, ``from``, ``to``,
    ``cost``) and ``what`` (its words); :class:`RuleError` if the rules forbid it."""
    kind = action["advance"]
    sheet = state["sheet"]
    per_point = sheet["options"]["advance_costs"][kind]
    payload: dict[str, Any] = {"advance": kind}
    if kind == "skill":
        skill = _skill(state, action)
        current, top = sheet["skills"][skill], SKILL_MAX
        payload["skill"] = skill
        what = skill
    elif kind == "totem":
        totem = action["totem"]
        current, top = sheet["totems"][totem], TOTEM_MAX
        payload["totem"] = totem
        what = f"your {totem} totem"
    else:
        skill = _skill(state, action)
        wanted = action["specialization"]
        specs = sheet["specializations"][skill]
        name = find_name([s["name"] for s in specs], wanted)
        if name is None:
            if len(specs) >= SPECS_PER_SKILL:
                raise RuleError(f"{skill} already has {SPECS_PER_SKILL} specializations; raise one of those instead.")
            name, current = wanted, 0
        else:
            current = next(s["bonus"] for s in specs if s["name"] == name)
        top = SPEC_BONUS_MAX
        payload.update(skill=skill, specialization=name, new=current == 0)
        what = f"{skill} ({name})"
    if current >= top:
        raise RuleError(f"{what[0].upper() + what[1:]} is already at {current}, the highest it can go.")
    payload.update({"from": current, "to": current + 1, "cost": per_point * (current + 1), "what": what})
    return payload


# A new specialization's name in ``advances``: none of a sheet's (names are 1 or more characters).
NEW = ""


def advances(state: dict) -> dict:
    """What each advance would cost now, for the form (``rules.common.advance_price``): every skill,
    every totem, and each skill's specializations with a new one (``NEW``)."""
    def price(**fields):  # names straight from the sheet: already as the declaration leaves them
        return common.advance_price(advance_cost, state, buy_advance.as_validated(**fields))
    sheet = state["sheet"]
    skills = grid_skills(sheet["grid"])
    return {
        "skill": {s: price(advance="skill", skill=s) for s in skills},
        "totem": {t: price(advance="totem", totem=t) for t in sheet["totems"]},
        "specialization": {s: {**{spec["name"]: price(advance="specialization", skill=s, specialization=spec["name"])
                                  for spec in sheet["specializations"][s]},
                               NEW: price(advance="specialization", skill=s, specialization="a new one")}
                           for s in skills},
    }


ACTIONS = actions_by_type(
    skill_test, spend_resolve, invoke_aspect, gm_invoke_aspect, grant_resolve, mark_injury, heal_injury,
    effect_test, award_points, end_tale, buy_advance,
    # Conditions with a duration (rules/conditions.py): a bonus or penalty on skill tests while they last.
    *conditions.actions("Bonus or penalty", "Added to the hero's skill test totals while it lasts."),
)


# --- odds: the two public entry points (here, not in odds.py, which holds the dice math
# these validate against; odds.py importing actions would be a cycle) -------------------------------------------------


def odds(action: dict) -> dict[str, Fraction]:
    """Exact odds of a raw roll, as ``manage.py odds`` takes it.

    * ``{"type": "skill_test", "rating": 0..5, "bonus": -20..20, "target": 1..30,
      "blocked": [faces 1..6]}`` -> ``success``, ``failure``, ``critical``;
    * ``{"type": "effect_test", "dice": 1..10, "modifier": -10..10, "target": 1..60
      (optional), "mode": "sum"|"count", "threshold": 2..6}``.
    """
    if not isinstance(action, dict):
        raise RuleError("An action must be a JSON object.", "invalid")
    kind = action.get("type")
    if kind == "skill_test":
        rating = field_int(action, "rating", 0, SKILL_MAX)
        bonus = field_int(action, "bonus", -20, 20, 0)
        target = field_int(action, "target", TARGET_MIN, TARGET_MAX)
        blocked = action.get("blocked", [])
        if not isinstance(blocked, list) or len(blocked) > 6 or any(
            isinstance(v, bool) or not isinstance(v, int) or not 1 <= v <= 6 for v in blocked
        ):
            raise RuleError("'blocked' must be a list of die faces 1..6.", "invalid")
        return skill_test_odds(rating, bonus, target, frozenset(blocked))
    if kind == "effect_test":
        dice = field_int(action, "dice", 1, EFFECT_DICE_MAX)
        modifier = field_int(action, "modifier", -MODIFIER_MAX, MODIFIER_MAX, 0)
        target = field_int(action, "target", 1, EFFECT_TARGET_MAX) if action.get("target") is not None else None
        mode = action.get("mode", "sum")
        if mode not in ("sum", "count"):
            raise RuleError("'mode' must be 'sum' or 'count'.", "invalid")
        threshold = field_int(action, "threshold", 2, 6, 4)
        return effect_test_odds(dice, mode, threshold, modifier, target)
    raise RuleError("Odds are known for 'skill_test' and 'effect_test' only.", "invalid")


def preview(state: dict, action: Mapping) -> dict[str, Fraction]:
    """Exact odds of a (declared-valid) rolling action this hero is about to take,
    with everything the state adds (injuries, specialization, the GM's pending
    aspect penalty); ``{}`` for an action that rolls nothing. ``RuleSystem.preview``
    validates it first."""
    if action["type"] == "skill_test":
        test = prepare_skill_test(state, action)
        return skill_test_odds(test["rating"], test["bonus"], test["target"], frozenset(test["blocked"]))
    if action["type"] != "effect_test":
        return {}
    test = prepare_effect_test(state, action)
    return effect_test_odds(test["dice"], test["mode"], test["threshold"], test["modifier"], test["target"])
