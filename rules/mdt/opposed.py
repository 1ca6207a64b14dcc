"""MdT against other characters: an opposed test or a race naming its opponent (rules/contests.py)
and fights of several sides (rules/fights.py), wired into ``SYSTEM`` as its ``contests`` and
``fights`` hooks.

Fights (mundo-das-trevas-lite-testes.pt.txt:24): "quem obter mais sucessos, ou um certo número de
sucessos primeiro ... vence": every side rolls the same attribute; the most successes wins alone (a
tie at the top: nobody), and a race is won by the one side ahead once anyone reaches the target
(equal leaders race on, as two sides do: docs/rules.md MdT 16).
"""

from __future__ import annotations

from fractions import Fraction
from typing import Mapping

from ..base import Contests, DiceSource, Event, FightKind, Fights, RuleError, odds_json
from ..conditions import effect, in_fight
from ..contests import given, text
from ..options import complete
from ..sides import Side, best_alone, no_choice
from .actions import roll_pool
from .odds import successes
from .settings import OPTIONS
from .sheet import ATTRIBUTES, find_specialization

# --- a contest naming its opponent -----------------------------------------------------------

OPPOSABLE = frozenset({"opposed_test", "start_contest"})
# A race holds the opponent's standing pool on each side from its start (docs/rules.md MdT 17), and
# its side of a round or an end is that event swapped (:func:`side_view` gets no state): these
# continue it, decided from the acting side alone, so nothing hidden in the opponent's state shapes
# them (campaign/actions/contests.py).
CONTINUING = frozenset({"contest_round", "end_contest"})


def fill(action: dict, opponent: Mapping) -> dict:
    """The opponent's pool: 1 + the attribute + a specialization, as the character's own pool."""
    given(action, "vs_pool")
    attribute = action.get("vs_attribute") or action.get("attribute")
    attribute = attribute.strip().lower() if isinstance(attribute, str) else attribute
    if not isinstance(attribute, str) or attribute not in ATTRIBUTES:
        raise RuleError(f"'vs_attribute' must be one of {', '.join(ATTRIBUTES)}.", "invalid")
    sheet = opponent["sheet"]
    rating, name = 0, None
    if text(action.get("vs_specialization"), "vs_specialization"):
        name = find_specialization(sheet["specializations"], action["vs_specialization"])
        if name is None:
            raise RuleError("The opponent has no such specialization.", "invalid")
        rating = sheet["specializations"][name]
    # "both characters roll the same attribute": 1 + attribute + specialization, as the character's own pool.
    filled = {"vs_pool": 1 + sheet["attributes"][attribute] + rating}
    if action["type"] == "start_contest":
        if opponent.get("contest") or opponent.get("fight"):
            raise RuleError("The opponent is already in a race or a fight: it must end first.")
        # The opponent's side of the race recomputes its pool from these, as the acting side does.
        filled.update(vs_attribute=attribute, vs_specialization=name)
    return filled


def fill_opposed(action: dict, opponent: Mapping) -> dict:
    """:func:`fill`, and for an opposed test the opponent's conditions' dice (``vs_conditions``, only
    when it has some): both roll, each with its own circumstances (docs/rules.md, Conditions 8). A
    race keeps the opponent's standing pool from its start and reads nothing of it later."""
    filled = fill(action, opponent)
    if action["type"] == "opposed_test":
        if action.get("vs_conditions") is not None:
            raise RuleError("'vs_conditions' is read from the opponent's sheet: leave it out.", "invalid")
        dice = effect(opponent)[0]
        if dice:
            filled["vs_conditions"] = dice
    return filled


_RACE_OUTCOMES = {"win": "loss", "loss": "win"}


def side_view(event: Event, opponent: dict | None, actor_id: int, actor_name: str = "") -> dict | None:
    """A race event as the opponent reads it: the same race, the counts and rolls swapped. An opposed
    test is one roll that changes neither sheet."""
    p = event.payload
    if event.type == "contest_started":
        if p.get("opponent") is None:
            return None
        return {"label": p["label"], "attribute": p["vs_attribute"], "specialization": p["vs_specialization"],
                "modifier": 0, "vs_pool": p["pool"], "target": p["target"], "mine": 0, "theirs": 0, "round": 0,
                "opponent": actor_id, "pool": p["vs_pool"], "vs_attribute": p["attribute"],
                "vs_specialization": p["specialization"], "opponent_name": actor_name}
    if event.type == "contest_round_rolled":
        outcome = _RACE_OUTCOMES.get(p["outcome"], p["outcome"])
        return {"label": p["label"], "round": p["round"], "target": p["target"],
                "carried_in": {"mine": p["carried_in"]["theirs"], "theirs": p["carried_in"]["mine"]},
                "pool": p["vs_pool"], "vs_pool": p["pool"], "roll": p["opponent_roll"], "opponent_roll": p["roll"],
                "mine": p["theirs"], "theirs": p["mine"], "outcome": outcome, "finished": p["finished"],
                "success": outcome == "win", "dramatic_failure": p["opponent_roll"]["dramatic_failure"]}
    if event.type == "contest_ended":
        return {**p, "mine": p["theirs"], "theirs": p["mine"]}
    return None


CONTESTS = Contests(opposable=OPPOSABLE, fill=fill_opposed, continuing=CONTINUING, sided=CONTINUING | {"start_contest"},
                    own_side_only=CONTINUING, side_view=side_view)


# --- fights of several sides -------------------------------------------------------------------


def _distribution(pool: int, luck_ten: int) -> list[Fraction]:
    return list(successes(pool, luck_ten))


def mdt_opposed_odds(pools: Mapping[Side, int], luck_ten: int = 1) -> dict[str, Fraction]:
    """P(each side has the most successes alone), and ``none`` (a tie at the top)."""
    dists = {s: _distribution(n, luck_ten) for s, n in pools.items()}
    chances = {s: best_alone(dists, s, lambda k: True) for s in pools}
    return {**chances, "none": 1 - sum(chances.values())}


def mdt_opposed(pools: Mapping[Side, int], dice: DiceSource, options: Mapping) -> dict:
    """An opposed test of several sides (mundo-das-trevas-lite-testes.pt.txt:24): all roll the same
    attribute; the most successes wins, alone. Dice, in order: each side's pool, sides in order."""
    chances = mdt_opposed_odds(pools, options["luck_ten_successes"])
    rolls = {s: roll_pool(dice, n, options) for s, n in pools.items()}
    best = max(r["successes"] for r in rolls.values())
    top = [s for s, r in rolls.items() if r["successes"] == best]
    return {"kind": "opposed", "rolls": rolls, "winner": top[0] if len(top) == 1 else None,
            "odds": odds_json(chances)}


def mdt_race_odds(sides: Mapping[Side, Mapping], target: int, luck_ten: int = 1) -> dict[str, Fraction]:
    """P(each side wins the race this round), and ``continue``: ``sides[s]`` is ``{"pool", "mine"}``."""
    dists = {}
    for s, info in sides.items():
        shifted = [Fraction(0)] * info["mine"] + _distribution(info["pool"], luck_ten)
        dists[s] = shifted
    chances = {s: best_alone(dists, s, lambda k: k >= target) for s in sides}
    return {**chances, "continue": 1 - sum(chances.values())}


def mdt_race_round(sides: Mapping[Side, Mapping], target: int, dice: DiceSource, options: Mapping) -> dict:
    """One round of a race of several sides to ``target`` successes. ``sides[s]``: ``{"pool", "mine"}``
    (successes so far). Dice, in order: each side's pool, sides in order. Once any side reaches the
    target, the side ahead of every other wins; equal leaders race on (docs/rules.md MdT 16)."""
    chances = mdt_race_odds(sides, target, options["luck_ten_successes"])
    rolls = {s: roll_pool(dice, info["pool"], options) for s, info in sides.items()}
    totals = {s: sides[s]["mine"] + rolls[s]["successes"] for s in sides}
    best = max(totals.values())
    top = [s for s, t in totals.items() if t == best]
    winner = top[0] if best >= target and len(top) == 1 else None
    return {"kind": "race", "target": target, "rolls": rolls, "totals": totals, "winner": winner,
            "finished": winner is not None, "odds": odds_json(chances)}


def _entry(state: Mapping, spec: Mapping) -> dict:
    """A side's pool, as an opposed test reads an opponent's: the ``attribute`` and ``specialization``
    the GM names."""
    filled = fill({"type": "opposed_test", "vs_attribute": spec.get("attribute"),
                   "vs_specialization": spec.get("specialization")}, state)
    return {"pool": filled["vs_pool"], "mine": 0}


def _race_round(fight: Mapping, standing: list[Side], choices: Mapping, dice: DiceSource, after: dict):
    # A side's conditions add or take dice this round (mundo-das-trevas-lite-testes.pt.txt:3, rules/conditions.py).
    sides = {s: {**fight["entries"][s], "pool": fight["entries"][s]["pool"] + in_fight(fight, s)} for s in standing}
    result = mdt_race_round(sides, fight["target"], dice, fight["settings"])
    for s in standing:
        after[s]["mine"] = result["totals"][s]
    ended = None if result["winner"] is None else {"winner": fight["teams"][result["winner"]],
                                                   "reason": "target_reached"}
    return result, ended


def _opposed_round(fight: Mapping, standing: list[Side], choices: Mapping, dice: DiceSource, after: dict):
    result = mdt_opposed({s: fight["entries"][s]["pool"] + in_fight(fight, s) for s in standing}, dice,
                         fight["settings"])
    winner = result["winner"]
    return result, {"winner": None if winner is None else fight["teams"][winner],
                    "reason": "most_successes" if winner is not None else "tie"}


def _settings(state: Mapping) -> dict:
    chosen = complete(OPTIONS, state["sheet"].get("options"))
    return {k: chosen[k] for k in ("luck_ten_successes", "luck_dramatic_failure")}


FIGHTS = Fights(
    kinds=(FightKind("race", "a race", _entry, no_choice, _race_round, target=True),
           FightKind("opposed", "an opposed test", _entry, no_choice, _opposed_round)),
    settings=_settings,
)
