"""Exact odds for Tales from the Torn Earth, like icepool's named-game tests."""

from fractions import Fraction

import icepool
import pytest

from rules import get_system
from rules.base import RuleError

from .test_actions import apply, new_state

SYSTEM = get_system("tote")
F = Fraction


def raw(rating, target, bonus=0, blocked=()):
    return SYSTEM.odds({"type": "skill_test", "rating": rating, "bonus": bonus, "target": target,
                        "blocked": list(blocked)})


def test_tote_raw_cli_form():
    odds = SYSTEM.odds({"type": "skill_test", "rating": 3, "bonus": 2, "target": 10, "blocked": [5]})
    assert odds == {"success": F(731, 1296), "failure": F(565, 1296), "critical": F(91, 1296)}


def test_tote_one_die_t8():
    assert raw(1, 8) == {"success": F(5, 12), "failure": F(7, 12), "critical": F(1, 36)}


def test_tote_two_dice_t8():
    # P(best of 2 = k) = (2k-1)/36, then the Paragon needs 8-k or more.
    assert raw(2, 8)["success"] == F(3 * 1 + 5 * 2 + 7 * 3 + 9 * 4 + 11 * 5, 216) == F(125, 216)
    assert raw(2, 8)["critical"] == F(1, 6) * (1 - F(25, 36)) == F(11, 216)


def test_tote_rating_zero_is_the_paragon_alone():
    assert raw(0, 6) == {"success": F(1, 6), "failure": F(5, 6), "critical": 0}
    assert raw(0, 7)["success"] == 0
    assert raw(0, 1, bonus=-20)["success"] == 0
    assert raw(0, 3, bonus=2)["success"] == 1


def test_tote_five_numbered_injuries_leave_only_sixes():
    odds = raw(5, 8, blocked=[1, 2, 3, 4, 5])
    any_six = 1 - F(5, 6) ** 5
    assert odds["success"] == any_six * F(5, 6) == F(23255, 46656)
    assert odds["critical"] == F(1, 6) * (1 - F(5, 6) ** 5)  # a blocked 1 still makes a critical


def test_tote_t12_very_difficult_with_five_dice_and_specialization():
    assert raw(5, 12, bonus=3) == icepool_odds(5, 3, 12, set())


def icepool_odds(rating, bonus, target, blocked):
    """The same odds by an independent route: icepool's highest of the skill dice."""
    die = icepool.d6.map(lambda x: 0 if x in blocked else x)
    if rating == 0:
        selected = icepool.Die([0])
    elif rating == 1:
        selected = die
    else:
        selected = icepool.highest(*[die] * rating)
    success = (selected + icepool.d6 + bonus).probability(">=", target)
    critical = F(1, 6) * (1 - F(5, 6) ** rating)
    return {"success": success, "failure": 1 - success, "critical": critical}


@pytest.mark.parametrize("rating", range(6))
@pytest.mark.parametrize("blocked", [set(), {5}, {6}, {5, 4, 3}, {1, 2, 3, 4, 5, 6}])
@pytest.mark.parametrize("bonus, target", [(0, 8), (2, 10), (-2, 4), (5, 17)])
def test_tote_matches_icepool(rating, blocked, bonus, target):
    assert raw(rating, target, bonus, blocked) == icepool_odds(rating, bonus, target, blocked)


def test_tote_effect_dice():
    assert SYSTEM.odds({"type": "effect_test", "dice": 2, "target": 7}) == {"success": F(7, 12), "failure": F(5, 12)}
    counted = SYSTEM.odds({"type": "effect_test", "dice": 3, "target": 2, "mode": "count", "threshold": 4})
    assert counted["success"] == F(1, 2)
    table = SYSTEM.odds({"type": "effect_test", "dice": 1, "modifier": 2})
    assert table == {str(n): F(1, 6) for n in range(3, 9)}
    five = SYSTEM.odds({"type": "effect_test", "dice": 5})
    assert sum(five.values()) == 1 and five["5"] == F(1, 6**5)


def test_tote_effect_tests_roll_at_most_the_five_plain_dice():
    """tote-basic-rules-v1.1.txt:4 "one Paragon die and up to five plain dice"."""
    with pytest.raises(RuleError, match="dice"):
        SYSTEM.odds({"type": "effect_test", "dice": 6})


def test_tote_preview_uses_the_state():
    state, _ = apply(new_state(), {"type": "mark_injury", "count": 1})
    state, _ = apply(state, {"type": "gm_invoke_aspect"})
    preview = SYSTEM.preview(state, {"type": "skill_test", "skill": "Hunt", "target": 8, "modifier": 2})
    assert preview == raw(1, 8, bonus=0, blocked=[5])  # +2 modifier, -2 GM aspect, 5 blocked
    assert SYSTEM.preview(state, {"type": "end_tale"}) == {}
    with pytest.raises(RuleError):
        SYSTEM.preview(state, {"type": "fly"})


@pytest.mark.parametrize("action", [
    None, [], {"type": "skill_test"}, {"type": "skill_test", "rating": 6, "target": 8},
    {"type": "skill_test", "rating": 2, "target": 8, "blocked": [7]},
    {"type": "skill_test", "rating": 2, "target": 8, "blocked": "5"},
    {"type": "effect_test", "dice": 6}, {"type": "effect_test", "dice": 2, "mode": "max"},
    {"type": "dance"},
])
def test_tote_bad_raw_forms(action):
    with pytest.raises(RuleError):
        SYSTEM.odds(action)


def test_tote_largest_inputs_are_computed_exactly():
    """The largest allowed inputs give probabilities (their speed: `bench/odds.py`)."""
    results = [raw(5, 30, bonus=20, blocked=[1, 3]), SYSTEM.odds({"type": "effect_test", "dice": 5, "target": 30})]
    for result in results:
        assert result and all(0 <= p <= 1 for p in result.values()), result


@pytest.mark.parametrize("rating", range(6))
@pytest.mark.parametrize("blocked", [(), (1,), (6,), (1, 3), (2, 4, 5), (1, 2, 3, 4, 5), (1, 2, 3, 4, 5, 6)])
def test_tote_counted_skill_dice_equal_every_roll(rating, blocked):
    # The table is counted in closed form; here every roll of the skill dice is enumerated.
    from itertools import product

    from rules.tote.odds import _skill_dice_table, select_skill_die

    table = {}
    for faces in product(range(1, 7), repeat=rating):
        index = select_skill_die(faces, blocked)
        key = (0 if index is None else faces[index], 1 in faces)
        table[key] = table.get(key, 0) + 1
    assert dict(_skill_dice_table(rating, frozenset(blocked))) == table


def test_tote_odds_are_cached_per_form():
    import importlib

    module = importlib.import_module("rules.tote.odds")  # rules.tote.odds the attribute is the function
    module._skill_test_odds.cache_clear()
    first = raw(5, 30, bonus=20, blocked=[1, 3])
    assert raw(5, 30, bonus=20, blocked=[3, 1]) == first
    assert module._skill_test_odds.cache_info().hits == 1
