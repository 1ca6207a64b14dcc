"""Mundo das Trevas Lite: sheet validation, every refusal, evolve, advancement, preview."""

import copy

import pytest

from rules import Event, RuleError, ScriptedDice, SheetError, get_system
from rules.mdt import settings
from rules.mdt.sheet import ATTRIBUTES
from rules.options import defaults

MDT = get_system("mdt")
ATTRS = {key: 2 for key in ATTRIBUTES}


def sheet(**overrides):
    return {"name": "Rui", "attributes": dict(ATTRS), "specializations": {"Armas de fogo": 1}, **overrides}


def character(**overrides):
    return MDT.initial_state(sheet(**overrides))


def refused(state, action, message):
    with pytest.raises(RuleError) as error:
        MDT.decide(state, action, ScriptedDice([]))  # no dice: a refusal rolls nothing
    assert message in error.value.message
    return error.value


def apply(state, action, faces=()):
    return MDT.replay(state, MDT.decide(state, action, ScriptedDice(list(faces))))


# ---------------------------------------------------------------- sheet

def test_sheet_is_normalised_with_defaults():
    clean = MDT.validate_sheet({"attributes": dict(ATTRS), "specializations": {"  Ocultismo ": 2}})
    assert clean["name"] == "" and clean["concept"] == ""
    assert clean["specializations"] == {"Ocultismo": 2}
    assert clean["options"] == defaults(settings.OPTIONS)  # every campaign setting at its default


@pytest.mark.parametrize("bad, field", [
    (None, "sheet"),
    ([], "sheet"),
    ("sheet", "sheet"),
    ({}, "attributes"),
    ({"attributes": {**ATTRS, "strength": 6}}, "attributes.strength"),
    ({"attributes": {**ATTRS, "strength": -1}}, "attributes.strength"),
    ({"attributes": {**ATTRS, "strength": True}}, "attributes.strength"),
    ({"attributes": {**ATTRS, "strength": 10**100}}, "attributes.strength"),
    ({"attributes": {**ATTRS, "strength": 2.0}}, "attributes.strength"),
    ({"attributes": {k: v for k, v in ATTRS.items() if k != "wits"}}, "attributes.wits"),
    ({"attributes": {**ATTRS, "charm": 1}}, "attributes.charm"),
    ({"attributes": ATTRS, "specializations": {"Faca": 4}}, "specializations.Faca"),
    ({"attributes": ATTRS, "specializations": {"Faca": 0}}, "specializations.Faca"),
    ({"attributes": ATTRS, "specializations": {"Faca": 1, "faca": 2}}, "specializations.faca"),
    ({"attributes": ATTRS, "specializations": {"  ": 1}}, "specializations.  "),
    ({"attributes": ATTRS, "specializations": {f"S{i}": 1 for i in range(21)}}, "specializations"),
    ({"attributes": ATTRS, "specializations": ["Faca"]}, "specializations"),
    ({"attributes": ATTRS, "options": {"luck_ten_successes": 3}}, "options.luck_ten_successes"),
    ({"attributes": ATTRS, "options": {"luck_dramatic_failure": 1}}, "options.luck_dramatic_failure"),
    ({"attributes": ATTRS, "options": {"house_rule": 1}}, "options.house_rule"),
    ({"attributes": ATTRS, "name": 7}, "name"),
    ({"attributes": ATTRS, "name": "x" * 101}, "name"),
    ({"attributes": ATTRS, "hp": 7}, "hp"),
])
def test_bad_sheets_are_refused_naming_the_field(bad, field):
    with pytest.raises(SheetError) as error:
        MDT.validate_sheet(bad)
    assert error.value.field == field


def test_initial_state():
    state = character()
    assert state["points"] == {"earned": 0, "spent": 0}
    assert state["contest"] is None and state["projects"] == {}


# ---------------------------------------------------------------- refusals of tests

@pytest.mark.parametrize("action, message", [
    ({"type": "test"}, "'attribute' is required: one of"),
    ({"type": "test", "attribute": "charm"}, "'attribute' must be one of"),
    ({"type": "test", "attribute": ["strength"]}, "'attribute' must be one of"),
    ({"type": "test", "attribute": "strength", "specialization": "Esgrima"}, "no specialization 'Esgrima'"),
    ({"type": "test", "attribute": "strength", "specialization": 3}, "'specialization' must be"),
    ({"type": "test", "attribute": "strength", "modifier": 11}, "'modifier' must be from -10 to 10"),
    ({"type": "test", "attribute": "strength", "modifier": "1"}, "'modifier' must be a whole number"),
    ({"type": "test", "attribute": "strength", "difficulty": 4}, "'difficulty' must be one of 1, 2 or 3, not 4"),
    ({"type": "test", "attribute": "strength", "difficulty": 0}, "'difficulty' must be one of 1, 2 or 3, not 0"),
    ({"type": "test", "attribute": "strength", "difficulty": "hard"}, "'difficulty' must be one of 1, 2 or 3, not 'hard'"),
    ({"type": "opposed_test", "attribute": "strength"}, "'vs_pool' is required"),
    ({"type": "opposed_test", "attribute": "strength", "vs_pool": 31}, "'vs_pool' must be from -30 to 30"),
    ({"type": "opposed_test", "attribute": "strength", "vs_pool": 3, "tie_goes_to": "me"}, "'tie_goes_to'"),
    ({"type": "roll_initiative"}, "has no action 'roll_initiative'"),
    ({"type": None}, "has no action"),
])
def test_bad_test_actions_are_refused(action, message):
    refused(character(), action, message)


def test_platform_fields_are_tolerated():
    action = {"type": "test", "attribute": "Strength", "visibility": "gm", "character": 3,
              "note": "quietly", "target_user": 9, "whatever": [1]}
    [event] = MDT.decide(character(), action, ScriptedDice([7, 2, 3]))
    assert event.payload["attribute"] == "strength" and event.payload["success"]


# ---------------------------------------------------------------- contests

def test_contest_refusals():
    state = character()
    refused(state, {"type": "contest_round"}, "There is no contest running")
    refused(state, {"type": "end_contest"}, "There is no contest running")
    refused(state, {"type": "start_contest", "attribute": "wits", "vs_pool": 3}, "'target' is required")
    refused(state, {"type": "start_contest", "attribute": "wits", "vs_pool": 3, "target": 51}, "'target' must be")
    state = apply(state, {"type": "start_contest", "attribute": "wits", "vs_pool": 25, "target": 5})
    refused(state, {"type": "start_contest", "attribute": "wits", "vs_pool": 3, "target": 5},
            "A contest is already running")
    refused(state, {"type": "contest_round", "vs_modifier": 6}, "The opponent's pool may have at most 30 dice")
    refused(state, {"type": "contest_round", "modifier": -11}, "'modifier' must be from -10 to 10")


def test_end_contest_and_scene_end_clear_the_contest():
    start = {"type": "start_contest", "attribute": "wits", "vs_pool": 3, "target": 5, "label": "perseguição"}
    state = apply(character(), start)
    ended = MDT.decide(state, {"type": "end_contest", "reason": "fugiu"}, ScriptedDice([]))
    assert ended[0].payload["label"] == "perseguição" and ended[0].payload["reason"] == "fugiu"
    assert MDT.replay(state, ended)["contest"] is None
    assert MDT.evolve(state, Event("scene_ended", {"scene": 1}))["contest"] is None
    assert MDT.evolve(state, Event("scene_started", {"scene": 2})) == state


def test_a_race_names_its_opponent_as_an_opposed_test_does():
    """A play-test's find: the Storyteller's race form sent no opponent's name (the players' opposed
    test does), and start_contest had no field for one: the sheet and the log said "them"."""
    [started] = MDT.decide(character(), {"type": "start_contest", "attribute": "wits", "vs_pool": 3, "target": 5,
                                         "opponent": "  the hound "}, ScriptedDice([]))
    assert started.payload["opponent_name"] == "the hound" and started.payload.get("opponent") is None
    state = MDT.replay(character(), [started])
    assert state["contest"]["opponent_name"] == "the hound"
    [round_] = MDT.decide(state, {"type": "contest_round"}, ScriptedDice([2, 2, 2, 2, 2, 2]))
    assert round_.payload["opponent_name"] == "the hound"
    # A race recorded before the name was: none, and its rounds still roll.
    old = {k: v for k, v in started.payload.items() if k != "opponent_name"}
    assert "opponent_name" not in MDT.replay(character(), [Event("contest_started", old)])["contest"]
    assert MDT.decide(MDT.replay(character(), [Event("contest_started", old)]), {"type": "contest_round"},
                      ScriptedDice([2] * 6))[0].payload["opponent_name"] == ""


def test_contest_round_uses_the_standing_modifier_and_the_current_sheet():
    state = apply(character(), {"type": "start_contest", "attribute": "wits", "vs_pool": 0,
                                "target": 4, "modifier": 1})
    [event] = MDT.decide(state, {"type": "contest_round", "modifier": -1, "vs_modifier": 2},
                         ScriptedDice([7, 2, 3] + [2, 3]))
    p = event.payload
    assert (p["pool"], p["modifier"], p["round_modifier"], p["vs_pool"]) == (3, 0, -1, 2)


def test_opponent_with_no_dice_rolls_a_luck_die():
    [event] = MDT.decide(character(), {"type": "opposed_test", "attribute": "wits", "vs_pool": -2},
                         ScriptedDice([2, 3, 4] + [10]))
    assert event.payload["opponent_roll"]["luck_test"] and event.payload["opponent_roll"]["successes"] == 1
    assert event.payload["outcome"] == "loss"


# ---------------------------------------------------------------- projects

def test_project_refusals():
    state = character()
    refused(state, {"type": "project_roll", "project": "Carro"}, "no project 'Carro'")
    refused(state, {"type": "project_roll"}, "'project' is required")
    refused(state, {"type": "abandon_project", "project": "Carro"}, "no project 'Carro'")
    refused(state, {"type": "start_project", "attribute": "wits", "target": 5}, "'name' is required: text")
    refused(state, {"type": "start_project", "name": "Carro", "attribute": "wits", "target": 101}, "'target'")
    refused(state, {"type": "start_project", "name": "Carro", "attribute": "wits", "target": 5,
                    "reset_on_dramatic_failure": "yes"}, "must be true or false")
    state = apply(state, {"type": "start_project", "name": "Carro", "attribute": "wits", "target": 5})
    refused(state, {"type": "start_project", "name": "carro", "attribute": "wits", "target": 5},
            "already has a project called 'carro'")
    for i in range(9):
        state = apply(state, {"type": "start_project", "name": f"P{i}", "attribute": "wits", "target": 5})
    refused(state, {"type": "start_project", "name": "Mais um", "attribute": "wits", "target": 5},
            "at most 10 projects")


def test_abandon_project():
    state = apply(character(), {"type": "start_project", "name": "Carro", "attribute": "wits", "target": 5})
    [event] = MDT.decide(state, {"type": "abandon_project", "project": "CARRO"}, ScriptedDice([]))
    assert event.payload["project"] == "Carro"
    assert MDT.replay(state, [event])["projects"] == {}


def test_project_roll_sees_advances_bought_during_the_project():
    state = apply(character(), {"type": "start_project", "name": "Carro", "attribute": "wits", "target": 9})
    state = apply(state, {"type": "award_points", "points": 6, "reason": "sessão"})
    state = apply(state, {"type": "buy_advance", "attribute": "wits"})
    [event] = MDT.decide(state, {"type": "project_roll", "project": "Carro"}, ScriptedDice([2, 3, 4, 5]))
    assert event.payload["pool"] == 4


# ---------------------------------------------------------------- advancement

def test_award_points_and_its_refusals():
    state = apply(character(), {"type": "award_points", "points": 5, "reason": "boa sessão"})
    assert state["points"] == {"earned": 5, "spent": 0}
    refused(state, {"type": "award_points", "points": 0}, "'points' must be from 1 to 100")
    refused(state, {"type": "award_points", "points": 101}, "'points' must be from 1 to 100")
    refused(state, {"type": "award_points", "points": 5, "reason": 3}, "'reason' must be text")
    rich = copy.deepcopy(state)
    rich["points"]["earned"] = 999_999
    refused(rich, {"type": "award_points", "points": 2}, "at most 1000000 points")
    assert {"award_points", "start_contest", "start_project", "say_yes"} <= MDT.gm_actions
    assert "buy_advance" not in MDT.gm_actions and "test" not in MDT.gm_actions


def test_buy_advance_costs_and_refusals():
    state = apply(character(), {"type": "award_points", "points": 10})
    refused(state, {"type": "buy_advance"}, "give either 'attribute' or 'specialization'")
    refused(state, {"type": "buy_advance", "attribute": "wits", "specialization": "x"}, "give either")
    refused(state, {"type": "buy_advance", "attribute": "luck"}, "'attribute' must be one of")
    refused(state, {"type": "buy_advance", "specialization": ""}, "Buy one advance at a time")

    [event] = MDT.decide(state, {"type": "buy_advance", "attribute": "wits"}, ScriptedDice([]))
    assert event.payload == {"kind": "attribute", "name": "wits", "from": 2, "to": 3, "cost": 6,
                             "available_before": 10, "available_after": 4}
    state = MDT.replay(state, [event])
    assert state["sheet"]["attributes"]["wits"] == 3 and state["points"] == {"earned": 10, "spent": 6}
    refused(state, {"type": "buy_advance", "attribute": "wits"}, "costs 8 points; you have 4")

    state = apply(state, {"type": "buy_advance", "specialization": "armas de fogo"})  # 1 -> 2 costs 2
    assert state["sheet"]["specializations"] == {"Armas de fogo": 2}
    state = apply(state, {"type": "buy_advance", "specialization": "Ocultismo"})  # new, costs 1
    assert state["sheet"]["specializations"] == {"Armas de fogo": 2, "Ocultismo": 1}
    assert state["points"]["spent"] == 9

    maxed = character(attributes={**ATTRS, "wits": 5}, specializations={"Faca": 3})
    maxed = apply(maxed, {"type": "award_points", "points": 100})
    refused(maxed, {"type": "buy_advance", "attribute": "wits"}, "already at the maximum of 5")
    refused(maxed, {"type": "buy_advance", "specialization": "faca"}, "already at the maximum of 3")
    crowded = apply(character(specializations={f"S{i}": 1 for i in range(20)}),
                    {"type": "award_points", "points": 100})
    refused(crowded, {"type": "buy_advance", "specialization": "Nova"}, "at most 20 specializations")
    apply(crowded, {"type": "buy_advance", "specialization": "s3"})  # raising an existing one is fine


def test_advance_costs_are_configurable():
    state = apply(character(options={"attribute_cost": 5, "specialization_cost": 3}),
                  {"type": "award_points", "points": 20})
    [event] = MDT.decide(state, {"type": "buy_advance", "attribute": "wits"}, ScriptedDice([]))
    assert event.payload["cost"] == 15
    [event] = MDT.decide(state, {"type": "buy_advance", "specialization": "Nova"}, ScriptedDice([]))
    assert event.payload["cost"] == 3


# ---------------------------------------------------------------- evolve, preview

def test_evolve_never_mutates_and_ignores_unknown_events():
    state = apply(character(), {"type": "start_project", "name": "Carro", "attribute": "wits", "target": 5})
    frozen = copy.deepcopy(state)
    events = MDT.decide(state, {"type": "project_roll", "project": "Carro"}, ScriptedDice([7, 2, 3]))
    after = MDT.replay(state, events)
    assert state == frozen and after["projects"]["Carro"]["progress"] == 1
    assert MDT.evolve(state, Event("roll", {"dice": [3]})) is state
    assert MDT.evolve(state, Event("session_ended", {"session": 1})) == state


def test_preview_matches_the_odds_stored_in_the_event():
    state = character()
    action = {"type": "test", "attribute": "strength", "specialization": "Armas de fogo", "difficulty": 2}
    odds = MDT.preview(state, action)
    assert odds == MDT.odds({"type": "test", "dice": 4, "difficulty": 2})
    [event] = MDT.decide(state, action, ScriptedDice([1, 2, 3, 4]))
    assert event.payload["odds"]["success"]["p"] == f"{odds['success'].numerator}/{odds['success'].denominator}"
    assert MDT.preview(state, {"type": "award_points", "points": 1}) == {}
    assert MDT.preview(state, {"type": "say_yes"}) == {"success": 1}
    with pytest.raises(RuleError):
        MDT.preview(state, {"type": "fly"})
    with pytest.raises(RuleError):
        MDT.preview(state, {"type": "contest_round"})
