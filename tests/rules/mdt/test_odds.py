"""Mundo das Trevas Lite: exact odds, named cases (after icepool's tests/vampire_test.py)."""

from fractions import Fraction as F

import icepool
import pytest

from rules import RuleError, get_system
from rules.mdt import odds as O

MDT = get_system("mdt")
D10_SUCCESSES = icepool.Die({0: 6, 1: 3, 2: 1})  # 1-6, 7-9, 10


def test_mdt_raw_form_five_dice_dangerous():
    # The CLI form: P(fail) = P(0) + P(1) = 0.6^5 + 5 * 0.3 * 0.6^4.
    result = MDT.odds({"type": "test", "dice": 5, "difficulty": 2})
    assert result == {
        "success": F(4549, 6250),
        "exceptional": F(3151, 100000),
        "failure": F(1701, 6250),
        "dramatic_failure": F(6, 10) ** 5 - F(5, 10) ** 5,
    }
    assert result["dramatic_failure"] == F(4651, 100000)


def test_mdt_one_die():
    assert MDT.odds({"type": "test", "dice": 1, "difficulty": 1}) == {
        "success": F(2, 5), "exceptional": 0, "failure": F(3, 5), "dramatic_failure": F(1, 10)}
    assert MDT.odds({"type": "test", "dice": 1, "difficulty": 2})["success"] == F(1, 10)


def test_mdt_two_dice_default_difficulty():
    assert MDT.odds({"type": "test", "dice": 2}) == {
        "success": F(16, 25), "exceptional": 0, "failure": F(9, 25), "dramatic_failure": F(11, 100)}


def test_mdt_three_dice_exceptional():
    # 5+ successes from 3 dice: 10,10,10 (1/1000) or two 10s and a 7-9 (3 * 3/1000).
    assert MDT.odds({"type": "test", "dice": 3, "difficulty": 1})["exceptional"] == F(1, 100)


def test_mdt_luck_test():
    for dice in (0, -1, -30):
        assert MDT.odds({"type": "test", "dice": dice, "difficulty": 1}) == {
            "success": F(1, 10), "exceptional": 0, "failure": F(9, 10), "dramatic_failure": F(1, 10)}
    assert MDT.odds({"type": "test", "dice": 0, "difficulty": 2})["success"] == 0
    house = {"type": "test", "dice": 0, "difficulty": 2, "luck_ten_successes": 2, "luck_dramatic_failure": False}
    assert MDT.odds(house) == {"success": F(1, 10), "exceptional": 0, "failure": F(9, 10), "dramatic_failure": 0}


def test_mdt_exceptional_margin_option():
    assert MDT.odds({"type": "test", "dice": 1, "exceptional_margin": 1})["exceptional"] == F(1, 10)


@pytest.mark.parametrize("dice", [1, 2, 5, 10, 19, 30])
@pytest.mark.parametrize("difficulty", [1, 2, 3])
def test_mdt_agrees_with_icepool(dice, difficulty):
    pool = dice @ D10_SUCCESSES
    result = MDT.odds({"type": "test", "dice": dice, "difficulty": difficulty})
    assert result["success"] == pool.probability(">=", difficulty)
    assert result["exceptional"] == pool.probability(">=", difficulty + 4)
    assert result["success"] + result["failure"] == 1


def test_mdt_success_distribution_sums_to_one():
    for dice in range(0, 31):
        assert sum(O.successes(dice)) == 1


def test_mdt_opposed_one_die_each():
    # Win: 1 vs 0 (0.3 * 0.6) or 2 vs 0-1 (0.1 * 0.9); tie: 0.36 + 0.09 + 0.01.
    assert MDT.odds({"type": "opposed_test", "dice": 1, "vs_pool": 1}) == {
        "win": F(27, 100), "tie": F(23, 50), "loss": F(27, 100), "dramatic_failure": F(1, 10)}
    assert MDT.odds({"type": "opposed_test", "dice": 1, "vs_pool": 1, "tie_goes_to": "character"})["win"] == F(73, 100)
    assert MDT.odds({"type": "opposed_test", "dice": 1, "vs_pool": 1, "tie_goes_to": "opponent"})["loss"] == F(73, 100)


def test_mdt_opposed_luck_against_luck():
    # Each side succeeds only on a 10: win 1/10 * 9/10.
    assert MDT.odds({"type": "opposed_test", "dice": 0, "vs_pool": 0}) == {
        "win": F(9, 100), "tie": F(82, 100), "loss": F(9, 100), "dramatic_failure": F(1, 10)}


def test_mdt_opposed_agrees_with_icepool():
    mine, theirs = 6 @ D10_SUCCESSES, 4 @ D10_SUCCESSES
    result = MDT.odds({"type": "opposed_test", "dice": 6, "vs_pool": 4})
    assert result["win"] == (mine > theirs).probability(True)
    assert result["tie"] == (mine == theirs).probability(True)


def test_mdt_contest_round():
    assert MDT.odds({"type": "contest_round", "dice": 1, "vs_pool": 1, "target": 1, "mine": 0, "theirs": 0}) == {
        "win": F(27, 100), "loss": F(27, 100), "continue": F(23, 50), "dramatic_failure": F(1, 10)}
    # One short of the target against an opponent far behind: any success wins.
    near = MDT.odds({"type": "contest_round", "dice": 2, "vs_pool": 2, "target": 5, "mine": 4, "theirs": 0})
    assert near["win"] == F(16, 25) and near["loss"] == 0
    # Tied past the target: the next round's leader wins, as in an opposed test.
    tied = MDT.odds({"type": "contest_round", "dice": 1, "vs_pool": 1, "target": 2, "mine": 3, "theirs": 3})
    assert (tied["win"], tied["loss"], tied["continue"]) == (F(27, 100), F(27, 100), F(23, 50))


def test_mdt_project_roll():
    assert MDT.odds({"type": "project_roll", "dice": 2, "target": 3}) == {
        "complete": F(7, 100), "continue": F(93, 100), "dramatic_failure": F(11, 100)}
    assert MDT.odds({"type": "project_roll", "dice": 2, "target": 3, "progress": 2})["complete"] == F(16, 25)


@pytest.mark.parametrize("action, message", [
    (None, "JSON object"),
    ({"type": "test"}, "'dice' is required"),
    ({"type": "test", "dice": 31}, "'dice' must be from -30 to 30"),
    ({"type": "test", "dice": 5, "difficulty": 4}, "'difficulty'"),
    ({"type": "test", "dice": 5, "luck_ten_successes": 3}, "'luck_ten_successes'"),
    ({"type": "skill_test", "dice": 5}, "Odds are available for"),
    ({"type": "contest_round", "dice": 5, "vs_pool": 3, "target": 3, "mine": 3, "theirs": 0}, "already over"),
    ({"type": "contest_round", "dice": 5, "vs_pool": 3, "target": 3, "mine": -1}, "'mine' must be from 0"),
])
def test_mdt_bad_raw_forms(action, message):
    with pytest.raises(RuleError) as error:
        MDT.odds(action)
    assert message in error.value.message


def test_mdt_largest_inputs_are_computed_exactly():
    """The largest allowed inputs give probabilities (their speed: `bench/odds.py`)."""
    results = [MDT.odds({"type": "test", "dice": 30, "difficulty": 3}),
               MDT.odds({"type": "opposed_test", "dice": 30, "vs_pool": 30}),
               MDT.odds({"type": "contest_round", "dice": 30, "vs_pool": 30, "target": 50, "mine": 49, "theirs": 49}),
               MDT.odds({"type": "project_roll", "dice": 30, "target": 100, "progress": 0})]
    for result in results:
        assert result and all(0 <= p <= 1 for p in result.values()), result


@pytest.mark.parametrize("pool,vs_pool,mine,theirs,target", [
    (1, 1, 0, 0, 1), (3, 2, 2, 4, 5), (4, 4, 3, 3, 5), (0, 5, 0, 0, 2), (6, -1, 9, 9, 5), (2, 3, 7, 6, 8)])
def test_mdt_race_counts_equal_every_pair_of_rolls(pool, vs_pool, mine, theirs, target):
    # The race odds come from prefix sums; here every pair of success counts is judged one by one.
    result = {"win": F(0), "loss": F(0), "continue": F(0)}
    for a, p in enumerate(O.successes(pool)):
        for b, q in enumerate(O.successes(vs_pool)):
            result[O.race_outcome(mine + a, theirs + b, target)] += p * q
    odds = O.odds_of_contest_round(pool, vs_pool, mine, theirs, target)
    assert {key: odds[key] for key in result} == result


def test_mdt_odds_are_cached_per_form():
    O._race.cache_clear()
    form = {"type": "contest_round", "dice": 30, "vs_pool": 30, "target": 50, "mine": 49, "theirs": 49}
    first = MDT.odds(form)
    assert MDT.odds(dict(form)) == first
    assert O._race.cache_info().hits == 1


def test_manage_odds_reads_the_consequences_band_as_the_test_does():
    """docs/rules.md MdT 26: the raw odds (``manage.py odds``) take ``consequences_band`` as the
    campaign's test reads it."""
    plain = O.odds({"type": "test", "dice": 4, "difficulty": 3})
    band = O.odds({"type": "test", "dice": 4, "difficulty": 3, "consequences_band": True})
    assert "consequences" not in plain and band["consequences"] == band["success"] - plain["success"]
    assert band["success"] == O.at_least(4, 1) and band["exceptional"] == plain["exceptional"]
    with pytest.raises(RuleError, match="true or false"):
        O.odds({"type": "test", "dice": 4, "difficulty": 3, "consequences_band": 1})
