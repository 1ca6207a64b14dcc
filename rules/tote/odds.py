"""Exact odds of TOTE's rolls, as :class:`fractions.Fraction`.

The dice rules live here once (which skill die is selected, what is a
critical, how effect dice score) so the actions and the odds cannot disagree.

Skill tests enumerate every face of the skill dice (at most 6**5 = 7776
outcomes per rating and blocked set, cached) and then the Paragon die.
"""

from __future__ import annotations

from fractions import Fraction
from functools import lru_cache
from itertools import product
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
    """``((selected_value, any_one), count), ...`` over all 6**rating rolls."""
    table: dict[tuple[int, bool], int] = {}
    for faces in product(FACES, repeat=rating):
        index = select_skill_die(faces, blocked)
        key = (0 if index is None else faces[index], 1 in faces)
        table[key] = table.get(key, 0) + 1
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
    """``((score, probability), ...)`` of ``dice`` effect dice, by convolution."""
    one_die: dict[int, Fraction] = {}
    for face in FACES:
        score = effect_score([face], mode, threshold)
        one_die[score] = one_die.get(score, 0) + Fraction(1, 6)
    dist = {0: Fraction(1)}
    for _ in range(dice):
        nxt: dict[int, Fraction] = {}
        for a, pa in dist.items():
            for b, pb in one_die.items():
                nxt[a + b] = nxt.get(a + b, 0) + pa * pb
        dist = nxt
    return tuple(sorted(dist.items()))


def effect_test_odds(dice: int, mode: str, threshold: int, modifier: int, target: int | None) -> dict[str, Fraction]:
    """Exact odds of an effect test: ``success``/``failure`` against ``target``,
    or without a target the chance of each total (keys are the totals as text)."""
    dist = effect_distribution(dice, mode, threshold)
    if target is None:
        return {str(score + modifier): p for score, p in dist}
    success = sum((p for score, p in dist if score + modifier >= target), Fraction(0))
    return {"success": success, "failure": 1 - success}


# --- the two public entry points -------------------------------------------------


def odds(action: dict) -> dict[str, Fraction]:
    """Exact odds of a raw roll, as ``manage.py odds`` takes it.

    * ``{"type": "skill_test", "rating": 0..5, "bonus": -20..20, "target": 1..30,
      "blocked": [faces 1..6]}`` -> ``success``, ``failure``, ``critical``;
    * ``{"type": "effect_test", "dice": 1..10, "modifier": -10..10, "target": 1..60
      (optional), "mode": "sum"|"count", "threshold": 2..6}``.
    """
    # Imported here: actions imports this module for the dice rules above.
    from . import actions as a

    if not isinstance(action, dict):
        raise a.RuleError("An action must be a JSON object.", "invalid")
    kind = action.get("type")
    if kind == "skill_test":
        rating = a.field_int(action, "rating", 0, a.SKILL_MAX)
        bonus = a.field_int(action, "bonus", -20, 20, 0)
        target = a.field_int(action, "target", a.TARGET_MIN, a.TARGET_MAX)
        blocked = action.get("blocked", [])
        if not isinstance(blocked, list) or len(blocked) > 6 or any(
            isinstance(v, bool) or not isinstance(v, int) or not 1 <= v <= 6 for v in blocked
        ):
            raise a.RuleError("'blocked' must be a list of die faces 1..6.", "invalid")
        return skill_test_odds(rating, bonus, target, frozenset(blocked))
    if kind == "effect_test":
        dice = a.field_int(action, "dice", 1, a.EFFECT_DICE_MAX)
        modifier = a.field_int(action, "modifier", -a.MODIFIER_MAX, a.MODIFIER_MAX, 0)
        target = a.field_int(action, "target", 1, a.EFFECT_TARGET_MAX) if action.get("target") is not None else None
        mode = action.get("mode", "sum")
        if mode not in ("sum", "count"):
            raise a.RuleError("'mode' must be 'sum' or 'count'.", "invalid")
        threshold = a.field_int(action, "threshold", 2, 6, 4)
        return effect_test_odds(dice, mode, threshold, modifier, target)
    raise a.RuleError("Odds are known for 'skill_test' and 'effect_test' only.", "invalid")


def preview(state: dict, action: dict) -> dict[str, Fraction]:
    """Exact odds of an action this hero is about to take, with everything the
    state adds (injuries, specialization, the GM's pending aspect penalty).
    Actions that roll nothing have no odds: ``{}``."""
    from . import actions as a

    if not isinstance(action, dict):
        raise a.RuleError("An action must be a JSON object.", "invalid")
    kind = action.get("type")
    if kind == "skill_test":
        test = a.prepare_skill_test(state, action)
        return skill_test_odds(test["rating"], test["bonus"], test["target"], frozenset(test["blocked"]))
    if kind == "effect_test":
        test = a.prepare_effect_test(state, action)
        return effect_test_odds(test["dice"], test["mode"], test["threshold"], test["modifier"], test["target"])
    if isinstance(kind, str) and kind in a.ACTIONS:  # a list or object as type is refused below, not a crash
        return {}
    raise a.RuleError(f"Tales from the Torn Earth has no action {a.show(kind)}.", "unknown_action")
