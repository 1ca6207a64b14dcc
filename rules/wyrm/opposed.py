"""WYRM against other characters: an opposed check naming its opponent (rules/contests.py) and
rounds of opposed checks of several sides (rules/fights.py), wired into ``SYSTEM`` as its
``contests`` and ``fights`` hooks. An opposed check is one roll that changes neither sheet.

Fights (wyrm-srd-rules-mechanics.txt:21-25): "the DL of the active character is determined by a
roll made by the passive character". Setting ``fights.passive_rolls``: ``each`` (a passive side rolls
once per exchange against it) or ``once`` (one roll sets its DL for every exchange against it this
round).
"""

from __future__ import annotations

from typing import Mapping

from ..base import Contests, DiceSource, FightKind, Fights, RuleError, odds_json
from ..conditions import effect, in_fight
from ..contests import given
from ..options import complete
from ..sides import Side, choose_against, exchanges_chosen, read_exchanges
from .actions import chain_total, roll_die
from .odds import opposed_odds
from .settings import OPTIONS
from .sheet import find_skill, parse_attribute

# --- an opposed check naming its opponent ----------------------------------------------------


def fill(action: dict, opponent: Mapping) -> dict:
    """The passive side's numbers (``vs``): its attribute, how many of its skills apply, static or rolled."""
    given(action, "vs", "dl")
    attribute = parse_attribute(action.get("vs_attribute") or action.get("attribute"), "vs_attribute")
    names = action.get("vs_skills") or []
    if not isinstance(names, list) or len(names) > 2:
        raise RuleError("'vs_skills' must list at most two of the opponent's skills.", "invalid")
    known = []
    for name in names:
        skill = find_skill(opponent["skills"], name)
        if skill is None:
            raise RuleError(f"The opponent does not know '{str(name)[:40]}'.", "invalid")
        known.append(skill["name"])
    static = action.get("vs_static", False)
    if not isinstance(static, bool):
        raise RuleError("'vs_static' must be true or false.", "invalid")
    return {"vs": {"attribute": opponent["attributes"][attribute], "skills": len(known), "static": static}}


def fill_opposed(action: dict, opponent: Mapping) -> dict:
    """An opposed check's passive side, as :func:`fill` reads it, with its conditions' DL modifier
    (``conditions``, only when it has one: the check reads it where the campaign does,
    rules/wyrm/odds.py ``check_spec``)."""
    filled = fill(action, opponent)
    passive = effect(opponent)[0]
    if passive:
        filled["vs"]["conditions"] = passive
    return filled


CONTESTS = Contests(opposable=frozenset({"check"}), fill=fill_opposed)


# --- rounds of opposed checks of several sides -------------------------------------------------

WYRM_PASSIVE_ROLLS = ("each", "once")


def wyrm_opposed_round(sides: Mapping[Side, Mapping], exchanges, dice: DiceSource, ties_succeed: bool = True,
                       passive_rolls: str = "each") -> dict:
    """Opposed checks of several sides (wyrm-srd-rules-mechanics.txt:21-25): in each exchange ``by``
    is active and ``against`` passive. ``sides[s]``: ``{"bonus": attribute + skill bonuses,
    "explodes": a skill applies}`` (a side's numbers as active and passive are the same here), and
    ``"modifier"``: its conditions' DL modifier on its checks as the active side, and
    ``"passive_modifier"``: the same as the passive side, taken off the DL its roll sets (campaign
    setting ``conditions.passive``; rules/conditions.py).

    Dice, in order, exchange by exchange: the passive side's die and its explosions (``once``: only
    at its first exchange; its later ones read the same DL), then the active side's."""
    if passive_rolls not in WYRM_PASSIVE_ROLLS:
        raise RuleError(f"'passive_rolls' must be one of {', '.join(WYRM_PASSIVE_ROLLS)}.", "invalid")
    pairs = read_exchanges(exchanges, sides)
    set_dl: dict[Side, dict] = {}
    out = []
    for by, against in pairs:
        a, p = sides[by], sides[against]
        modifier = a.get("modifier", 0) - p.get("passive_modifier", 0)
        chances = opposed_odds(a["bonus"], a["explodes"], p["bonus"], p["explodes"], modifier, ties_succeed)
        if passive_rolls == "once" and against in set_dl:
            passive = set_dl[against]
        else:
            chain = roll_die(dice, p["explodes"])
            passive = {"dice": chain, "dl": chain_total(chain) + p["bonus"]}
            set_dl[against] = passive
        chain = roll_die(dice, a["explodes"])
        total = chain_total(chain) + a["bonus"]
        dl = passive["dl"] + modifier
        success = total >= dl if ties_succeed else total > dl
        out.append({"by": by, "against": against, "passive": passive, "dice": chain, "total": total,
                    **({"modifier": modifier, "dl": dl} if modifier else {}),
                    "outcome": "success" if success else "failure", "odds": odds_json(chances)})
    return {"kind": "opposed", "passive_rolls": passive_rolls, "exchanges": out}


def _entry(state: Mapping, spec: Mapping) -> dict:
    """A side's numbers, as an opposed check reads an opponent's: the ``attribute`` and ``skills`` the
    GM names."""
    filled = fill({"type": "check", "vs_attribute": spec.get("attribute"), "vs_skills": spec.get("skills") or []},
                  state)["vs"]
    return {"bonus": filled["attribute"] + 2 * filled["skills"], "explodes": filled["skills"] > 0}


def _round(fight: Mapping, standing: list[Side], choices: Mapping, dice: DiceSource, after: dict):
    exchanges = exchanges_chosen(standing, choices)
    settings = fight["settings"]
    # "The GM may add circumstantial modifiers to any DL" (wyrm-srd-rules-mechanics.txt:31): the
    # active side's conditions', this round, less the passive side's where the campaign reads them
    # (rules/conditions.py).
    passive = settings.get("passive_conditions", False)
    sides = {s: {**fight["entries"][s], **({"modifier": in_fight(fight, s)} if in_fight(fight, s) else {}),
                 **({"passive_modifier": in_fight(fight, s)} if passive and in_fight(fight, s) else {})}
             for s in standing}
    result = wyrm_opposed_round(sides, exchanges, dice,
                                settings["ties_succeed"], settings["passive_rolls"])
    return result, None


def _settings(state: Mapping) -> dict:
    chosen = complete(OPTIONS, state["sheet"].get("options"))
    return {"ties_succeed": chosen["ties_succeed"], "passive_rolls": chosen["fights"]["passive_rolls"],
            "passive_conditions": chosen["conditions"]["passive"]}


FIGHTS = Fights(kinds=(FightKind("opposed", "an opposed test", _entry, choose_against, _round),), settings=_settings)
