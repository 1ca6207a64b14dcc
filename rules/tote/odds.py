"""Exact odds of TOTE's rolls, as :class:`fractions.Fraction`.

The dice rules live here once (which skill die is selected, what is a
critical, how effect dice score) so the actions and the odds cannot disagree.

Skill tests count the rolls of the skill dice by the value selected and
whether a 1 shows (closed forms, checked against enumerating every roll in
the tests), then the Paragon die. Everything is counted in whole numbers of
ways, with one Fraction per probability returned: exact Fraction arithmetic
in the loops cost milliseconds per form.
"""

from __future__ import annotations

from fractions import Fraction
from functools import lru_cache
from typing import Iterable, Sequence

FACES = range(1, 7)


# --- the dice rules ------------------------------------------------------------


def select_skill_die(faces: Sequence[int], blocked: Iterable[int]) -> int | None:
    """Index of the skill die to select: the highest face not blocked by injuries.

    The first of equal faces wins. ``None`` when no die can be selected (no
    skill dice, or every face blocked): the skill die then counts 0.
    Selecting the highest is always best: the Paragon is rolled after the
    selection and criticals look at every skill die, selected or not.
    """
    blocked = set(blocked)
    best = None
    for i, face in enumerate(faces):
        if face not in blocked and (best is None or face > faces[best]):
            best = i
    return best


def is_critical(faces: Sequence[int], paragon: int) -> bool:
    """A Paragon 1 with at least one skill die showing 1, selected, blocked or not."""
    return paragon == 1 and 1 in faces


def effect_score(faces: Sequence[int], mode: str, threshold: int) -> int:
    """What effect dice are worth: their sum, or how many show ``threshold`` or more."""
    if mode == "sum":
        return sum(faces)
    return sum(1 for face in faces if face >= threshold)


# --- exact distributions -------------------------------------------------------


@lru_cache(maxsize=512)
def _skill_dice_table(rating: int, blocked: frozenset) -> tuple:
    """``((selected_value, any_one), count), ...`` over all 6**rating rolls.

    The selected value is the highest unblocked face (0 if none). Rolls whose
    selected value is at most v show only blocked faces and unblocked faces up
    to v: ``len(allowed(v)) ** rating`` of them; "exactly v" is the difference,
    and the rolls without a 1 are counted the same way over faces 2..6.
    """
    def upto(value: int) -> tuple[int, int]:
        """(rolls without a 1, rolls with a 1) whose selected value is at most ``value``."""
        allowed = [face for face in FACES if face in blocked or face <= value]
        every, no_one = len(allowed) ** rating, len([f for f in allowed if f != 1]) ** rating
        return no_one, every - no_one

    table = {}
    below = (0, 0)
    for value in [0] + [face for face in FACES if face not in blocked]:
        here = upto(value)
        for any_one in (False, True):
            if here[any_one] - below[any_one]:
                table[(value, any_one)] = here[any_one] - below[any_one]
        below = here
    return tuple(sorted(table.items()))


def skill_test_odds(rating: int, bonus: int, target: int, blocked: Iterable[int] = ()) -> dict[str, Fraction]:
    """Exact odds of a skill test: ``success``, ``failure`` and ``critical``.

    ``rating`` skill dice (0..5) plus the Paragon; ``bonus`` is everything added
    to the two dice (specialization, modifiers, the GM's aspect penalty);
    success is a total of ``target`` or more. ``critical`` overlaps the other two.
    """
    # A fresh dict each call: the cached tuple must never be mutated by a caller.
    return dict(_skill_test_odds(rating, bonus, target, frozenset(blocked)))


@lru_cache(maxsize=4096)
def _skill_test_odds(rating: int, bonus: int, target: int, blocked: frozenset) -> tuple:
    total_rolls = 6 ** (rating + 1)
    success = critical = 0
    for (selected, any_one), count in _skill_dice_table(rating, blocked):
        for paragon in FACES:
            if selected + paragon + bonus >= target:
                success += count
            if paragon == 1 and any_one:
                critical += count
    return (
        ("success", Fraction(success, total_rolls)),
        ("failure", Fraction(total_rolls - success, total_rolls)),
        ("critical", Fraction(critical, total_rolls)),
    )


@lru_cache(maxsize=256)
def effect_distribution(dice: int, mode: str, threshold: int) -> tuple:
    """``((score, probability), ...)`` of ``dice`` effect dice, by convolution of counts."""
    one_die: dict[int, int] = {}
    for face in FACES:
        score = effect_score([face], mode, threshold)
        one_die[score] = one_die.get(score, 0) + 1
    dist = {0: 1}
    for _ in range(dice):
        nxt: dict[int, int] = {}
        for a, ways_a in dist.items():
            for b, ways_b in one_die.items():
                nxt[a + b] = nxt.get(a + b, 0) + ways_a * ways_b
        dist = nxt
    return tuple((score, Fraction(ways, 6 ** dice)) for score, ways in sorted(dist.items()))


def effect_test_odds(dice: int, mode: str, threshold: int, modifier: int, target: int | None) -> dict[str, Fraction]:
    """Exact odds of an effect test: ``success``/``failure`` against ``target``,
    or without a target the chance of each total (keys are the totals as text)."""
    dist = effect_distribution(dice, mode, threshold)
    if target is None:
        return {str(score + modifier): p for score, p in dist}
    success = sum((p for score, p in dist if score + modifier >= target), Fraction(0))
    return {"success": success, "failure": 1 - success}
