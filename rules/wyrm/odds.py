"""Exact WYRM odds, as Fractions, and the reading of rolling actions into specs.

One die is rolled per check (a d6); where a skill applies a 6 "explodes": the
die is rolled again and added, again and again on further 6s, up to
``EXPLOSION_CAP`` extra rolls. A 6 on the last allowed roll counts 6 and stops.
The odds here are computed for exactly that capped die, so they are the odds
of what the action functions can actually roll. (The cap removes only totals
above 36, which an uncapped die reaches with probability 6**-6 = 1/46656.)

The specs (``CheckSpec``, ``DamageSpec``) are read here, not in ``actions``,
because both the actions and ``preview`` need the same reading of an action.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from typing import Any, Mapping

from .. import conditions
from ..base import RuleError, require_int
from .sheet import ATTRIBUTE_HARD_MAX, find_skill, read_bool

EXPLOSION_CAP = 5  # extra rolls one die may add by exploding
SKILL_BONUS = 2
STATIC_OPPOSITION = 3  # "just add 3 to the relevant attribute (and the skill bonus)"
MAX_SKILLS_PER_CHECK = 2  # one skill gives +2, a second (if allowed) +2 more
MAX_DL = 60
MAX_MODIFIER = 20
MAX_DAMAGE_DICE = 3
MAX_DAMAGE_BONUS = 20

Odds = dict[str, Fraction]


# --- the capped exploding d6 -------------------------------------------------


@lru_cache(maxsize=None)
def die_counts(explodes: bool) -> tuple[tuple[tuple[int, int], ...], int]:
    """``(((total, ways), ...), rolls)``: one d6, exploding (capped) or plain, in
    whole numbers of ways out of ``rolls`` (Fractions only at the end: exact
    Fraction arithmetic in these loops cost milliseconds per form)."""
    if not explodes:
        return tuple((face, 1) for face in range(1, 7)), 6
    rolls = 6 ** (EXPLOSION_CAP + 1)
    ways = []
    for k in range(EXPLOSION_CAP + 1):  # the k-th die of the chain: (1/6)**(k+1) per face
        ways.extend((6 * k + face, 6 ** (EXPLOSION_CAP - k)) for face in range(1, 6))
    ways.append((6 * (EXPLOSION_CAP + 1), 1))  # the capped last 6
    return tuple(ways), rolls


@lru_cache(maxsize=None)
def die_distribution(explodes: bool) -> tuple[tuple[int, Fraction], ...]:
    """``((total, probability), ...)`` of one d6, exploding (capped) or plain."""
    ways, rolls = die_counts(explodes)
    return tuple((total, Fraction(count, rolls)) for total, count in ways)


@lru_cache(maxsize=None)
def _ways_at_least(need: int, explodes: bool) -> int:
    return sum(count for total, count in die_counts(explodes)[0] if total >= need)


@lru_cache(maxsize=None)
def p_at_least(need: int, explodes: bool) -> Fraction:
    """Probability that one check die totals ``need`` or more."""
    return Fraction(_ways_at_least(need, explodes), die_counts(explodes)[1])


def check_odds(bonus: int, explodes: bool, dl: int, ties_succeed: bool = True) -> Odds:
    """Odds of d6 (+explosions) + ``bonus`` against a fixed difficulty level."""
    need = dl - bonus + (0 if ties_succeed else 1)
    success = p_at_least(need, explodes)
    return {"success": success, "failure": 1 - success}


@lru_cache(maxsize=None)
def _opposed_success(bonus: int, explodes: bool, vs_bonus: int, vs_explodes: bool, modifier: int, ties: bool) -> Fraction:
    # The passive side's total (+ the modifier) is the DL; sum over its dice.
    ways, rolls = die_counts(vs_explodes)
    above = 0 if ties else 1
    hits = sum(count * _ways_at_least(total + vs_bonus + modifier - bonus + above, explodes) for total, count in ways)
    return Fraction(hits, rolls * die_counts(explodes)[1])


def opposed_odds(bonus: int, explodes: bool, vs_bonus: int, vs_explodes: bool, modifier: int = 0, ties_succeed: bool = True) -> Odds:
    """Odds of an opposed check where the passive side rolls to set the DL."""
    success = _opposed_success(bonus, explodes, vs_bonus, vs_explodes, modifier, ties_succeed)
    return {"success": success, "failure": 1 - success}


@lru_cache(maxsize=None)
def _sum_of_dice(dice: int) -> tuple[tuple[int, Fraction], ...]:
    ways, rolls = die_counts(True)
    dist = {0: 1}
    for _ in range(dice):
        nxt: dict[int, int] = {}
        for total, count in dist.items():
            for face, per_die in ways:
                nxt[total + face] = nxt.get(total + face, 0) + count * per_die
        dist = nxt
    whole = rolls ** dice
    return tuple((total, Fraction(count, whole)) for total, count in sorted(dist.items()))


def damage_odds(dice: int, bonus: int, fixed: int = 0) -> Odds:
    """Distribution of a damage total: ``dice`` exploding d6s + ``bonus`` (+ ``fixed``).

    Keys are totals as strings, in increasing order (``fixed`` is used by a
    reroll: the dice that are not rerolled).
    """
    return {str(total + bonus + fixed): p for total, p in _sum_of_dice(dice)}


# --- specs: what a rolling action asks for ----------------------------------


@dataclass(frozen=True)
class CheckSpec:
    """Everything a check needs before its dice are rolled."""

    attribute: str | None  # None in the raw (state-less) form
    attribute_value: int
    skills: tuple[str, ...]  # names of the skills that help (raw form: empty)
    skill_count: int
    dl: int | None  # the GM's DL, for an unopposed check
    vs: tuple[int, int, bool] | None  # passive (attribute, skills, static)
    modifier: int  # circumstantial modifier, added to the DL
    ties_succeed: bool
    task: str | None = None
    conditions: tuple = ()  # the conditions whose modifier ``modifier`` includes (rules/conditions.py)
    # The passive side's conditions' DL modifier as this check counts it (``conditions.passive``),
    # taken off ``modifier``: its roll is its check, so what makes its checks harder lowers the DL it sets.
    vs_conditions: int = 0

    @property
    def bonus(self) -> int:
        return self.attribute_value + SKILL_BONUS * self.skill_count

    @property
    def explodes(self) -> bool:
        return self.skill_count >= 1

    @property
    def vs_bonus(self) -> int:
        assert self.vs is not None
        return self.vs[0] + SKILL_BONUS * self.vs[1]

    @property
    def fixed_dl(self) -> int | None:
        """The DL when no die sets it (unopposed, or opposed with the static +3)."""
        if self.vs is None:
            return self.dl + self.modifier
        if self.vs[2]:
            return self.vs_bonus + STATIC_OPPOSITION + self.modifier
        return None

    def odds(self) -> Odds:
        if self.fixed_dl is not None:
            return check_odds(self.bonus, self.explodes, self.fixed_dl, self.ties_succeed)
        return opposed_odds(self.bonus, self.explodes, self.vs_bonus, self.vs[1] >= 1, self.modifier, self.ties_succeed)


def _read_difficulty(action: Mapping) -> tuple[int | None, tuple[int, int, bool] | None, int]:
    has_dl, has_vs = action.get("dl") is not None, action.get("vs") is not None
    if has_dl == has_vs:
        raise RuleError("A check needs either 'dl' (a difficulty set by the GM) or 'vs' (the passive side), not both.", "invalid")
    modifier = require_int(action, "modifier", -MAX_MODIFIER, MAX_MODIFIER, default=0)
    if has_dl:
        return require_int(action, "dl", 0, MAX_DL), None, modifier
    vs = action["vs"]
    if not isinstance(vs, dict):
        raise RuleError("'vs' must be an object like {\"attribute\": 2, \"skills\": 1, \"static\": false}.", "invalid")
    attribute = require_int(vs, "attribute", 0, ATTRIBUTE_HARD_MAX)
    skills = require_int(vs, "skills", 0, MAX_SKILLS_PER_CHECK, default=0)
    return None, (attribute, skills, read_bool(vs, "static")), modifier


def raw_check_spec(action: Mapping) -> CheckSpec:
    """Read the state-less form ``{"type": "check", "attribute": 3, "skills": 1, "dl": 9}`` (``vs`` may
    give the passive side's ``conditions``)."""
    if isinstance(action.get("attribute"), str):
        raise RuleError("In the odds form 'attribute' is the rating, a whole number (e.g. 3).", "invalid")
    attribute = require_int(action, "attribute", 0, ATTRIBUTE_HARD_MAX)
    skills = require_int(action, "skills", 0, MAX_SKILLS_PER_CHECK, default=0)
    dl, vs, modifier = _read_difficulty(action)
    passive = 0 if vs is None else require_int(action["vs"], "conditions", -conditions.MAX_EFFECT,
                                                conditions.MAX_EFFECT, default=0)
    return CheckSpec(None, attribute, (), skills, dl, vs, modifier - passive, read_bool(action, "ties_succeed", True),
                     vs_conditions=passive)


def check_spec(state: Mapping, action: Mapping) -> CheckSpec:
    """Read a character's check, already validated by its declaration
    (``rules.wyrm.actions.check``): ``attribute`` is a name, ``skills`` the names
    that help. Only what depends on the character is checked here."""
    names: list[str] = []
    for raw in action["skills"]:
        skill = find_skill(state["skills"], raw)
        if skill is None:
            raise RuleError(f"Your character does not know the skill '{raw[:80]}'.", "no_skill")
        if skill["name"] in names:
            raise RuleError(f"The skill '{skill['name']}' is named twice.", "invalid")
        names.append(skill["name"])
    if len(names) == 2 and not (action["gm_allows_second_skill"] or state["sheet"]["options"]["second_skill_bonus"]):
        raise RuleError("A second skill adds +2 only when the GM allows it; ask your GM.", "not_allowed")
    vs = action["vs"]
    # "The GM may add circumstantial modifiers to any DL" (wyrm-srd-rules-mechanics.txt:31): a
    # condition's, while it lasts, on top of the one the check names (rules/conditions.py).
    circumstances, applied = conditions.effect(state)
    # The passive side's (filled from its state, rules/wyrm/opposed.py ``fill``), where the campaign reads them.
    passive = vs.get("conditions", 0) if vs is not None and passive_conditions_count(state) else 0
    return CheckSpec(
        action["attribute"],
        state["attributes"][action["attribute"]],
        tuple(names),
        len(names),
        action["dl"],
        None if vs is None else (vs["attribute"], vs["skills"], vs["static"]),
        action["modifier"] + circumstances - passive,
        state["sheet"]["options"]["ties_succeed"],
        action["task"],
        tuple(applied),
        passive,
    )


def passive_conditions_count(state: Mapping) -> bool:
    """Campaign setting ``conditions.passive`` (docs/rules.md, Conditions 5); on in a log from before it."""
    return (state["sheet"]["options"].get("conditions") or {}).get("passive", True)


@dataclass(frozen=True)
class DamageSpec:
    """A damage roll: ``dice`` exploding d6s plus a flat ``bonus``."""

    dice: int
    bonus: int

    def odds(self) -> Odds:
        return damage_odds(self.dice, self.bonus)


def damage_spec(action: Mapping) -> DamageSpec:
    """Read ``{"type": "damage", "dice": 1, "bonus": 2}`` (``dice`` defaults to 1)."""
    return DamageSpec(
        require_int(action, "dice", 1, MAX_DAMAGE_DICE, default=1),
        require_int(action, "bonus", 0, MAX_DAMAGE_BONUS, default=0),
    )


# --- the two public entry points --------------------------------------------


def odds(action: Any) -> Odds:
    """Exact odds of a raw rolling action (the forms ``manage.py odds`` accepts).

    ``{"type": "check", "attribute": 3, "skills": 1, "dl": 9}`` (or ``"vs"``
    instead of ``"dl"``; optional ``"modifier"``, ``"ties_succeed"``) gives
    ``{"success": p, "failure": 1 - p}``; ``{"type": "damage", "dice": 1,
    "bonus": 2}`` gives the probability of every total.
    """
    if not isinstance(action, dict):
        raise RuleError("An action must be a JSON object.", "invalid")
    kind = action.get("type")
    if kind == "check":
        return raw_check_spec(action).odds()
    if kind == "damage":
        return damage_spec(action).odds()
    raise RuleError("WYRM odds exist for 'check' and 'damage' only.", "no_odds")


def preview(state: Mapping, action: Mapping) -> Odds:
    """Exact odds of a check or damage roll this character is about to make
    (``action`` validated by its declaration: ``RuleSystem.preview`` does that)."""
    kind = action["type"]
    if kind == "check":
        return check_spec(state, action).odds()
    if kind == "damage":
        return damage_spec(action).odds()
    return {}  # an action that rolls nothing has no odds (the same in every system)
