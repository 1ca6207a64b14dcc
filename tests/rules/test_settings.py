"""Campaign settings (rules/options.py, rules/<system>/settings.py), the readings they switch,
the GM's sheet adjustments (rules/common.py) and the health track house rule (rules/health.py)."""

from __future__ import annotations

import json
import re
from fractions import Fraction
from importlib import import_module
from pathlib import Path

import pytest

from rules import SYSTEM_MODULES, ScriptedDice, get_system
from rules.base import Event, RuleError, SheetError
from rules.common import adjusted, plan_adjustment
from rules.options import CONFIGURED, change, defaults, flat

DOCS = Path(__file__).resolve().parents[2] / "docs" / "rules.md"


def declared(system):
    return import_module(f"rules.{system}.settings").OPTIONS


def configured(system, state, **changes):
    """``state`` after the GM changed the campaign's settings (dotted keys as ``a__b``)."""
    changes = {key.replace("__", "."): value for key, value in changes.items()}
    options, changed = change(declared(system), state["sheet"].get("options") or {}, changes)
    return get_system(system).evolve(state, Event(CONFIGURED, {"options": options, "changed": changed}))


@pytest.mark.parametrize("system", sorted(SYSTEM_MODULES))
def test_docs_list_every_setting_with_its_default(system):
    section = DOCS.read_text().split("## Campaign settings", 1)[1].split("\n## ", 1)[0]
    section = section.split(f"(`rules/{system}/settings.py`)", 1)[1].split("\n**", 1)[0]
    for option in declared(system):
        row = re.search(rf"^\| `{re.escape(option.key)}` \| `([^`]*)` \|", section, re.M)
        assert row, f"docs/rules.md's settings section has no row for {system} {option.key}"
        assert json.loads(row.group(1)) == option.default, option.key


@pytest.mark.parametrize("system", sorted(SYSTEM_MODULES))
def test_every_default_is_a_valid_value_and_the_sheet_accepts_the_whole_set(system):
    rules = get_system(system)
    for option in declared(system):
        assert option.check(option.default) == option.default
    sheet = {**rules.example_sheet, "options": defaults(declared(system))}
    assert rules.validate_sheet(sheet)["options"] == defaults(declared(system))


@pytest.mark.parametrize("system", sorted(SYSTEM_MODULES))
def test_a_configured_campaign_puts_its_options_in_every_state(system):
    rules = get_system(system)
    state = rules.initial_state(rules.example_sheet)
    option = next(o for o in declared(system) if o.kind in ("bool", "choice", "int"))
    new = (not option.default if option.kind == "bool" else
           next(c for c in option.choices if c != option.default) if option.kind == "choice" else
           option.hi if option.default != option.hi else option.lo)
    after = configured(system, state, **{option.key.replace(".", "__"): new})
    assert flat(declared(system), after["sheet"]["options"])[option.key] == new
    assert state != after and rules.validate_sheet(after["sheet"])["options"] == after["sheet"]["options"]


def test_a_change_names_what_changed_and_refuses_nonsense():
    options, changed = change(declared("wyrm"), {}, {"ties_succeed": False, "attribute_max": 6})
    assert changed == {"ties_succeed": {"from": True, "to": False}}  # attribute_max was already 6
    assert options["ties_succeed"] is False and options["advance_costs"] == {"attribute": 10, "skill": 5}
    with pytest.raises(RuleError, match="no setting 'hp'"):
        change(declared("wyrm"), {}, {"hp": 3})
    with pytest.raises(RuleError, match="'attribute_max' must be from 1 to 10, not 11"):
        change(declared("wyrm"), {}, {"attribute_max": 11})
    with pytest.raises(RuleError, match="nothing changed"):
        change(declared("wyrm"), {}, {"ties_succeed": True})
    with pytest.raises(RuleError, match="'injury_track\\[1\\]' must be"):
        change(declared("tote"), {}, {"injury_track": [5, 9]})


def test_options_are_checked_by_the_declared_field_kinds():
    """A setting is a field of rules/declare.py: same kinds, same ranges, same words as an action's."""
    from rules.declare import Choice, Integer
    from rules.options import Option

    by_key = {o.key: o for o in declared("tote")}
    assert isinstance(by_key["effect_test.mode"].field, Choice)
    assert change(declared("tote"), {}, {"effect_test.mode": "COUNT"})[0]["effect_test"]["mode"] == "count"
    attribute_max = {o.key: o for o in declared("wyrm")}["attribute_max"]
    assert isinstance(attribute_max.field, Integer) and (attribute_max.field.lo, attribute_max.field.hi) == (1, 10)
    with pytest.raises(RuleError, match="'injury_track' must be a list of 1 to 10"):
        change(declared("tote"), {}, {"injury_track": []})
    with pytest.raises(ValueError, match="kind must be one of"):
        Option("x", 1, "X", "", kind="percent")


def test_a_sheet_naming_an_unknown_option_is_refused_with_its_path():
    with pytest.raises(SheetError) as info:
        get_system("tote").validate_sheet({**get_system("tote").example_sheet, "options": {"effect_test": {"x": 1}}})
    assert info.value.field == "options.effect_test.x"


# --- Tale: settings as the defaults of action fields, and the skill die's price -----------------

def tale_state(**changes):
    rules = get_system("tale")
    state = rules.initial_state(rules.example_sheet)
    return configured("tale", state, **changes) if changes else state


def test_tale_ties_setting_is_the_contest_default_and_an_action_still_overrides_it():
    rules = get_system("tale")
    start = {"type": "start_contest", "vs_pool": 4}
    assert rules.decide(tale_state(), start, ScriptedDice([]))[0].payload["contest"]["ties"] == "stop"
    eliminating = tale_state(ties="eliminate")
    assert rules.decide(eliminating, start, ScriptedDice([]))[0].payload["contest"]["ties"] == "eliminate"
    assert rules.decide(eliminating, {**start, "ties": "stop"}, ScriptedDice([]))[0].payload["contest"]["ties"] == "stop"


def test_tale_on_tie_setting_changes_a_tied_straight_roll_and_its_odds():
    rules = get_system("tale")
    roll = {"type": "straight_roll", "characteristics": ["brawn", "deft"], "vs_pool": 1}
    state = rules.initial_state({**rules.example_sheet, "characteristics": {
        "brawn": 1, "deft": 1, "clever": 3, "skill": 3, "wisecrack": 2}})
    tie = [3, 3, 6]  # 3 + 3 against a 6
    lost = rules.decide(state, roll, ScriptedDice(tie))[0].payload
    won = rules.decide(configured("tale", state, on_tie="success"), roll, ScriptedDice(tie))[0].payload
    assert (lost["outcome"], won["outcome"]) == ("failure", "success")
    assert won["odds"]["success"]["float"] > lost["odds"]["success"]["float"]
    preview = rules.preview(configured("tale", state, on_tie="success"), roll)
    assert preview["success"] == Fraction(won["odds"]["success"]["p"])


def test_tale_with_secondary_setting_adds_the_secondary_to_the_combat_pool():
    rules = get_system("tale")
    start = {"type": "start_combat", "their_pool": 3}
    # brawn 4 (primary) + skill 3, + wisecrack 2 (the secondary) with the setting on.
    state = rules.initial_state({**rules.example_sheet, "secondary": "wisecrack"})
    assert rules.decide(state, start, ScriptedDice([]))[0].payload["contest"]["mine"] == 4 + 3
    with_it = configured("tale", state, with_secondary=True)
    assert rules.decide(with_it, start, ScriptedDice([]))[0].payload["contest"]["mine"] == 4 + 3 + 2
    # The example's secondary is Skill, in the pool already: the setting adds nothing (docs/rules.md, Tale 22).
    assert rules.decide(tale_state(with_secondary=True), start, ScriptedDice([]))[0].payload["contest"]["mine"] == 4 + 3


def test_tale_skill_die_cost_reading_is_a_setting():
    rules = get_system("tale")
    points = Event("award_points", {"points": 20, "reason": "test"})
    raise_ride = {"type": "buy_advance", "skill": "Ride"}  # Ride: deft 3 + brawn 4, +1D now
    own = rules.decide(rules.evolve(tale_state(), points), raise_ride, ScriptedDice([]))[0].payload
    pool = rules.decide(rules.evolve(tale_state(skill_die_cost="pool"), points), raise_ride, ScriptedDice([]))[0].payload
    assert own["cost"] == 1  # +2D: ceil(2 / 2)
    assert pool["cost"] == 5  # 3 + 4 + 2 = 9 dice: ceil(9 / 2)


# --- WYRM: Fate per roll -----------------------------------------------------------------------

def test_wyrm_fate_per_roll_setting_allows_a_second_point_on_one_roll():
    rules = get_system("wyrm")
    state = rules.initial_state({"attributes": {"warrior": 1, "rogue": 3, "mage": 2}, "fate": 3})

    def spend_twice(state):
        state = rules.replay(state, rules.decide(state, {"type": "check", "attribute": "rogue", "dl": 12},
                                                 ScriptedDice([2])))
        for _ in range(2):
            state = rules.replay(state, rules.decide(state, {"type": "spend_fate", "use": "plus_two"}, ScriptedDice([])))
            state = rules.replay(state, rules.decide(state, {"type": "approve_fate"}, ScriptedDice([])))
        return state

    with pytest.raises(RuleError, match="one Fate point at most"):
        spend_twice(state)
    after = spend_twice(configured("wyrm", state, fate_per_roll=2))
    assert after["last_roll"]["total"] == 2 + 3 + 4 and after["fate"] == 1 and after["last_roll"]["fate_used"] == 2


# --- MdT: the consequences band ----------------------------------------------------------------

def test_mdt_consequences_band_setting():
    rules = get_system("mdt")
    state = rules.initial_state({"attributes": {k: 2 for k in ("intelligence", "wits", "resolve", "strength",
                                 "dexterity", "stamina", "presence", "manipulation", "composure")}})
    test = {"type": "test", "attribute": "wits", "difficulty": 3}
    faces = [7, 2, 3]  # one success of three needed
    plain = rules.decide(state, test, ScriptedDice(faces))[0].payload
    band = rules.decide(configured("mdt", state, consequences_band=True), test, ScriptedDice(faces))[0].payload
    assert (plain["outcome"], plain["success"]) == ("failure", False) and "consequences" not in plain
    assert (band["outcome"], band["success"], band["consequences"]) == ("consequences", True, True)
    odds = {k: Fraction(v["p"]) for k, v in band["odds"].items()}
    assert odds["success"] + odds["failure"] == 1
    assert odds["consequences"] == odds["success"] - Fraction(plain["odds"]["success"]["p"])
    assert odds["dramatic_failure"] < odds["failure"]


# --- the health track house rule ---------------------------------------------------------------

@pytest.mark.parametrize("system,sheet,boxes", [
    ("wyrm", {"attributes": {"warrior": 2, "rogue": 1, "mage": 0}}, 5 + 2),
    ("mdt", {"attributes": {k: 3 for k in ("intelligence", "wits", "resolve", "strength", "dexterity", "stamina",
                                           "presence", "manipulation", "composure")}}, 5 + 3),
])
def test_health_track_is_off_by_default_and_folds_harm_and_healing(system, sheet, boxes):
    rules = get_system(system)
    state = rules.initial_state(sheet)
    with pytest.raises(RuleError, match="without a health track"):
        rules.decide(state, {"type": "mark_harm", "amount": 1}, ScriptedDice([]))
    state = configured(system, state, health__enabled=True)
    hit = rules.decide(state, {"type": "mark_harm", "amount": 3, "reason": "an axe"}, ScriptedDice([]))
    assert hit[0].payload == {"amount": 3, "marked": 3, "boxes": boxes, "harm_after": 3, "taken_out": False,
                              "reason": "an axe"}
    state = rules.replay(state, hit)
    state = rules.replay(state, rules.decide(state, {"type": "mark_harm", "amount": 30}, ScriptedDice([])))
    assert state["harm"] == boxes
    with pytest.raises(RuleError, match="already marked"):
        rules.decide(state, {"type": "mark_harm", "amount": 1}, ScriptedDice([]))
    healed = rules.decide(state, {"type": "heal_harm", "amount": 2}, ScriptedDice([]))
    assert rules.replay(state, healed)["harm"] == boxes - 2
    assert {"mark_harm", "heal_harm"} <= rules.gm_actions


# --- the GM's adjustment of a sheet --------------------------------------------------------------

def test_an_adjustment_plans_each_change_with_its_old_value_and_refuses_nonsense():
    rules = get_system("wyrm")
    state = rules.initial_state({"attributes": {"warrior": 1, "rogue": 3, "mage": 2}, "fate": 1})
    planned = plan_adjustment(state, {"fate": 4, "attributes.warrior": 2, "sheet.attributes.warrior": 2})
    assert planned[0] == {"path": "fate", "from": 1, "to": 4}
    after = adjusted(state, planned)
    assert (after["fate"], after["attributes"]["warrior"]) == (4, 2) and state["fate"] == 1
    assert rules.evolve(state, Event("sheet_adjusted", {"changes": planned, "reason": "r"})) == after
    for bad, match in [({"hp": 3}, "not a value"), ({"fate": "4"}, "same kind"), ({"attributes": 1}, "inside it"),
                       ({"fate": True}, "same kind"), ({}, "1 to 20"), ({"fate": 1}, "nothing to adjust"),
                       ({"skills.9.name": "x"}, "not a value")]:
        with pytest.raises(RuleError, match=match):
            plan_adjustment(state, bad)
