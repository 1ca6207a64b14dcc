"""Generic dice notation: what it rolls, and that hostile input can't hurt."""

import pytest
from hypothesis import given, settings, strategies as st

from rules import RuleError, ScriptedDice, SeededDice
from rules.notation import LIMITS, NotationError, parse, roll, roll_event


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


def test_percentile_dice_are_d100():
    p = roll("d%+1", ScriptedDice([100]))
    assert p["terms"][0]["sides"] == 100 and p["total"] == 101


def test_fate_dice_read_a_d3_as_minus_blank_plus():
    dice = ScriptedDice([1, 2, 3, 3])
    p = roll("4dF+1", dice)
    assert faces(p) == [-1, 0, 1, 1] and p["total"] == 2
    assert p["terms"][0]["fate"] is True and p["terms"][0]["text"] == "+4dF"


@pytest.mark.parametrize("notation, rolled, total", [
    ("2d6+3*2", [1, 2], 9),  # * before +
    ("(2d6+3)*2", [1, 2], 12),
    ("-(1d6+1)*3", [2], -9),
    ("2*(1d4-(1d6+1))", [4, 1], 4),
    ("1d6*-2", [3], -6),
])
def test_multiplication_and_parentheses_follow_arithmetic(notation, rolled, total):
    assert roll(notation, ScriptedDice(rolled))["total"] == total


def test_a_factor_records_that_it_multiplies():
    terms = roll("(2d6+1)*3", ScriptedDice([1, 2]))["terms"]
    assert [t["text"] for t in terms] == ["+2d6", "+1", "*3"] and terms[2]["op"] == "*"
    assert "op" not in terms[0]  # plain sums keep the payload they always had


def test_labels_in_brackets_name_their_dice_group():
    p = roll("2d6[fire] + 1d4 [cold]", ScriptedDice([1, 2, 3]))
    assert [t.get("label") for t in p["terms"]] == ["fire", "cold"] and p["total"] == 6


def test_words_after_the_expression_label_the_roll():
    p = roll("2d6+3 fire damage", ScriptedDice([1, 2]))
    assert (p["notation"], p["label"], p["total"]) == ("2d6+3", "fire damage", 6)
    event = roll_event({"notation": "1d8+2 longsword", "label": "Brannoc"}, ScriptedDice([5]))
    assert event.payload["label"] == "Brannoc · longsword"
    assert "label" not in roll("4d6 kh3", ScriptedDice([1, 2, 3, 4]))  # spaces inside a group are no label


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
    ("(1d6+1", "not closed"),
    ("1d6)", "no '\\(' before it"),
    ("()", "Empty parentheses"),
    ("2d6+3fire", "Expected"),
    ("1d6*", "ends with '\\*'"),
    ("4dF!", "Fate dice"),
    ("0dF", "at least one die"),
    ("1d6[fire", "closing"),
    ("1d6[" + "x" * 41 + "]", "1 to 40"),
    ("(1d6)[x]", "not after"),
    ("(" * 11 + "1d6" + ")" * 11, "Too many parentheses"),
    ("100d1000*100d1000", "could total more than"),
])
def test_bad_notation_is_refused_with_a_clear_message(bad, message):
    with pytest.raises(NotationError, match=message):
        parse(bad)


def test_non_string_is_refused():
    with pytest.raises(NotationError):
        parse(["1d6"])


@settings(deadline=None)
@given(st.text(alphabet="0123456789dkhl!<>=+- %F*()[]fire", max_size=60) | st.text(max_size=110))
def test_any_text_either_rolls_or_is_refused_cleanly(text):
    try:
        parse(text)
    except RuleError:
        return
    payload = roll(text, SeededDice(1))
    assert isinstance(payload["total"], int)
    assert sum(len(t.get("dice", [])) for t in payload["terms"]) <= LIMITS["total_dice"] * (LIMITS["explode_depth"] + 1)
