"""Mundo das Trevas Lite: one pure function per action, ``(state, action, dice) -> [Event]``.

Each action is declared above its function (``rules/declare.py``), which checks
every field's shape and range first. Every rolling action then *plans* (checks
the action against the state, works out the pools and the exact odds) and only
then rolls, so the odds in the event are the ones shown before the roll and
``preview`` shares the code.

Dice order: the character's pool, die by die, then (opposed tests and contest
rounds) the opponent's pool. A pool of 0 dice or fewer rolls one Luck die.
"""

from __future__ import annotations

from fractions import Fraction

from .. import common, conditions, health
from ..base import DiceSource, Event, RuleError, odds_json
from ..declare import Choice, Flag, Integer, Text, action, actions_by_type
from . import odds as O
from .settings import health_boxes
from .sheet import (
    ATTRIBUTE_MAX,
    ATTRIBUTES,
    MAX_SPECIALIZATION_NAME,
    MAX_SPECIALIZATIONS,
    SPECIALIZATION_MAX,
    find_specialization,
)

MAX_MODIFIER = 10
MAX_PROJECTS = 10
MAX_EARNED = 1_000_000  # a sanity cap so points stay small numbers
MAX_TEXT = 200


# ---------------------------------------------------------------- fields several actions share

ATTRIBUTE = Choice(list(ATTRIBUTES.items()), label="Attribute")
SPECIALIZATION = Text(MAX_SPECIALIZATION_NAME, optional=True, label="Specialization",
                      help="One of the character's specializations.")
MODIFIER = Integer(-MAX_MODIFIER, MAX_MODIFIER, default=0, label="Modifier")
# Their pool, unless the opponent is a character (``vs_character``): then its sheet says it.
POOL = Integer(-O.MAX_POOL, O.MAX_POOL, optional=True, required_when={"vs_character": [None]}, label="Their pool")
PROJECT = Text(60, label="Project", help="One of the character's projects.")
REASON = Text(MAX_TEXT, optional=True, label="Reason")
VS_CHARACTER = Integer(1, 2**53, optional=True, label="Opponent (a character)",
                       help="Another character of the campaign: their pool comes from their sheet.")
# Who the other side is, in words (the guard; a character's name): what the log and the sheet call them.
OPPONENT = Text(100, optional=True, label="Opponent's name")


def _specialization(state: dict, action: dict) -> str | None:
    """The sheet's name of the action's specialization, or None if none is used."""
    value = action["specialization"]
    if value is None:
        return None
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
    # Situational modifiers add or take dice (mundo-das-trevas-lite-testes.pt.txt:3): a condition's,
    # while it lasts (rules/conditions.py). Recorded only when there is one, so a log from before
    # conditions replays as it was decided.
    circumstances, applied = conditions.effect(state)
    if applied:
        parts["conditions"] = applied
    parts["pool"] = 1 + parts["attribute_rating"] + parts["specialization_rating"] + parts["modifier"] + circumstances
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
    value = action["project"]
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
    parts = _pool(state, action["attribute"], _specialization(state, action), action["modifier"])
    difficulty = action["difficulty"]
    parts.update(difficulty=difficulty, difficulty_name=O.DIFFICULTY_NAMES[difficulty][0],
                 difficulty_label=O.DIFFICULTY_NAMES[difficulty][1],
                 exceptional_at=difficulty + _options(state)["exceptional_margin"])
    return parts, O.odds_of_test(parts["pool"], difficulty, _options(state))  # with the band, if set


def _plan_opposed(state: dict, action: dict) -> tuple[dict, dict]:
    parts = _pool(state, action["attribute"], _specialization(state, action), action["modifier"])
    # "Ambos rolam": the opponent's conditions add or take dice from its pool as ours do from ours
    # (docs/rules.md, Conditions 8); recorded only when there are some.
    vs_pool = _check_pool(action["vs_pool"] + action["vs_conditions"], "The opponent's pool")
    tie_goes_to = action["tie_goes_to"]
    parts.update(vs_pool=vs_pool, tie_goes_to=tie_goes_to, opponent=action["opponent"] or "",
                 **({"vs_conditions": action["vs_conditions"]} if action["vs_conditions"] else {}))
    return parts, O.odds_of_opposed(parts["pool"], vs_pool, tie_goes_to, _options(state))


def _plan_contest_round(state: dict, action: dict) -> tuple[dict, dict]:
    contest = _contest(state)
    round_modifier, vs_modifier = action["modifier"], action["vs_modifier"]
    parts = _pool(state, contest["attribute"], contest["specialization"], contest["modifier"], round_modifier)
    _check_pool(parts["pool"])
    vs_pool = _check_pool(contest["vs_pool"] + vs_modifier, "The opponent's pool")
    parts.update(round_modifier=round_modifier, vs_pool=vs_pool, vs_modifier=vs_modifier)
    return parts, O.odds_of_contest_round(parts["pool"], vs_pool, contest["mine"], contest["theirs"],
                                          contest["target"], _options(state))


def _plan_project_roll(state: dict, action: dict) -> tuple[dict, dict]:
    project = _project(state, action)
    roll_modifier = action["modifier"]
    parts = _pool(state, project["attribute"], project["specialization"], project["modifier"], roll_modifier)
    _check_pool(parts["pool"])
    parts["roll_modifier"] = roll_modifier
    return parts, O.odds_of_project_roll(parts["pool"], project["progress"], project["target"], _options(state))


# ---------------------------------------------------------------- actions

DIFFICULTY = Choice([(n, f"{n} ({words[0]}, {words[1]})") for n, words in O.DIFFICULTY_NAMES.items()],
                    aliases={w: n for w, n in O.DIFFICULTY_WORDS.items()}, default=1, label="Difficulty",
                    help="Successes needed: 1 dramatic, 2 dangerous, 3 desperate (the name, English or Portuguese, works too).")


@action(
    "test", title="Test", rolls=True, emits=("test_rolled",),
    help="1 + attribute + specialization + modifier d10s; 7+ is a success, 10 counts two.",
    fields={"attribute": ATTRIBUTE, "specialization": SPECIALIZATION, "modifier": MODIFIER, "difficulty": DIFFICULTY},
)
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
    return [Event("test_rolled", payload)]


@action(
    "opposed_test", title="Opposed test", rolls=True, emits=("opposed_test_rolled",),
    help="Both sides roll once; more successes wins.",
    fields={
        "attribute": ATTRIBUTE, "specialization": SPECIALIZATION, "modifier": MODIFIER,
        "vs_character": VS_CHARACTER,
        "vs_pool": POOL,
        "vs_conditions": Integer(-conditions.MAX_EFFECT, conditions.MAX_EFFECT, default=0, label="Their conditions (dice)",
                                 help="The opponent's conditions' dice, filled from its sheet when it is a character."),
        "tie_goes_to": Choice([("none", "a tie"), ("character", "the character"), ("opponent", "the opponent")],
                              default="none", label="A tie goes to"),
        "opponent": OPPONENT,
    },
)
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
    return [Event("opposed_test_rolled", {
        **parts, "roll": roll, "opponent_roll": opponent_roll, "outcome": outcome,
        "success": outcome == "win", "dramatic_failure": roll["dramatic_failure"],
        "odds": odds_json(odds),
    })]


@action(
    "start_contest", title="Start a race", by="gm", emits=("contest_started",),
    help="The first side to the target number of successes wins.",
    fields={
        "attribute": ATTRIBUTE, "specialization": SPECIALIZATION, "modifier": MODIFIER,
        "vs_character": VS_CHARACTER,  # before the field it makes optional
        "vs_pool": POOL,
        # Read from the opponent's sheet with ``vs_character`` (rules/contests.py): its side of the race.
        "vs_attribute": Choice(list(ATTRIBUTES.items()), optional=True, label="Their attribute",
                               help="The opponent's attribute (the text: both roll the same one, the default)."),
        "vs_specialization": Text(MAX_SPECIALIZATION_NAME, optional=True, label="Their specialization"),
        "target": Integer(1, O.MAX_CONTEST_TARGET, label="Successes to win"),
        "label": Text(100, optional=True, label="Label"),
        "opponent": OPPONENT,
    },
)
def start_contest(state: dict, action: dict, dice: DiceSource) -> list[Event]:
    """(Storyteller) Start a race: the first side to ``target`` successes wins.

    Against another character (``vs_character``) its pool comes from its sheet and the race runs on
    both sides: the event records this side's pool and the opponent's attribute, so the opponent's
    state holds the same race seen from its side (rules/contests.py)."""
    if state.get("contest"):
        raise RuleError("A contest is already running; finish it or end it with end_contest first.")
    if state.get("fight"):
        raise RuleError("The character is in a fight: it must end first.")
    attribute, specialization = action["attribute"], _specialization(state, action)
    modifier = action["modifier"]
    pool = _check_pool(_pool(state, attribute, specialization, modifier)["pool"])
    payload = {
        "label": action["label"] or "",
        "attribute": attribute,
        "specialization": specialization,
        "modifier": modifier,
        "vs_pool": _check_pool(action["vs_pool"], "The opponent's pool"),
        "target": action["target"],
        "mine": 0,
        "theirs": 0,
        "round": 0,
        # In words, as an opposed test's ``opponent`` (the id of a character named is ``opponent``, below).
        "opponent_name": action["opponent"] or "",
    }
    if action["vs_character"] is not None:
        payload.update(opponent=action["vs_character"], pool=pool,
                       vs_attribute=action["vs_attribute"] or attribute,
                       vs_specialization=action["vs_specialization"])
    return [Event("contest_started", payload)]


@action("contest_round", title="Race round", rolls=True, emits=("contest_round_rolled",),
        help="One round of the running race; successes accumulate toward the target.",
        fields={"modifier": MODIFIER, "vs_modifier": Integer(-MAX_MODIFIER, MAX_MODIFIER, default=0,
                                                              label="Their modifier")})
def contest_round(state: dict, action: dict, dice: DiceSource) -> list[Event]:
    """One round of the running race; successes accumulate toward the target."""
    contest = _contest(state)
    parts, odds = _plan_contest_round(state, action)
    roll = roll_pool(dice, parts["pool"], _options(state))
    opponent_roll = roll_pool(dice, parts["vs_pool"], _options(state))
    mine = contest["mine"] + roll["successes"]
    theirs = contest["theirs"] + opponent_roll["successes"]
    outcome = O.race_outcome(mine, theirs, contest["target"])
    return [Event("contest_round_rolled", {
        **parts, "label": contest["label"], "opponent_name": contest.get("opponent_name", ""),
        "round": contest["round"] + 1, "target": contest["target"],
        "carried_in": {"mine": contest["mine"], "theirs": contest["theirs"]},
        "roll": roll, "opponent_roll": opponent_roll, "mine": mine, "theirs": theirs,
        "outcome": outcome, "finished": outcome != "continue", "success": outcome == "win",
        "dramatic_failure": roll["dramatic_failure"], "odds": odds_json(odds),
    })]


@action("end_contest", title="End the race", emits=("contest_ended",), fields={"reason": REASON},
        help="Abandon the running race without a winner.")
def end_contest(state: dict, action: dict, dice: DiceSource) -> list[Event]:
    """Abandon the running contest without a winner (either side concedes, the scene moves on)."""
    contest = _contest(state)
    return [Event("contest_ended", {
        "label": contest["label"], "round": contest["round"], "mine": contest["mine"],
        "theirs": contest["theirs"], "target": contest["target"], "reason": action["reason"] or "",
    })]


@action(
    "start_project", title="Start a project", by="gm", emits=("project_started",),
    help="A long task that completes at the target number of accumulated successes.",
    fields={
        "name": Text(60, label="Project"), "target": Integer(1, O.MAX_PROJECT_TARGET, label="Successes needed"),
        "attribute": ATTRIBUTE, "specialization": SPECIALIZATION, "modifier": MODIFIER,
        "interval": Text(30, optional=True, label="One roll every", help="e.g. a day, a week"),
        "reset_on_dramatic_failure": Flag(label="A dramatic failure loses the progress"),
    },
)
def start_project(state: dict, action: dict, dice: DiceSource) -> list[Event]:
    """(Storyteller) Start a long task that completes at ``target`` accumulated successes."""
    name = action["name"]
    if any(known.casefold() == name.casefold() for known in state["projects"]):
        raise RuleError(f"The character already has a project called '{name}'.")
    if len(state["projects"]) >= MAX_PROJECTS:
        raise RuleError(f"A character can run at most {MAX_PROJECTS} projects at once; finish or abandon one.")
    attribute, specialization = action["attribute"], _specialization(state, action)
    modifier = action["modifier"]
    _check_pool(_pool(state, attribute, specialization, modifier)["pool"])
    return [Event("project_started", {
        "name": name,
        "target": action["target"],
        "attribute": attribute,
        "specialization": specialization,
        "modifier": modifier,
        "interval": action["interval"] or "",
        "reset_on_dramatic_failure": action["reset_on_dramatic_failure"],
        "progress": 0,
        "rolls": 0,
    })]


@action("project_roll", title="Project roll", rolls=True, emits=("project_rolled",),
        fields={"project": PROJECT, "modifier": MODIFIER},
        help="One interval's test of a project; its successes add to the running total.")
def project_roll(state: dict, action: dict, dice: DiceSource) -> list[Event]:
    """One interval's test of a project; its successes add to the running total."""
    project = _project(state, action)
    parts, odds = _plan_project_roll(state, action)
    roll = roll_pool(dice, parts["pool"], _options(state))
    lost = roll["dramatic_failure"] and project["reset_on_dramatic_failure"]
    progress = 0 if lost else project["progress"] + roll["successes"]
    complete = progress >= project["target"]
    return [Event("project_rolled", {
        **parts, "project": project["name"], "interval": project["interval"], "roll_number": project["rolls"] + 1,
        "target": project["target"], "progress_before": project["progress"], "roll": roll,
        "progress": progress, "lost_progress": lost, "complete": complete,
        "outcome": "complete" if complete else "continue",
        "dramatic_failure": roll["dramatic_failure"], "odds": odds_json(odds),
    })]


@action("abandon_project", title="Abandon a project", emits=("project_abandoned",),
        fields={"project": PROJECT, "reason": REASON})
def abandon_project(state: dict, action: dict, dice: DiceSource) -> list[Event]:
    """Drop a project unfinished."""
    project = _project(state, action)
    return [Event("project_abandoned", {
        "project": project["name"], "progress": project["progress"], "target": project["target"],
        "reason": action["reason"] or "",
    })]


@action("say_yes", title="Say yes", by="gm", emits=("yes_said",),
        fields={"goal": Text(MAX_TEXT, optional=True, label="Goal")},
        help="\"Diga sim\": the goal simply succeeds, no dice.")
def say_yes(state: dict, action: dict, dice: DiceSource) -> list[Event]:
    """(Storyteller) "Diga sim": the goal simply succeeds, no dice."""
    return [Event("yes_said", {"goal": action["goal"] or "", "dice": [], "outcome": "success",
                              "success": True, "odds": odds_json({"success": Fraction(1)})})]


@action("award_points", title="Award points", by="gm", emits=("points_awarded",),
        fields={"points": Integer(1, 100, label="Points"), "reason": REASON})
def award_points(state: dict, action: dict, dice: DiceSource) -> list[Event]:
    """(Storyteller) Award advancement points."""
    points = action["points"]
    if state["points"]["earned"] + points > MAX_EARNED:
        raise RuleError(f"A character can earn at most {MAX_EARNED} points in all.")
    return [Event("points_awarded", {"points": points, "reason": action["reason"] or ""})]


def advance_cost(state: dict, action: dict) -> dict:
    """What ``buy_advance`` would buy: ``{kind, name, from, to, cost}``; RuleError if forbidden."""
    options = _options(state)
    sheet = state["sheet"]
    if action["attribute"] is not None:
        name = action["attribute"]
        now = sheet["attributes"][name]
        if now >= ATTRIBUTE_MAX:
            raise RuleError(f"{ATTRIBUTES[name]} ({name}) is already at the maximum of {ATTRIBUTE_MAX}.")
        return {"kind": "attribute", "name": name, "from": now, "to": now + 1,
                "cost": (now + 1) * options["attribute_cost"]}
    wanted = action["specialization"]
    name = find_specialization(sheet["specializations"], wanted) or wanted
    now = sheet["specializations"].get(name, 0)
    if now >= SPECIALIZATION_MAX:
        raise RuleError(f"The specialization '{name}' is already at the maximum of {SPECIALIZATION_MAX}.")
    if now == 0 and len(sheet["specializations"]) >= MAX_SPECIALIZATIONS:
        raise RuleError(f"A character can have at most {MAX_SPECIALIZATIONS} specializations.")
    return {"kind": "specialization", "name": name, "from": now, "to": now + 1,
            "cost": (now + 1) * options["specialization_cost"]}


NEW = ""  # a new specialization's name in ``advances``: none of a sheet's (names are 1 or more characters)


def advances(state: dict) -> dict:
    """What each advance would cost now, for the form (``rules.common.advance_price``): every
    attribute, every specialization and a new one (``NEW``)."""
    def price(**fields):  # names straight from the sheet: already as the declaration leaves them
        return common.advance_price(advance_cost, state, buy_advance.as_validated(**fields))
    return {
        "attribute": {a: price(attribute=a) for a in ATTRIBUTES},
        "specialization": {**{name: price(specialization=name) for name in state["sheet"]["specializations"]},
                           NEW: price(specialization="a new one")},
    }


@action(
    "buy_advance", title="Buy an advance", emits=("advance_bought",),
    help="Raise an attribute or a specialization by one, paying its cost in points.",
    fields={"attribute": Choice(list(ATTRIBUTES.items()), optional=True, label="Attribute"),
            "specialization": SPECIALIZATION},
    one_of=[(("attribute", "specialization"), "Buy one advance at a time: give either 'attribute' or 'specialization'.")],
)
def buy_advance(state: dict, action: dict, dice: DiceSource) -> list[Event]:
    """Raise an attribute or a specialization by one, paying its cost in points."""
    advance = advance_cost(state, action)
    available = state["points"]["earned"] - state["points"]["spent"]
    if advance["cost"] > available:
        raise RuleError(f"Raising {advance['name']} to {advance['to']} costs {advance['cost']} points; "
                        f"you have {available}.")
    return [Event("advance_bought", {**advance, "available_before": available,
                                  "available_after": available - advance["cost"]})]


ACTIONS = actions_by_type(
    take_test, take_opposed_test, start_contest, contest_round, end_contest, start_project, project_roll,
    abandon_project, say_yes, award_points, buy_advance,
    # The health track house rule (off unless the campaign turns it on; rules/health.py).
    *health.actions(health_boxes),
    # Conditions with a duration (rules/conditions.py): dice on or off the character's tests while they last.
    *conditions.actions("Dice", "Dice added to (or taken from) the character's tests while it lasts."),
)

_PLANS = {
    "test": _plan_test,
    "opposed_test": _plan_opposed,
    "contest_round": _plan_contest_round,
    "project_roll": _plan_project_roll,
}


def plan_odds(state: dict, action: dict) -> dict:
    """Exact odds of a (declared-valid) action for this character before rolling; ``{}``
    for one without dice (``say_yes`` is a certain success, as its event records)."""
    kind = action["type"]
    if kind in _PLANS:
        return _PLANS[kind](state, action)[1]
    return {"success": Fraction(1)} if kind == "say_yes" else {}
