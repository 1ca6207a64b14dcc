"""Generic dice notation: what it rolls, and that hostile input can't hurt."""

import pytest
from hypothesis import given, settings, strategies as st

from rules import RuleError, ScriptedDice, SeededDice
from rules.notation import LIMITS, NotationError, parse, roll


def faces(payload, term=0):
    return [d["face"] for d in payload["terms"][term]["dice"]]


def test_plain_sum_with_modifier():
    p = roll("3d6+2", ScriptedDice([1, 2, 3]))
    assert faces(p) == [1, 2, 3] and p["total"] == 8


def test_subtraction_and_constants():
    assert roll("d20-1-2", ScriptedDice([10]))["total"] == 7


def test_keep_highest_marks_dropped_dice():
    p = roll("4d6kh3", ScriptedDice([6, 1, 4, 4]))
    assert [d["kept"] for d in p["terms"][0]["dice"]] == [True, False, True, True]
    assert p["total"] == 14


def test_keep_lowest_and_drop_lowest():
    assert roll("2d20kl1", ScriptedDice([15, 3]))["total"] == 3
    assert roll("4d6dl1", ScriptedDice([6, 1, 4, 4]))["total"] == 14


def test_exploding_dice_add_a_die_per_top_face():
    p = roll("2d6!", ScriptedDice([6, 6, 2, 3]))
    assert faces(p) == [6, 6, 2, 3]
    assert p["total"] == 17
    assert [d.get("exploded", False) for d in p["terms"][0]["dice"]] == [True, True, False, False]


def test_explosion_depth_is_capped():
    p = roll("1d6!", ScriptedDice([6] * (LIMITS["explode_depth"] + 1)))
    assert len(faces(p)) == LIMITS["explode_depth"] + 1


def test_success_counting():
    p = roll("5d10>=7", ScriptedDice([7, 10, 3, 1, 9]))
    assert p["total"] == 3 and p["counts_successes"]


@pytest.mark.parametrize("bad, message", [
    ("", "empty"),
    ("1d6+", "ends with a sign"),
    ("2x6", "Expected"),
    ("x6", "can't read"),
    ("1000d6", "too large"),
    ("1d100000", "too large"),
    ("1d1", "at least 2 sides"),
    ("0d6", "at least one die"),
    ("d6kh2", "too large"),
    ("1d2!", "at least 3 sides"),
    ("d6" + "+d6" * 30, "Too many terms"),
    ("99d6+99d6+99d6+99d6", "at most 300"),
    ("1" * 200, "too long"),
    ("7", "rolls no dice"),
    ("4d6kh3kl1", "Only one keep"),
])
def test_bad_notation_is_refused_with_a_clear_message(bad, message):
    with pytest.raises(NotationError, match=message):
        parse(bad)


def test_non_string_is_refused():
    with pytest.raises(NotationError):
        parse(["1d6"])


@given(st.text(alphabet="0123456789dkhl!<>=+- %F", max_size=40) | st.text(max_size=60))
def test_any_text_either_rolls_or_is_refused_cleanly(text):
    try:
        parse(text)
    except RuleError:
        return
    payload = roll(text, SeededDice(1))
    assert isinstance(payload["total"], int)
    assert sum(len(t.get("dice", [])) for t in payload["terms"]) <= LIMITS["total_dice"] * (LIMITS["explode_depth"] + 1)
