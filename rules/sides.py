"""Reading a round of several sides, for every system's fights (rules/fights.py) and their odds. Pure.

Sides are named by strings (a character's id as the log's JSON keys it); a round names its exchanges,
who acts against whom (``{"by": side, "against": side}``).
"""

from __future__ import annotations

from fractions import Fraction
from typing import Iterable, Mapping

from .base import RuleError

MAX_SIDES = 12
MAX_EXCHANGES = 66  # every pair of twelve sides

Side = str


def read_sides(sides, minimum: int = 2) -> list[Side]:
    """The round's sides, in the order they act (and roll)."""
    if not isinstance(sides, list) or not minimum <= len(sides) <= MAX_SIDES:
        raise RuleError(f"A fight has {minimum} to {MAX_SIDES} sides.", "invalid")
    named = [str(s) for s in sides]
    if len(set(named)) != len(named) or any(not s or len(s) > 40 for s in named):
        raise RuleError("Each side of a fight is named once.", "invalid")
    return named


def read_exchanges(exchanges, sides: Iterable[Side]) -> list[tuple[Side, Side]]:
    """``[(by, against), ...]``: who acts against whom, each pair of distinct sides at most once."""
    known = set(sides)
    if not isinstance(exchanges, list) or not 1 <= len(exchanges) <= MAX_EXCHANGES:
        raise RuleError(f"A round names 1 to {MAX_EXCHANGES} exchanges (who acts against whom).", "invalid")
    pairs = []
    for x in exchanges:
        if not isinstance(x, Mapping) or str(x.get("by")) not in known or str(x.get("against")) not in known:
            raise RuleError("Each exchange names two sides of the fight: 'by' and 'against'.", "invalid")
        pair = (str(x["by"]), str(x["against"]))
        if pair[0] == pair[1]:
            raise RuleError("A side can't act against itself.", "invalid")
        if pair in pairs:
            raise RuleError("Each exchange is named once a round.", "invalid")
        pairs.append(pair)
    return pairs


def choose_against(fight: Mapping, standing: list[Side], side: Side, choice: Mapping) -> dict:
    """A side's choice that names whom it acts against: ``{"against": [side, ...]}``."""
    against = choice.get("against") or []
    if not isinstance(against, list) or any(str(a) not in standing or str(a) == side for a in against) \
            or len(set(map(str, against))) != len(against):
        raise RuleError("'against' lists other sides still in the fight, each once.", "invalid")
    return {"against": [str(a) for a in against]}


def no_choice(fight: Mapping, standing: list[Side], side: Side, choice: Mapping) -> dict:
    """A side's choice where every side simply rolls: nothing to choose."""
    return {}


def exchanges_chosen(standing: list[Side], choices: Mapping[Side, dict]) -> list[dict]:
    """The round's exchanges, from each standing side's ``against``; refused when nobody acts."""
    exchanges = [{"by": s, "against": a} for s in standing for a in choices.get(s, {}).get("against", [])]
    if not exchanges:
        raise RuleError("Nobody acts against anybody this round: name whom each side acts against.")
    return exchanges


def count(value, what: str, hi: int) -> int:
    """A number of dice from 0 to ``hi``, or :class:`RuleError` naming ``what``."""
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= hi:
        raise RuleError(f"{what} must be a whole number of dice from 0 to {hi}.", "invalid")
    return value


def descending(faces: list[int]) -> list[int]:
    return sorted(faces, reverse=True)


def best_alone(totals: Mapping[Side, list[Fraction]], me: Side, finished) -> Fraction:
    """P(``me`` ends the round alone ahead of every other side), ``totals[side][k]`` being P(its total is
    ``k``) and ``finished(total)`` saying which totals count at all (a race: only those at the target)."""
    def below(side: Side, t: int) -> Fraction:  # P(side's total < t, or it does not count)
        return sum((p for k, p in enumerate(totals[side]) if k < t or not finished(k)), Fraction(0))

    return sum((p * _product(below(o, k) for o in totals if o != me)
                for k, p in enumerate(totals[me]) if p and finished(k)), Fraction(0))


def _product(values: Iterable[Fraction]) -> Fraction:
    out = Fraction(1)
    for v in values:
        out *= v
    return out
