"""WYRM actions: one pure function per action type, ``(state, action, dice) -> [Event]``.

Dice order (what a test scripts with ``ScriptedDice``):

* ``check``: for a rolled opposed check, the passive side's die first (it sets
  the DL), then its explosions; then the active character's die and its
  explosions. An unopposed check, or an opposed one with the static +3, rolls
  only the active die.
* ``damage``: each damage die in turn, each followed by its own explosions.
* ``approve_fate`` of a reroll: the new die and its explosions.

A die explodes (a 6 adds another roll) only where the text says: damage dice,
and checks where a skill applies (the passive side's too, when it has one),
at most ``EXPLOSION_CAP`` extra rolls per die.

Fate needs the GM's approval, so spending it is two steps: the player's
``spend_fate`` records a request (nothing is spent), the GM's ``approve_fate``
spends the point and applies it (rolling any reroll), or ``deny_fate`` drops it.
"""

from __future__ import annotations

from fractions import Fraction
from functools import lru_cache
from typing import Mapping

from .. import conditions, health
from ..base import DiceSource, Event, RuleError, odds_json
from ..declare import Choice, Flag, Group, Integer, ListOf, Text, action, actions_by_type
from .odds import (
    EXPLOSION_CAP,
    MAX_DAMAGE_BONUS,
    MAX_DAMAGE_DICE,
    MAX_DL,
    MAX_MODIFIER,
    MAX_SKILLS_PER_CHECK,
    SKILL_BONUS,
    STATIC_OPPOSITION,
    check_odds,
    check_spec,
    damage_odds,
    damage_spec,
)
from .settings import health_boxes
from .sheet import ATTRIBUTE_HARD_MAX, ATTRIBUTES, MAX_FATE, MAX_NAME, MAX_POINTS, MAX_SKILLS, MAX_TEXT, find_skill

FATE_USES = (
    ("ignore_attack", "ignore a killing attack"),
    ("minor_detail", "change a minor detail"),
    ("reroll", "reroll the die"),
    ("plus_two", "+2 to the check"),
)
FATE_BONUS = 2
MAX_FATE_GRANT = 10
MAX_AWARD = 100

# Fields several actions share.
ATTRIBUTE = Choice([(a, a.title()) for a in ATTRIBUTES], label="Attribute")
TASK = Text(MAX_TEXT, label="Task", optional=True, help="What the roll is for, e.g. climb the wall.")
REASON = Text(MAX_TEXT, label="Reason", optional=True)

EXPLODE_RULE_SKILL = "6s explode: a skill applies to this check"
EXPLODE_RULE_NO_SKILL = "6s do not explode: no skill applies"
EXPLODE_RULE_DAMAGE = "6s explode: damage rolls always explode"


# --- dice --------------------------------------------------------------------


def roll_die(dice: DiceSource, explodes: bool) -> list[dict]:
    """Roll one d6 and, if it explodes, its chain: ``[{"face": 6, "exploded": true}, ...]``.

    A 6 that would explode past ``EXPLOSION_CAP`` is marked ``"capped": true``.
    """
    chain: list[dict] = []
    while True:
        face = dice.roll(6)
        again = explodes and face == 6 and len(chain) < EXPLOSION_CAP
        entry = {"face": face, "exploded": again}
        if explodes and face == 6 and not again:
            entry["capped"] = True
        chain.append(entry)
        if not again:
            return chain


def chain_total(chain: list[dict]) -> int:
    return sum(d["face"] for d in chain)


def _outcome(success: bool) -> str:
    return "success" if success else "failure"


def _succeeds(total: int, dl: int, ties_succeed: bool) -> bool:
    return total >= dl if ties_succeed else total > dl


# --- checks and damage ---------------------------------------------------------


@action(
    "check", title="Attribute check", rolls=True, emits=("attribute_checked",),
    help="d6 + attribute, +2 per helping skill, against a DL (or an opponent); 6s explode when a skill helps.",
    fields={
        "attribute": ATTRIBUTE,
        "skills": ListOf(Text(MAX_NAME, label="Skill"), MAX_SKILLS_PER_CHECK, unique=True, label="Helping skills (+2 each)",
                         help="The names of your skills that help."),
        "gm_allows_second_skill": Flag(label="GM allows a second skill"),
        "dl": Integer(0, MAX_DL, optional=True, label="DL", help="The difficulty level the GM sets."),
        "vs": Group({
            "attribute": Integer(0, ATTRIBUTE_HARD_MAX, label="Their attribute"),
            "skills": Integer(0, MAX_SKILLS_PER_CHECK, default=0, label="Their skills"),
            "static": Flag(label="Static DL (no roll for them)"),
            "conditions": Integer(-conditions.MAX_EFFECT, conditions.MAX_EFFECT, default=0,
                                  label="Their conditions",
                                  help="The passive side's conditions' DL modifier: the DL it sets is that much lower."),
        }, optional=True, label="Opponent", help="The passive side of an opposed check."),
        "modifier": Integer(-MAX_MODIFIER, MAX_MODIFIER, default=0, label="DL modifier"),
        "task": TASK,
    },
    one_of=[(("dl", "vs"), "A check needs either 'dl' (a difficulty set by the GM) or 'vs' (the passive side), not both.")],
)
def check(state: dict, action: Mapping, dice: DiceSource) -> list[Event]:
    """An attribute check, unopposed (``dl``) or opposed (``vs``)."""
    spec = check_spec(state, action)
    odds = spec.odds()  # before any die is rolled
    opposition = None
    if spec.vs is None:
        dl_base = spec.dl
    else:
        vs_attribute, vs_skills, static = spec.vs
        opposition = {
            "attribute": vs_attribute,
            "skills": vs_skills,
            "skill_bonus": SKILL_BONUS * vs_skills,
            "static": static,
            # Only when the passive side's conditions count: a log from before them replays as it was decided.
            **({"conditions": spec.vs_conditions} if spec.vs_conditions else {}),
        }
        if static:
            opposition.update(dice=[], static_bonus=STATIC_OPPOSITION, total=spec.vs_bonus + STATIC_OPPOSITION)
        else:
            vs_dice = roll_die(dice, vs_skills >= 1)
            opposition.update(
                dice=vs_dice,
                explodes=vs_skills >= 1,
                die_total=chain_total(vs_dice),
                total=chain_total(vs_dice) + spec.vs_bonus,
            )
        dl_base = opposition["total"]
    dl = dl_base + spec.modifier
    chain = roll_die(dice, spec.explodes)
    total = chain_total(chain) + spec.bonus
    success = _succeeds(total, dl, spec.ties_succeed)
    return [
        Event(
            "attribute_checked",
            {
                "roll": state["rolls"] + 1,
                "task": spec.task,
                "attribute": spec.attribute,
                "attribute_value": spec.attribute_value,
                "skills": list(spec.skills),
                "skill_bonus": SKILL_BONUS * spec.skill_count,
                "explodes": spec.explodes,
                "explode_rule": EXPLODE_RULE_SKILL if spec.explodes else EXPLODE_RULE_NO_SKILL,
                "dice": chain,
                "die_total": chain_total(chain),
                "total": total,
                "opposed": opposition is not None,
                "opposition": opposition,
                "dl_base": dl_base,
                "modifier": spec.modifier,
                # Only when a condition adds to the DL: a log from before conditions replays as it was decided.
                **({"conditions": list(spec.conditions)} if spec.conditions else {}),
                "dl": dl,
                "ties_succeed": spec.ties_succeed,
                "success": success,
                "outcome": _outcome(success),
                "odds": odds_json(odds),
            },
        )
    ]


@lru_cache(maxsize=256)
def _damage_odds_json(count: int, bonus: int) -> dict:
    # A damage table has up to ~100 totals; formatting it is most of a damage
    # action's time, so it is formatted once per (dice, bonus) and copied.
    return odds_json(damage_odds(count, bonus))


@action(
    "damage", title="Damage roll", rolls=True, emits=("damage_rolled",), help="d6s that always explode, plus a bonus.",
    fields={
        "dice": Integer(1, MAX_DAMAGE_DICE, default=1, label="Dice"),
        "bonus": Integer(0, MAX_DAMAGE_BONUS, default=0, label="Bonus"),
        "task": TASK,
    },
)
def damage(state: dict, action: Mapping, dice: DiceSource) -> list[Event]:
    """A damage roll: ``dice`` d6s (each exploding) plus ``bonus``."""
    spec = damage_spec(action)
    odds = {total: dict(entry) for total, entry in _damage_odds_json(spec.dice, spec.bonus).items()}
    chains = [roll_die(dice, True) for _ in range(spec.dice)]
    total = sum(chain_total(c) for c in chains) + spec.bonus
    return [
        Event(
            "damage_rolled",
            {
                "roll": state["rolls"] + 1,
                "task": action["task"],
                "dice_count": spec.dice,
                "dice": chains,
                "die_totals": [chain_total(c) for c in chains],
                "bonus": spec.bonus,
                "explodes": True,
                "explode_rule": EXPLODE_RULE_DAMAGE,
                "total": total,
                "outcome": str(total),
                "odds": odds,
            },
        )
    ]


@action(
    "automatic_success", title="Automatic success", by="gm", emits=("automatic_success_granted",),
    help="No roll is needed: the character knows a relevant skill.",
    fields={"attribute": ATTRIBUTE, "skill": Text(MAX_NAME, label="With the skill"), "task": TASK},
)
def automatic_success(state: dict, action: Mapping, dice: DiceSource) -> list[Event]:
    """The GM declares that no roll is needed; the character must know a relevant skill."""
    attribute = action["attribute"]
    skill = find_skill(state["skills"], action["skill"])
    if skill is None:
        raise RuleError("An automatic success needs a relevant skill the character knows; name it in 'skill'.", "no_skill")
    return [
        Event(
            "automatic_success_granted",
            {
                "task": action["task"],
                "attribute": attribute,
                "attribute_value": state["attributes"][attribute],
                "skill": skill["name"],
                "dice": [],
                "success": True,
                "outcome": "success",
                "odds": odds_json({"success": Fraction(1), "failure": Fraction(0)}),
            },
        )
    ]


# --- Fate --------------------------------------------------------------------


def _roll_use_problem(state: dict, use: str, roll: int | None) -> str | None:
    """Why a reroll / +2 cannot apply to the last roll now (None if it can)."""
    last = state["last_roll"]
    if last is None and roll is None:
        return "There is no roll of yours in this scene for Fate to change."
    if last is None or (roll is not None and last["roll"] != roll):
        return "The roll that Fate was asked for is no longer your last roll; the GM should deny the request."
    limit = state["sheet"]["options"].get("fate_per_roll", 1)
    if int(last["fate_used"]) >= limit:
        # One by default: "reroll a single die roll *or* add +2 to a single check" (docs/rules.md, WYRM 13).
        return ("Fate has already changed that roll; a roll takes one Fate point at most." if limit == 1 else
                f"Fate has already changed that roll {limit} times, the campaign's limit.")
    if use == "plus_two" and last["kind"] != "check":
        return "+2 applies to a check, not to a damage roll; a damage roll can be rerolled."
    return None


@action(
    "spend_fate", title="Ask the GM to spend a Fate point", emits=("fate_requested",),
    help="Reroll and +2 change your last roll in this scene; the GM approves or denies.",
    fields={
        "use": Choice(FATE_USES, label="To"),
        "detail": Text(MAX_TEXT, label="Detail", required_when={"use": ["minor_detail"]},
                       help="Which minor detail changes."),
        "die": Integer(1, MAX_DAMAGE_DICE, optional=True, label="Die",
                       help="Which damage die a reroll rolls again (1 for a check)."),
    },
)
def spend_fate(state: dict, action: Mapping, dice: DiceSource) -> list[Event]:
    """Ask to spend one Fate point; the GM approves (``approve_fate``) or denies it."""
    use = action["use"]
    if state["fate"] < 1:
        raise RuleError("You have no Fate left to spend.", "no_fate")
    if state["pending_fate"] is not None:
        raise RuleError("You already asked to spend Fate; wait for the GM's answer.", "pending")
    detail = action["detail"]
    roll = die = None
    if use in ("reroll", "plus_two"):
        problem = _roll_use_problem(state, use, None)
        if problem:
            raise RuleError(problem, "no_roll")
        last = state["last_roll"]
        roll = last["roll"]
        if use == "reroll":
            count = len(last["dice"]) if last["kind"] == "damage" else 1
            die = action["die"] if action["die"] is not None else (1 if count == 1 else None)
            if die is None:
                raise RuleError(f"Say which damage die to reroll: 'die' from 1 to {count}.", "invalid")
            if die > count:  # the last roll decides how many dice there are to choose from
                raise RuleError(f"'die' must be from 1 to {count}, not {die}.", "invalid")
    return [Event("fate_requested", {"use": use, "roll": roll, "die": die, "detail": detail, "fate": state["fate"]})]


@action("approve_fate", title="Approve the Fate request", by="gm", emits=("fate_spent",), rolls=True,
        help="The point is spent and its effect applied (a reroll rolls the new die).")
def approve_fate(state: dict, action: Mapping, dice: DiceSource) -> list[Event]:
    """GM: approve the pending Fate request; the point is spent and its effect applied."""
    request = state["pending_fate"]
    if request is None:
        raise RuleError("There is no Fate request waiting for approval.", "no_request")
    if state["fate"] < 1:  # cannot happen through the actions; guards odd replays
        raise RuleError("The character has no Fate left to spend.", "no_fate")
    use = request["use"]
    payload = {"use": use, "detail": request["detail"], "fate_left": state["fate"] - 1}
    if use in ("reroll", "plus_two"):
        problem = _roll_use_problem(state, use, request["roll"])
        if problem:
            raise RuleError(problem, "no_roll")
        last = state["last_roll"]
        payload.update(roll=last["roll"], kind=last["kind"], original_total=last["total"])
        if last["kind"] == "check":
            payload.update(dl=last["dl"], original_outcome=_outcome(last["success"]))
        payload.update(_reroll(last, request["die"], dice) if use == "reroll" else _plus_two(last))
    if use == "ignore_attack" and state["sheet"]["options"].get("health", {}).get("enabled") and state.get("last_harm"):
        # "Ignore an attack that would have killed the character": with the health track on, the boxes
        # the last blow marked are cleared (docs/rules.md, WYRM 12).
        payload.update(harm_cleared=state["last_harm"], harm_after=max(0, state.get("harm", 0) - state["last_harm"]))
    return [Event("fate_spent", payload)]


def _reroll(last: dict, die: int, dice: DiceSource) -> dict:
    """Reroll the check's die (or one damage die), keeping the original dice for the log."""
    if last["kind"] == "check":
        odds = check_odds(last["bonus"], last["explodes"], last["dl"], last["ties_succeed"])
        new = roll_die(dice, last["explodes"])
        total = chain_total(new) + last["bonus"]
        success = _succeeds(total, last["dl"], last["ties_succeed"])
        return {
            "original_dice": last["dice"],
            "new_dice": new,
            "dice": new,
            "total": total,
            "success": success,
            "outcome": _outcome(success),
            "odds": odds_json(odds),
        }
    others = sum(chain_total(c) for i, c in enumerate(last["dice"]) if i != die - 1)
    odds = damage_odds(1, last["bonus"], others)
    new = roll_die(dice, True)
    chains = [new if i == die - 1 else c for i, c in enumerate(last["dice"])]
    total = others + chain_total(new) + last["bonus"]
    return {
        "die": die,
        "original_dice": last["dice"],
        "new_dice": new,
        "dice": chains,
        "total": total,
        "outcome": str(total),
        "odds": odds_json(odds),
    }


def _plus_two(last: dict) -> dict:
    total = last["total"] + FATE_BONUS
    success = _succeeds(total, last["dl"], last["ties_succeed"])
    return {"bonus": FATE_BONUS, "total": total, "success": success, "outcome": _outcome(success)}


@action("deny_fate", title="Deny the Fate request", by="gm", emits=("fate_denied",), fields={"reason": REASON})
def deny_fate(state: dict, action: Mapping, dice: DiceSource) -> list[Event]:
    """GM: refuse the pending Fate request; nothing is spent."""
    request = state["pending_fate"]
    if request is None:
        raise RuleError("There is no Fate request waiting for an answer.", "no_request")
    return [Event("fate_denied", {"use": request["use"], "roll": request["roll"], "reason": action["reason"]})]


@action("grant_fate", title="Grant Fate", by="gm", emits=("fate_granted",),
        help="For heroic actions, good role playing or goals achieved.",
        fields={"amount": Integer(1, MAX_FATE_GRANT, default=1, label="Fate"), "reason": REASON})
def grant_fate(state: dict, action: Mapping, dice: DiceSource) -> list[Event]:
    """GM: grant Fate for heroic actions, good role playing or goals achieved."""
    amount = action["amount"]
    if state["fate"] + amount > MAX_FATE:
        raise RuleError(f"A character can hold at most {MAX_FATE} Fate points.", "too_much")
    return [Event("fate_granted", {"amount": amount, "reason": action["reason"], "fate": state["fate"] + amount})]


# --- advancement -------------------------------------------------------------


@action("award_points", title="Award points", by="gm", emits=("points_awarded",),
        fields={"points": Integer(1, MAX_AWARD, label="Points"), "reason": REASON})
def award_points(state: dict, action: Mapping, dice: DiceSource) -> list[Event]:
    """GM: award advancement points."""
    points = action["points"]
    if state["points"]["earned"] + points > MAX_POINTS:
        raise RuleError(f"A character can earn at most {MAX_POINTS} points in all.", "too_much")
    return [Event("points_awarded", {"points": points, "reason": action["reason"]})]


@action(
    "buy_advance", title="Buy an advance", emits=("advance_bought",),
    help="Spend points to raise an attribute by one or learn a new skill.",
    fields={
        "advance": Choice([("attribute", "+1 attribute"), ("skill", "a new skill")], label="Buy"),
        "attribute": ATTRIBUTE,
        "skill": Text(MAX_NAME, label="Skill name", required_when={"advance": ["skill"]}),
    },
)
def buy_advance(state: dict, action: Mapping, dice: DiceSource) -> list[Event]:
    """Spend points to raise an attribute by one or learn a new skill."""
    kind = action["advance"]
    options = state["sheet"]["options"]
    available = state["points"]["earned"] - state["points"]["spent"]
    attribute = action["attribute"]
    if kind == "attribute":
        now = state["attributes"][attribute]
        if now >= options["attribute_max"]:
            raise RuleError(f"{attribute.title()} is already {now}, the highest this campaign allows.", "at_max")
        cost = options["advance_costs"]["attribute"]
        what = f"Raising {attribute.title()} to {now + 1}"
        payload = {"advance": "attribute", "attribute": attribute, "from": now, "to": now + 1}
    else:
        name = action["skill"]
        if find_skill(state["skills"], name):
            raise RuleError(f"Your character already knows '{name}'.", "known")
        if len(state["skills"]) >= MAX_SKILLS:
            raise RuleError(f"A character can know at most {MAX_SKILLS} skills.", "at_max")
        cost = options["advance_costs"]["skill"]
        what = f"Learning {name}"
        payload = {"advance": "skill", "skill": name, "attribute": attribute}
    if cost > available:
        raise RuleError(f"{what} costs {cost} points; you have {available}.", "cannot_afford")
    payload.update(cost=cost, points_left=available - cost)
    return [Event("advance_bought", payload)]


ACTIONS = actions_by_type(
    check, damage, automatic_success, spend_fate, approve_fate, deny_fate, grant_fate, award_points, buy_advance,
    # The health track house rule (off unless the campaign turns it on; rules/health.py).
    *health.actions(health_boxes),
    # Conditions with a duration (rules/conditions.py): a circumstantial DL modifier while they last.
    *conditions.actions("DL modifier", "Added to the DL of the character's attribute checks while it lasts."),
)
