"""Exact Tale RPG odds, named after the game's situations (cf. icepool's tests/vampire_test.py)."""

from fractions import Fraction

import pytest
from icepool import d6

from rules.base import RuleError
from rules.tale.odds import at_least, compare, sum_counts

from .helpers import SYSTEM, act, state


def test_tale_cli_form_against_a_target_number():
    # Juhani's jump: an average 6D person against difficulty 21.
    assert SYSTEM.odds({"type": "straight_roll", "pool": 6, "target": 21}) == {
        "success": Fraction(4249, 7776), "failure": Fraction(3527, 7776)}


def test_tale_cli_form_against_a_rolled_pool():
    # "Hard": 6D against 7D, the reference table's 26.0%.
    odds = SYSTEM.odds({"type": "straight_roll", "pool": 6, "vs_pool": 7})
    assert odds["success"] == Fraction(1697784577, 6530347008)
    assert odds["success"] + odds["failure"] == 1


def test_tale_rolled_pool_agrees_with_icepool():
    for mine, theirs in [(1, 1), (3, 5), (6, 6), (9, 10), (12, 12)]:
        win, tie, lose = compare(mine, theirs)
        assert win == (mine @ d6 > theirs @ d6).probability(True)
        assert tie == (mine @ d6 == theirs @ d6).probability(True)
        assert lose == (mine @ d6 < theirs @ d6).probability(True)


def test_tale_target_numbers_agree_with_icepool():
    for pool, target in [(1, 4), (2, 7), (6, 21), (6, 29), (10, 35), (40, 140)]:
        assert at_least(pool, target) == (pool @ d6).probability(">=", target)
    assert at_least(3, 0) == 1 and at_least(3, 19) == 0


def test_tale_tie_as_success_and_the_average_shortcut():
    tie_wins = SYSTEM.odds({"type": "straight_roll", "pool": 6, "vs_pool": 6, "on_tie": "success"})
    assert tie_wins["success"] == 1 - compare(6, 6)[2]  # 53.3%
    average = SYSTEM.odds({"type": "straight_roll", "pool": 6, "vs_pool": 6, "average": True})
    assert average["success"] == Fraction(4249, 7776)  # the same as target 21


def test_tale_hiding_in_open_space_and_heavy_forest():
    open_space = SYSTEM.odds({"type": "hide", "pool": 6, "place": "open_space"})
    assert open_space["success"] == compare(6, 10)[0]
    assert round(float(open_space["success"]) * 100, 1) == 1.6
    forest = SYSTEM.odds({"type": "hide", "pool": 6, "place": "heavy_forest"})
    assert forest["success"] == Fraction(1676621, 1679616)  # 99.8%


def test_tale_sinistre_against_autopet_one_round():
    odds = SYSTEM.odds({"type": "iterated_round", "mine": 12, "theirs": 12})
    assert odds["win"] == odds["lose"]
    assert odds["tie"] == (12 @ d6 == 12 @ d6).probability(True)
    assert sum(odds.values()) == 1


def test_tale_torkild_against_evilbloke_one_round():
    odds = SYSTEM.odds({"type": "iterated_round", "mine": 9, "theirs": 10})
    assert odds["win"] == (9 @ d6 > 10 @ d6).probability(True)


def test_tale_combat_round_marginals():
    odds = SYSTEM.odds({"type": "combat_round", "attack": 3, "defence": 4, "their_attack": 2, "their_defence": 0})
    assert odds["my_hit"] == 1 and odds["my_even"] == 0 and odds["my_miss"] == 0
    assert odds["their_hit"] == (2 @ d6 > 4 @ d6).probability(True)
    assert odds["their_hit"] + odds["their_even"] + odds["their_miss"] == 1
    nobody = SYSTEM.odds({"type": "combat_round", "attack": 0, "defence": 4, "their_attack": 0, "their_defence": 4})
    assert nobody == {}


def test_tale_sum_counts_are_the_whole_space():
    assert sum_counts(0) == (1,)
    assert sum_counts(2)[7] == 6
    assert sum(sum_counts(40)) == 6 ** 40


def test_tale_largest_inputs_are_computed_exactly():
    """The largest allowed inputs give probabilities (their speed: `bench/odds.py`)."""
    results = [SYSTEM.odds({"type": "straight_roll", "pool": 40, "vs_pool": 40}),
               SYSTEM.odds({"type": "straight_roll", "pool": 40, "target": 140}),
               SYSTEM.odds({"type": "combat_round", "attack": 20, "defence": 20, "their_attack": 19, "their_defence": 21})]
    for result in results:
        assert result and all(0 <= p <= 1 for p in result.values()), result


def test_tale_odds_are_cached_per_form():
    compare.cache_clear()
    first = SYSTEM.odds({"type": "straight_roll", "pool": 40, "vs_pool": 40})
    assert SYSTEM.odds({"type": "straight_roll", "pool": 40, "vs_pool": 40}) == first
    assert compare.cache_info().hits == 1


def test_tale_preview_of_a_running_contest_and_combat():
    _, st = act(state(), {"type": "start_contest", "vs_pool": 4})
    assert SYSTEM.preview(st, {"type": "iterated_round"}) == SYSTEM.odds({"type": "iterated_round", "mine": 6, "theirs": 4})
    with pytest.raises(RuleError):
        SYSTEM.preview(st, {"type": "combat_round", "attack": 1, "defence": 0, "their_attack": 0, "their_defence": 0})
    _, st = act(state(), {"type": "start_combat", "their_pool": 4})
    assert SYSTEM.preview(st, {"type": "combat_round", "attack": 3, "defence": 3, "their_attack": 2,
                               "their_defence": 2})["my_hit"] == compare(3, 2)[0]
    with pytest.raises(RuleError, match="only 6D"):
        SYSTEM.preview(st, {"type": "combat_round", "attack": 4, "defence": 3, "their_attack": 0, "their_defence": 0})


@pytest.mark.parametrize("raw", [
    None, [], {"type": "juggle"}, {"type": "straight_roll", "pool": 0, "target": 3},
    {"type": "straight_roll", "pool": 41, "target": 3}, {"type": "straight_roll", "pool": 6},
    {"type": "straight_roll", "pool": 6, "target": 241}, {"type": "hide", "pool": 6},
    {"type": "iterated_round", "mine": 6}, {"type": "combat_round", "attack": 41},
])
def test_tale_bad_raw_forms(raw):
    with pytest.raises(RuleError):
        SYSTEM.odds(raw)

