"""WYRM actions one by one: payloads, state changes, and every refusal."""

import copy
import json

import pytest

from rules.base import Event, RuleError, ScriptedDice, SheetError

from .helpers import THIEF, WYRM, make, play


def refused(state, action, match):
    """Assert the action is refused with a message matching ``match`` and rolls no die."""
    dice = ScriptedDice([])
    with pytest.raises(RuleError, match=match):
        WYRM.decide(state, action, dice)
    assert dice.rolled == []


def after_check(state=None, faces=(2,), **fields):
    action = {"type": "check", "attribute": "rogue", "skills": ["Stealth"], "dl": 10, **fields}
    return play(make() if state is None else state, action, faces)[1]


# --- the system --------------------------------------------------------------


def test_system_shape():
    assert WYRM.name == "wyrm" and WYRM.title == "WYRM (Warrior, Rogue & Mage)"
    assert WYRM.gm_actions == {"automatic_success", "approve_fate", "deny_fate", "grant_fate", "award_points",
                               "mark_harm", "heal_harm", "apply_condition", "remove_condition"}
    assert WYRM.gm_actions < set(WYRM.actions)
    refused(make(), {"type": "fly"}, "no action 'fly'")


def test_platform_fields_are_tolerated():
    action = {"type": "check", "attribute": "Rogue", "dl": 4, "visibility": "gm", "character": 7, "note": "x", "target_user": 3}
    (event,), _ = play(make(), action, [1])
    assert event.payload["attribute"] == "rogue" and event.payload["success"]


def test_initial_state_and_json():
    state = make()
    assert state["fate"] == 2 and state["points"] == {"earned": 0, "spent": 0}
    assert state["attributes"] == {"warrior": 1, "rogue": 3, "mage": 2}
    assert state["sheet"]["options"]["attribute_max"] == 6
    assert json.loads(json.dumps(state)) == state


# --- sheets --------------------------------------------------------------------


def test_sheet_normalises():
    sheet = WYRM.validate_sheet({"attributes": {"Warrior": 0, "ROGUE": 6, "mage": 0}, "skills": [{"name": " Lore ", "attribute": "Mage"}]})
    assert sheet["attributes"] == {"warrior": 0, "rogue": 6, "mage": 0}
    assert sheet["skills"] == [{"name": "Lore", "attribute": "mage"}] and sheet["fate"] == 0
    assert sheet["options"]["advance_costs"] == {"attribute": 10, "skill": 5}


@pytest.mark.parametrize("sheet, field", [
    (None, "sheet"),
    ([], "sheet"),
    ({}, "attributes"),
    ({"attributes": {"warrior": 1, "rogue": 1}}, "attributes.mage"),
    ({"attributes": {"warrior": 7, "rogue": 1, "mage": 1}}, "attributes.warrior"),
    ({"attributes": {"warrior": -1, "rogue": 1, "mage": 1}}, "attributes.warrior"),
    ({"attributes": {"warrior": True, "rogue": 1, "mage": 1}}, "attributes.warrior"),
    ({"attributes": {"warrior": 10**100, "rogue": 1, "mage": 1}}, "attributes.warrior"),
    ({"attributes": {"warrior": 1, "rogue": 1, "mage": 1, "priest": 1}}, "attributes.priest"),
    ({"attributes": {"warrior": 1, "Warrior": 1, "rogue": 1, "mage": 1}}, "attributes.warrior"),
    (dict(THIEF, fate=100), "fate"),
    (dict(THIEF, hp=3), "hp"),
    (dict(THIEF, name=7), "name"),
    (dict(THIEF, name="x" * 81), "name"),
    (dict(THIEF, skills="Stealth"), "skills"),
    (dict(THIEF, skills=[{"name": "Stealth", "attribute": "rogue"}, {"name": "stealth", "attribute": "mage"}]), "skills[1].name"),
    (dict(THIEF, skills=[{"name": "Stealth", "attribute": "thief"}]), "skills[0].attribute"),
    (dict(THIEF, skills=[{"name": "Stealth", "attribute": "rogue", "rank": 2}]), "skills[0].rank"),
    (dict(THIEF, skills=[{"name": f"s{i}", "attribute": "rogue"} for i in range(31)]), "skills"),
    (dict(THIEF, options={"attribute_max": 11}), "options.attribute_max"),
    (dict(THIEF, options={"second_skill_bonus": 1}), "options.second_skill_bonus"),
    (dict(THIEF, options={"advance_costs": {"attribute": 0}}), "options.advance_costs.attribute"),
    (dict(THIEF, options={"advance_costs": {"spell": 3}}), "options.advance_costs.spell"),
    (dict(THIEF, options={"house_rule": True}), "options.house_rule"),
])
def test_bad_sheets(sheet, field):
    with pytest.raises(SheetError) as err:
        WYRM.validate_sheet(sheet)
    assert err.value.field == field


def test_attribute_max_is_a_campaign_option():
    sheet = WYRM.validate_sheet({"attributes": {"warrior": 8, "rogue": 0, "mage": 0}, "options": {"attribute_max": 8}})
    assert sheet["attributes"]["warrior"] == 8


# --- checks ---------------------------------------------------------------------


@pytest.mark.parametrize("fields, match", [
    ({"attribute": "priest"}, "one of warrior, rogue or mage"),
    ({"attribute": 3}, "one of warrior, rogue or mage"),
    ({"skills": ["Dancing"]}, "does not know the skill 'Dancing'"),
    ({"skills": "Stealth"}, "'skills' must be a list of at most 2 \\(Skill: text"),
    ({"skills": 1}, "'skills' must be a list of at most 2"),
    ({"skills": ["Stealth", "stealth"], "gm_allows_second_skill": True}, "named twice"),
    ({"skills": ["Stealth", "Climbing", "Swords"]}, "'skills' must be a list of at most 2 .*, not 3 of them"),
    ({"skills": ["Stealth", "Climbing"]}, "only when the GM allows"),
    ({"skills": ["Stealth", "Climbing"], "gm_allows_second_skill": "yes"}, "true or false"),
    ({"dl": None}, "either 'dl'"),
    ({"vs": {"attribute": 2}}, "either 'dl'"),
    ({"dl": 61}, "'dl' must be from 0 to 60"),
    ({"dl": 9.5}, "'dl' must be a whole number"),
    ({"modifier": 21}, "'modifier' must be from -20 to 20"),
    ({"dl": None, "vs": [2, 1]}, "'vs' must be an object"),
    ({"dl": None, "vs": {"attribute": 11}}, "'vs.attribute' must be from 0 to 10"),
    ({"dl": None, "vs": {"skills": 1}}, "'vs.attribute' is required"),
    ({"dl": None, "vs": {"attribute": 2, "skills": 3}}, "'vs.skills' must be from 0 to 2"),
    ({"dl": None, "vs": {"attribute": 2, "static": "no"}}, "'vs.static' must be true or false"),
    ({"task": 5}, "'task' must be text of 1 to 500 characters"),
])
def test_check_refusals(fields, match):
    action = {"type": "check", "attribute": "rogue", "skills": ["Stealth"], "dl": 9, **fields}
    refused(make(), {k: v for k, v in action.items() if v is not None}, match)


def test_check_event_records_everything():
    (event,), state = play(make(), {"type": "check", "attribute": "rogue", "skills": ["stealth"], "vs": {"attribute": 2}, "modifier": 1}, [5, 6, 1])
    p = event.payload
    assert p["opposition"] == {"attribute": 2, "skills": 0, "skill_bonus": 0, "static": False, "explodes": False,
                               "dice": [{"face": 5, "exploded": False}], "die_total": 5, "total": 7}
    assert (p["dl_base"], p["modifier"], p["dl"]) == (7, 1, 8)
    assert p["skills"] == ["Stealth"] and p["dice"] == [{"face": 6, "exploded": True}, {"face": 1, "exploded": False}]
    assert (p["total"], p["outcome"], p["roll"]) == (12, "success", 1)
    assert set(p["odds"]) == {"success", "failure"}
    assert state["rolls"] == 1 and state["last_roll"]["roll"] == 1
    assert json.loads(json.dumps(p)) == p


def test_ties_fail_with_the_strict_option():
    thief = make(options={"ties_succeed": False})
    (event,), _ = play(thief, {"type": "check", "attribute": "warrior", "dl": 5}, [4])
    assert event.payload["total"] == 5 and not event.payload["success"]


# --- damage --------------------------------------------------------------------


@pytest.mark.parametrize("fields, match", [
    ({"dice": 0}, "'dice' must be from 1 to 3"),
    ({"dice": 4}, "'dice' must be from 1 to 3"),
    ({"dice": "2"}, "'dice' must be a whole number"),
    ({"bonus": -1}, "'bonus' must be from 0 to 20"),
    ({"bonus": 21}, "'bonus' must be from 0 to 20"),
])
def test_damage_refusals(fields, match):
    refused(make(), {"type": "damage", **fields}, match)


def test_damage_several_dice_in_order():
    (event,), state = play(make(), {"type": "damage", "dice": 3, "bonus": 1}, [2, 6, 6, 1, 4])
    p = event.payload
    assert p["die_totals"] == [2, 13, 4] and p["total"] == 20
    assert state["last_roll"]["kind"] == "damage"


# --- automatic success -----------------------------------------------------------


def test_automatic_success_refusals():
    refused(make(), {"type": "automatic_success", "attribute": "rogue", "skill": "Dancing"}, "needs a relevant skill")
    refused(make(), {"type": "automatic_success", "attribute": "rogue"}, "'skill' is required")
    refused(make(), {"type": "automatic_success", "attribute": "x", "skill": "Stealth"}, "one of warrior, rogue or mage")


# --- Fate ------------------------------------------------------------------------


def test_spend_fate_refusals():
    refused(make(fate=0), {"type": "spend_fate", "use": "ignore_attack"}, "no Fate left")
    refused(make(), {"type": "spend_fate", "use": "wish"}, "'use' must be one of")
    refused(make(), {"type": "spend_fate", "use": "reroll"}, "no roll of yours")
    refused(make(), {"type": "spend_fate", "use": "plus_two"}, "no roll of yours")
    refused(make(), {"type": "spend_fate", "use": "minor_detail"}, "'detail' is required")
    pending = play(make(), {"type": "spend_fate", "use": "ignore_attack"})[1]
    refused(pending, {"type": "spend_fate", "use": "minor_detail", "detail": "a shop"}, "already asked")
    hurt = play(make(), {"type": "damage", "dice": 2}, [3, 4])[1]
    refused(hurt, {"type": "spend_fate", "use": "plus_two"}, "not to a damage roll")
    refused(hurt, {"type": "spend_fate", "use": "reroll"}, "which damage die")
    refused(hurt, {"type": "spend_fate", "use": "reroll", "die": 3}, "'die' must be from 1 to 2")
    checked = after_check()
    refused(checked, {"type": "spend_fate", "use": "reroll", "die": 2}, "'die' must be from 1 to 1")


def test_one_fate_point_per_roll():
    state = after_check()
    state = play(state, {"type": "spend_fate", "use": "plus_two"})[1]
    state = play(state, {"type": "approve_fate"})[1]
    refused(state, {"type": "spend_fate", "use": "reroll"}, "already changed that roll")
    refused(state, {"type": "spend_fate", "use": "plus_two"}, "already changed that roll")


def test_approve_and_deny_refusals():
    refused(make(), {"type": "approve_fate"}, "no Fate request waiting")
    refused(make(), {"type": "deny_fate"}, "no Fate request waiting")
    # A new roll after the request: the request no longer fits; the GM denies it.
    state = play(after_check(), {"type": "spend_fate", "use": "reroll"})[1]
    state = after_check(state, faces=(5,))
    refused(state, {"type": "approve_fate"}, "no longer your last roll")
    (event,), state = play(state, {"type": "deny_fate", "reason": "too late"})
    assert event.payload == {"use": "reroll", "roll": 1, "reason": "too late"}
    assert state["pending_fate"] is None and state["fate"] == 2


def test_deny_spends_nothing():
    state = play(make(), {"type": "spend_fate", "use": "minor_detail", "detail": "a dragon is my uncle"})[1]
    (event,), state = play(state, {"type": "deny_fate"})
    assert event.type == "fate_denied" and state["fate"] == 2 and state["pending_fate"] is None


def test_reroll_one_damage_die():
    state = play(make(), {"type": "damage", "dice": 2, "bonus": 1}, [1, 5])[1]
    (request,), state = play(state, {"type": "spend_fate", "use": "reroll", "die": 1})
    assert request.payload == {"use": "reroll", "roll": 1, "die": 1, "detail": None, "fate": 2}
    (spent,), state = play(state, {"type": "approve_fate"}, [6, 4])
    p = spent.payload
    assert (p["die"], p["original_total"], p["total"], p["outcome"]) == (1, 7, 16, "16")
    assert p["original_dice"] == [[{"face": 1, "exploded": False}], [{"face": 5, "exploded": False}]]
    assert p["dice"][0] == p["new_dice"] == [{"face": 6, "exploded": True}, {"face": 4, "exploded": False}]
    assert p["odds"]["7"]["p"] == "1/6"  # the other die (5) + bonus 1 + a 1
    assert state["last_roll"]["total"] == 16 and state["fate"] == 1


def test_reroll_of_an_opposed_check_keeps_the_passive_roll():
    action = {"type": "check", "attribute": "rogue", "skills": ["Stealth"], "vs": {"attribute": 2, "skills": 1}}
    state = play(make(), action, [4, 1])[1]  # DL 8, thief 6
    state = play(state, {"type": "spend_fate", "use": "reroll"})[1]
    (spent,), state = play(state, {"type": "approve_fate"}, [3])  # only the thief's die
    assert (spent.payload["dl"], spent.payload["total"], spent.payload["outcome"]) == (8, 8, "success")
    assert spent.payload["odds"]["success"]["p"] == "2/3"  # die needs 3+


def test_scene_end_lapses_fate_on_rolls():
    state = play(after_check(), {"type": "spend_fate", "use": "plus_two"})[1]
    for event_type in ("scene_ended", "session_ended"):
        ended = WYRM.evolve(state, Event(event_type, {"scene": 1}))
        assert ended["last_roll"] is None and ended["pending_fate"] is None and ended["fate"] == 2
        refused(ended, {"type": "approve_fate"}, "no Fate request")
        refused(ended, {"type": "spend_fate", "use": "reroll"}, "no roll of yours")
    assert WYRM.evolve(state, Event("scene_started", {"scene": 2})) == state


def test_grant_fate():
    refused(make(fate=99), {"type": "grant_fate"}, "at most 99 Fate")
    refused(make(fate=95), {"type": "grant_fate", "amount": 5}, "at most 99 Fate")
    refused(make(), {"type": "grant_fate", "amount": 11}, "'amount' must be from 1 to 10")
    refused(make(), {"type": "grant_fate", "amount": 0}, "'amount' must be from 1 to 10")
    (event,), state = play(make(fate=95), {"type": "grant_fate", "amount": 4, "reason": "slew the wyrm"})
    assert event.payload == {"amount": 4, "reason": "slew the wyrm", "fate": 99} and state["fate"] == 99


# --- advancement ------------------------------------------------------------------


def rich(points=100, **sheet):
    return play(make(**sheet), {"type": "award_points", "points": points, "reason": "a good session"})[1]


def test_award_points():
    (event,), state = play(make(), {"type": "award_points", "points": 7, "reason": "saved the town"})
    assert event.payload == {"points": 7, "reason": "saved the town"} and state["points"]["earned"] == 7
    for bad, match in ((0, "from 1 to 100"), (101, "from 1 to 100"), (True, "whole number"), (None, "required")):
        refused(make(), {"type": "award_points", "points": bad}, match)
    maxed = copy.deepcopy(make())
    maxed["points"]["earned"] = 1_000_000
    refused(maxed, {"type": "award_points", "points": 1}, "at most 1000000")


def test_buy_attribute():
    (event,), state = play(rich(), {"type": "buy_advance", "advance": "attribute", "attribute": "Mage"})
    assert event.payload == {"advance": "attribute", "attribute": "mage", "from": 2, "to": 3, "cost": 10, "points_left": 90}
    assert state["attributes"]["mage"] == 3 and state["points"] == {"earned": 100, "spent": 10}
    assert state["sheet"]["attributes"]["mage"] == 2  # the submitted sheet stays as it was


def test_buy_skill_then_use_it():
    (event,), state = play(rich(), {"type": "buy_advance", "advance": "skill", "skill": "Fire Magic", "attribute": "mage"})
    assert event.payload["cost"] == 5 and state["skills"][-1] == {"name": "Fire Magic", "attribute": "mage"}
    (check,), _ = play(state, {"type": "check", "attribute": "mage", "skills": ["fire magic"], "dl": 5}, [1])
    assert check.payload["total"] == 5 and check.payload["explodes"]


def test_costs_are_gm_set():
    state = rich(12, options={"advance_costs": {"attribute": 12, "skill": 3}})
    (event,), _ = play(state, {"type": "buy_advance", "advance": "attribute", "attribute": "warrior"})
    assert event.payload["cost"] == 12


def test_buy_advance_refusals():
    refused(make(), {"type": "buy_advance", "advance": "attribute", "attribute": "rogue"}, "costs 10 points; you have 0")
    refused(rich(4), {"type": "buy_advance", "advance": "skill", "skill": "Lore", "attribute": "mage"}, "Learning Lore costs 5 points; you have 4")
    maxed = rich(attributes={"warrior": 6, "rogue": 0, "mage": 0})
    refused(maxed, {"type": "buy_advance", "advance": "attribute", "attribute": "warrior"}, "already 6, the highest")
    refused(rich(), {"type": "buy_advance", "advance": "skill", "skill": "stealth", "attribute": "rogue"}, "already knows 'stealth'")
    refused(rich(), {"type": "buy_advance", "advance": "skill", "skill": "", "attribute": "rogue"}, "'skill' is required")
    refused(rich(), {"type": "buy_advance", "advance": "skill", "skill": "Lore"}, "one of warrior, rogue or mage")
    refused(rich(), {"type": "buy_advance", "advance": "spell"}, "'advance' must be")
    full = rich(skills=[{"name": f"s{i}", "attribute": "mage"} for i in range(30)])
    refused(full, {"type": "buy_advance", "advance": "skill", "skill": "Lore", "attribute": "mage"}, "at most 30 skills")


# --- evolve ---------------------------------------------------------------------------


def test_evolve_never_mutates_and_ignores_unknown_events():
    state = after_check()
    frozen = copy.deepcopy(state)
    (event,), _ = play(state, {"type": "spend_fate", "use": "reroll"})
    WYRM.evolve(state, event)
    assert state == frozen
    assert WYRM.evolve(state, Event("roll", {"dice": [3]})) is state
    assert WYRM.evolve(state, Event("automatic_success_granted", {})) is state


def test_rolls_stored_under_their_old_names_fold_as_today_s():
    """A log from before the past-tense names holds ``attribute_check`` and
    ``damage_roll`` rows (never rewritten); they fold exactly as today's events."""
    for action, faces in (({"type": "check", "attribute": "rogue", "skills": ["Stealth"], "dl": 10}, (4,)),
                          ({"type": "damage", "dice": 2, "bonus": 1}, (3, 5))):
        (event,), now = play(make(), action, faces)
        old = Event({"attribute_checked": "attribute_check", "damage_rolled": "damage_roll"}[event.type], event.payload)
        assert WYRM.evolve(make(), old) == now
    assert WYRM.events.renames() == {"attribute_check": "attribute_checked", "damage_roll": "damage_rolled",
                                     "automatic_success": "automatic_success_granted"}


def test_the_sheet_s_ranges_are_its_declaration_s(monkeypatch):
    """validate_sheet reads its shapes and ranges from SHEET: narrowing the declared
    Fate range narrows what it accepts (no second copy of the limit)."""
    from rules.wyrm.sheet import SHEET

    assert WYRM.validate_sheet(dict(THIEF, fate=4))["fate"] == 4
    monkeypatch.setattr(SHEET.fields["fate"], "hi", 3)
    with pytest.raises(SheetError) as err:
        WYRM.validate_sheet(dict(THIEF, fate=4))
    assert err.value.field == "fate" and "from 0 to 3" in err.value.message
