"""Exact WYRM odds, named after the table situations they describe.

Where a number is not obvious by hand it is cross-checked against icepool,
whose ``explode(depth=5)`` is the same capped die (at most 5 extra rolls).
"""

from fractions import Fraction as F

import icepool
import pytest

from rules.base import RuleError
from rules.wyrm import odds as wyrm_odds
from rules.wyrm.odds import EXPLOSION_CAP, odds

from .helpers import WYRM, make

CAPPED = icepool.d6.explode(depth=EXPLOSION_CAP)


def probabilities(die):
    return dict(zip(die.outcomes(), die.probabilities()))


def success(action):
    result = odds(action)
    assert result["success"] + result["failure"] == 1
    return result["success"]


def test_wyrm_raw_cli_form_rogue_3_with_a_skill_against_dl_9():
    # The die needs 4+: 4 or 5 (2/6), or any 6 (1/6), which explodes past 9.
    assert odds({"type": "check", "attribute": 3, "skills": 1, "dl": 9}) == {"success": F(1, 2), "failure": F(1, 2)}


def test_wyrm_no_skill_no_explosion():
    assert success({"type": "check", "attribute": 3, "skills": 0, "dl": 9}) == F(1, 6)
    assert success({"type": "check", "attribute": 0, "dl": 7}) == 0  # a plain 6 never reaches 7
    assert success({"type": "check", "attribute": 0, "dl": 1}) == 1
    assert success({"type": "check", "attribute": 2, "dl": 0}) == 1


def test_wyrm_exploding_die_reaches_beyond_six():
    base = {"type": "check", "attribute": 0, "skills": 1}  # die + 2
    assert success(dict(base, dl=9)) == F(1, 6)  # die 7+: any 6
    assert success(dict(base, dl=10)) == F(5, 36)  # die 8+: 6 then 2+
    assert success(dict(base, dl=14)) == F(1, 36)  # die 12+: 6, 6
    assert success(dict(base, dl=13)) == F(2, 36)  # die 11+: 6 then 5, or 6 then 6
    assert success(dict(base, dl=13)) == CAPPED.probability(">=", 11)


def test_wyrm_the_explosion_cap():
    base = {"type": "check", "attribute": 0, "skills": 1}
    assert success(dict(base, dl=2 + 36)) == F(1, 6**6)  # six 6s: the last is capped
    assert success(dict(base, dl=2 + 35)) == F(2, 6**6)
    assert success(dict(base, dl=2 + 37)) == 0  # beyond what the capped die can roll


def test_wyrm_second_skill_adds_two_more():
    assert success({"type": "check", "attribute": 3, "skills": 2, "dl": 9}) == F(5, 6)


def test_wyrm_ties_fail_when_the_campaign_reads_beat_strictly():
    assert success({"type": "check", "attribute": 3, "skills": 1, "dl": 9, "ties_succeed": False}) == F(1, 3)


def test_wyrm_circumstantial_modifier_moves_the_dl():
    assert success({"type": "check", "attribute": 3, "skills": 1, "dl": 7, "modifier": 2}) == F(1, 2)
    assert success({"type": "check", "attribute": 3, "dl": 9, "modifier": -2}) == F(1, 2)


def test_wyrm_guard_static_opposition():
    # Guard Mage 2 + Awareness + 3 = DL 7; thief Rogue 3 + Stealth needs 2+.
    assert success({"type": "check", "attribute": 3, "skills": 1, "vs": {"attribute": 2, "skills": 1, "static": True}}) == F(5, 6)


def test_wyrm_plain_opposed_roll_d6_plus_3_against_d6_plus_2():
    # Fails only when the passive die beats the active die by 2 or more: 10/36.
    assert success({"type": "check", "attribute": 3, "vs": {"attribute": 2}}) == F(13, 18)


def test_wyrm_thief_against_rolling_guard_both_exploding():
    p = success({"type": "check", "attribute": 3, "skills": 1, "vs": {"attribute": 2, "skills": 1}})
    assert p == (CAPPED + 5 >= CAPPED + 4).probability(True)
    assert p == F(746325373, 1088391168)


def test_wyrm_opposed_with_modifier_cross_checked():
    p = success({"type": "check", "attribute": 1, "skills": 1, "vs": {"attribute": 4, "skills": 2}, "modifier": -3})
    assert p == (CAPPED + 3 >= CAPPED + 8 - 3).probability(True)


def test_wyrm_damage_one_die_plus_two():
    dist = odds({"type": "damage", "dice": 1, "bonus": 2})
    assert dist["3"] == F(1, 6) and "8" not in dist and dist["9"] == F(1, 36)
    assert dist["38"] == F(1, 6**6) and sum(dist.values()) == 1
    assert {int(k): v for k, v in dist.items()} == probabilities(CAPPED + 2)


def test_wyrm_damage_two_dice():
    dist = odds({"type": "damage", "dice": 2})
    assert dist["2"] == F(1, 36)
    assert dist["7"] == F(4, 36)  # 2+5, 3+4, 4+3, 5+2; a 6 explodes past 7
    assert {int(k): v for k, v in dist.items()} == probabilities(CAPPED + CAPPED)
    assert list(dist) == sorted(dist, key=int)


def test_wyrm_preview_reads_the_character():
    thief = make()
    action = {"type": "check", "attribute": "rogue", "skills": ["Stealth"], "dl": 9}
    assert WYRM.preview(thief, action) == {"success": F(1, 2), "failure": F(1, 2)}
    assert WYRM.preview(thief, {"type": "damage", "dice": 1, "bonus": 2}) == odds({"type": "damage", "dice": 1, "bonus": 2})
    assert WYRM.preview(thief, {"type": "grant_fate"}) == {}  # rolls nothing: no odds


@pytest.mark.parametrize("bad", [
    None, [], "check", {"type": "roll"}, {"type": "check"}, {"type": "check", "attribute": "rogue", "dl": 9},
    {"type": "check", "attribute": 11, "dl": 9}, {"type": "check", "attribute": 3, "skills": 3, "dl": 9},
    {"type": "check", "attribute": 3, "dl": 61}, {"type": "check", "attribute": 3, "dl": 9, "vs": {"attribute": 1}},
    {"type": "damage", "dice": 4}, {"type": "damage", "bonus": -1}, {"type": "check", "attribute": True, "dl": 2},
])
def test_wyrm_bad_raw_forms_are_refused(bad):
    with pytest.raises(RuleError):
        odds(bad)


def test_wyrm_largest_inputs_are_computed_exactly():
    """The largest allowed inputs give probabilities (their speed: `bench/odds.py`)."""
    results = [odds({"type": "check", "attribute": 10, "skills": 2, "vs": {"attribute": 10, "skills": 2}, "modifier": -20}),
               odds({"type": "damage", "dice": 3, "bonus": 20})]
    for result in results:
        assert result and all(0 <= p <= 1 for p in result.values()), result


def test_wyrm_odds_are_cached_per_form():
    wyrm_odds._opposed_success.cache_clear()
    form = {"type": "check", "attribute": 10, "skills": 2, "vs": {"attribute": 10, "skills": 2}, "modifier": -20}
    first = odds(form)
    assert odds(dict(form)) == first
    assert wyrm_odds._opposed_success.cache_info().hits == 1
