"""Every example and rule statement of the TOTE v1.1 text, with scripted dice.

Dice order in a skill test: the skill dice (one per rating), then the Paragon.
TOTE has no multi-round contests, so no dice are carried between rounds.
"""

from fractions import Fraction

import pytest

from rules import get_system
from rules.base import Event, RuleError, ScriptedDice

SYSTEM = get_system("tote")

ONES = {
    "Strike": 1, "Sneak": 1, "Shoot": 1, "Grapple": 1,
    "Move": 1, "Hunt": 1, "Journey": 1, "Survive": 1,
    "Craft": 1, "Know": 1, "Guide": 1, "Heal": 1,
    "Command": 1, "Bargain": 1, "Judge": 1, "Persuade": 1,
}


def hero(**skills):
    """An established hero (past creation: Stag 3, Turtle 2), every skill 1 unless given."""
    sheet = {"skills": {**ONES, **skills}, "aspect": "Never leaves a friend behind",
             "totems": {"Stag": 3, "Turtle": 2}}
    return SYSTEM.initial_state(sheet)


def run(state, action, faces):
    dice = ScriptedDice(faces)
    events = SYSTEM.decide(state, action, dice)
    assert dice.remaining == [], "the action rolled fewer dice than scripted"
    return SYSTEM.replay(state, events), events


def test_injury_example_5_3_1_selects_3():
    """'if you've filled in the first bubble on the Injury Track ([•] 5) and you
    roll 5,3,1 on three skill dice, your skill die result will be 3'."""
    state = hero(Hunt=3)
    state, events = run(state, {"type": "mark_injury", "count": 1}, [])
    assert events[0].payload["spots"] == [{"spot": 1, "number": 5}]
    assert state["injuries"] == 1
    state, events = run(state, {"type": "skill_test", "skill": "Hunt", "target": 8}, [5, 3, 1, 4])
    p = events[0].payload
    assert [d["face"] for d in p["dice"]] == [5, 3, 1, 4]
    assert p["skill_die"] == 3
    assert [d["selected"] for d in p["dice"][:3]] == [False, True, False]
    assert p["dice"][0]["blocked"] and "injury spot 1 (5)" in p["dice"][0]["why"]
    assert p["blocked"] == [5]
    assert p["total"] == 7 and p["outcome"] == "failure" and not p["critical"]


def test_critical_counts_an_unselected_one():
    """'If you roll a 1 on your Paragon die and rolled at least 1 on your skill
    dice (even if you didn't select it for your result) you have rolled a Critical.'"""
    state = hero(Hunt=3)
    state, events = run(state, {"type": "skill_test", "skill": "Hunt", "target": 4}, [5, 3, 1, 1])
    p = events[0].payload
    assert p["skill_die"] == 5 and p["paragon"] == 1 and p["total"] == 6
    assert p["critical"] and p["success"]  # a successful critical


def test_critical_does_not_automatically_succeed():
    """'Criticals don't automatically succeed.'"""
    state, events = run(hero(), {"type": "skill_test", "skill": "Hunt", "target": 12}, [1, 1])
    assert events[0].payload["critical"] and events[0].payload["outcome"] == "failure"


def test_paragon_one_without_skill_one_is_not_critical():
    state, events = run(hero(Hunt=2), {"type": "skill_test", "skill": "Hunt", "target": 4}, [2, 6, 1])
    assert not events[0].payload["critical"]


def test_target_number_t8_means_8_or_higher():
    """'T8 means your final total needs to 8 or higher in order to succeed.'"""
    state = hero()
    _, events = run(state, {"type": "skill_test", "skill": "Move", "target": 8}, [4, 4])
    assert events[0].payload["total"] == 8 and events[0].payload["success"]
    _, events = run(state, {"type": "skill_test", "skill": "Move", "target": 8}, [4, 3])
    assert events[0].payload["total"] == 7 and not events[0].payload["success"]


def test_total_adds_specialization_and_circumstances():
    """'Add the two dice together and add any bonus from a specialization ...
    You might have other bonuses or penalties.'"""
    sheet = {"skills": ONES, "specializations": {"Hunt": [{"name": "Tracking", "bonus": 2}]}}
    state = SYSTEM.initial_state(SYSTEM.validate_sheet(sheet))
    _, events = run(state, {"type": "skill_test", "skill": "Hunt", "specialization": "tracking",
                            "modifier": -1, "target": 10}, [6, 3])
    p = events[0].payload
    assert p["specialization"] == {"name": "Tracking", "bonus": 2}
    assert p["bonus"] == 1 and p["total"] == 10 and p["success"]


def test_persuade_has_stag_and_turtle():
    state, events = run(hero(), {"type": "skill_test", "skill": "Persuade", "target": 8}, [2, 2])
    assert sorted(events[0].payload["totems"]) == ["Stag", "Turtle"]


def test_experience_bubbles_column_then_row_then_nothing():
    """'any one skill can't produce more than two experience points (by filling
    in the column bubble once and the row bubble the next time)'."""
    state = hero()
    crit = [1, 1]
    state, e1 = run(state, {"type": "skill_test", "skill": "Strike", "target": 8}, crit)
    assert e1[0].payload["bubble"] == {"line": "column", "index": 0, "totem": "Bear"}
    state, e2 = run(state, {"type": "skill_test", "skill": "Strike", "target": 8}, crit)
    assert e2[0].payload["bubble"] == {"line": "row", "index": 0, "totem": "Wolf"}
    state, e3 = run(state, {"type": "skill_test", "skill": "Strike", "target": 8}, crit)
    assert e3[0].payload["critical"] and e3[0].payload["bubble"] is None
    assert "already filled" in e3[0].payload["bubble_note"]
    state, end = run(state, {"type": "end_tale"}, [])
    assert end[0].payload == {"xp": 2, "rows": ["Wolf"], "columns": ["Bear"]}
    assert state["points"] == {"earned": 2, "spent": 0}
    assert state["bubbles"] == {"rows": [False] * 4, "columns": [False] * 4}


def test_bubbles_are_shared_along_a_row_and_column():
    """One bubble per row and per column: Strike's column bubble (Bear) is also
    Move's, so a later critical on Move fills Move's row bubble (Bison)."""
    state = hero()
    state, _ = run(state, {"type": "skill_test", "skill": "Strike", "target": 8}, [1, 1])
    state, events = run(state, {"type": "skill_test", "skill": "Move", "target": 8}, [1, 1])
    assert events[0].payload["bubble"]["totem"] == "Bison"
    assert state["bubbles"] == {"rows": [False, True, False, False], "columns": [True, False, False, False]}


def test_resolve_adds_a_totem_to_a_failed_test():
    """'If you don't succeed on a skill test, you can spend a point of Resolve in
    order to add the value of one of your hero's totems to the total.'"""
    state = hero()
    state, _ = run(state, {"type": "skill_test", "skill": "Persuade", "target": 10}, [4, 4])
    assert state["last_test"]["total"] == 8
    state, events = run(state, {"type": "spend_resolve", "totem": "Stag"}, [])
    p = events[0].payload
    assert (p["totem_value"], p["total_before"], p["total"], p["outcome"]) == (3, 8, 11, "success")
    assert p["skill_totem"] and p["source"] == "pool"
    assert state["resolve"] == 2 and state["last_test"]["rescued"]


def test_resolve_never_spent_when_it_would_not_succeed():
    """'You never need to spend Resolve if it won't make you succeed in the test.'"""
    state = hero()
    state, _ = run(state, {"type": "skill_test", "skill": "Persuade", "target": 12}, [4, 4])
    with pytest.raises(RuleError, match="still short of T12"):
        SYSTEM.decide(state, {"type": "spend_resolve", "totem": "Stag"}, ScriptedDice([]))


def test_aspect_free_resolve_once_a_scene_lasts_the_scene():
    """'you can invoke the aspect once a scene to get a free point of Resolve.
    This free point only lasts as long as the scene.'"""
    state = SYSTEM.evolve(hero(), Event("scene_started", {"scene": 1}))
    state, _ = run(state, {"type": "invoke_aspect"}, [])
    assert state["scene_resolve"] == 1
    with pytest.raises(RuleError, match="already invoked"):
        SYSTEM.decide(state, {"type": "invoke_aspect"}, ScriptedDice([]))
    state, _ = run(state, {"type": "skill_test", "skill": "Persuade", "target": 10}, [4, 4])
    state, events = run(state, {"type": "spend_resolve", "totem": "Turtle"}, [])
    assert events[0].payload["source"] == "aspect"  # the free point goes first
    assert state["scene_resolve"] == 0 and state["resolve"] == 3
    state = SYSTEM.evolve(state, Event("scene_ended", {"scene": 1}))
    state = SYSTEM.evolve(state, Event("scene_started", {"scene": 2}))
    state, _ = run(state, {"type": "invoke_aspect"}, [])  # a new scene: once again
    state = SYSTEM.evolve(state, Event("scene_ended", {"scene": 2}))
    assert state["scene_resolve"] == 0 and state["resolve"] == 3  # the unused free point lapsed


def test_gm_invokes_aspect_for_minus_two():
    """'The GM can also invoke the Aspect as well, to add a -2 penalty to any skill test.'"""
    state = hero()
    state, events = run(state, {"type": "gm_invoke_aspect"}, [])
    assert events[0].payload["penalty"] == -2
    state, events = run(state, {"type": "skill_test", "skill": "Move", "target": 8}, [5, 4])
    p = events[0].payload
    assert p["aspect_penalty"] == -2 and p["total"] == 7 and not p["success"]
    assert state["gm_penalty"] == 0  # used up by that test
    _, events = run(state, {"type": "skill_test", "skill": "Move", "target": 8}, [5, 4])
    assert events[0].payload["total"] == 9


def test_injury_track_numbers_5_4_3_2_1_then_taken_out():
    """'the injury track starts with its first five spots numbered 5, 4, 3, 2, 1'."""
    state = hero(Hunt=5)
    state, events = run(state, {"type": "mark_injury", "count": 5}, [])
    assert [s["number"] for s in events[0].payload["spots"]] == [5, 4, 3, 2, 1]
    assert events[0].payload["blocked"] == [1, 2, 3, 4, 5]
    # Only a 6 can be selected now; no 6 means the skill die counts 0.
    _, events = run(state, {"type": "skill_test", "skill": "Hunt", "target": 8}, [5, 4, 3, 2, 1, 6])
    p = events[0].payload
    assert p["skill_die"] == 0 and p["total"] == 6 and not any(d["selected"] for d in p["dice"][:5])
    state, events = run(state, {"type": "mark_injury"}, [])
    assert events[0].payload["taken_out"] and state["taken_out"]
    with pytest.raises(RuleError, match="taken out"):
        SYSTEM.decide(state, {"type": "skill_test", "skill": "Hunt", "target": 8}, ScriptedDice([]))


def test_rating_zero_rolls_the_paragon_alone():
    """Skills are ranked 0 to 5; with 0 there is no skill die to select."""
    _, events = run(hero(Hunt=0), {"type": "skill_test", "skill": "Hunt", "target": 6}, [6])
    p = events[0].payload
    assert p["dice"] == [{"die": "paragon", "face": 6, "selected": True, "blocked": False,
                          "why": "the Paragon is always added"}]
    assert p["skill_die"] == 0 and p["total"] == 6 and p["success"] and not p["critical"]


def test_five_skill_dice_and_one_paragon():
    """'Each player needs only one Paragon die and up to five plain dice.'"""
    _, events = run(hero(Hunt=5), {"type": "skill_test", "skill": "Hunt", "target": 8}, [2, 6, 3, 6, 1, 2])
    p = events[0].payload
    assert len(p["dice"]) == 6 and p["skill_die"] == 6 and p["total"] == 8
    assert [d["selected"] for d in p["dice"][:5]] == [False, True, False, False, False]  # first 6 wins


def test_effect_dice_are_plain_no_paragon_no_critical():
    """'Effect Dice (when making an Effect Test)': plain d6s (section cut off)."""
    _, events = run(hero(), {"type": "effect_test", "dice": 3, "target": 6, "label": "damage"}, [1, 1, 1])
    p = events[0].payload
    assert p["total"] == 3 and p["outcome"] == "failure" and "critical" not in p
    assert p["odds"]["success"]["p"] == str(Fraction(206, 216))
