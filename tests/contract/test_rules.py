"""One rules contract, every rule system, without Django or a database.

Whatever JSON a client sends, the rules answer with a decision or a ``RuleError`` (which the
server turns into a 400 or 422), never with another exception (a 500 at the table):

* ``decide``, ``odds`` and ``preview`` of any action, valid or near it or hostile (huge numbers,
  NUL and control text, nested lists, the system's own words in the wrong fields), from every
  state the system's evening passes through (contests, combats, pending Fate, projects running);
* anything but a JSON object is refused by name;
* ``validate_sheet`` of any sheet (hostile as a whole, or the example sheet with one field or one
  nested field replaced) raises only ``SheetError``, which names the field.

Each system used to have its own copy of these properties (tests/rules/<system>/test_properties.py);
what is left there is what only that system knows (its invariants, its odds against simulation).
"""

from __future__ import annotations

from functools import lru_cache

import pytest
from hypothesis import example, given, strategies as st

from rules import get_system
from rules.base import RuleError, SeededDice, ScriptedDice, SheetError
from tests.hardening.conftest import SYSTEMS, field_values, fuzz_settings, hostile_actions, json_values

from .evenings import EVENINGS, FACES

HERO = 1


@lru_cache(maxsize=None)
def evening_states(system: str) -> tuple[dict, ...]:
    """The example character's state before and after each of the evening's rules actions."""
    rules = get_system(system)
    state = rules.initial_state(rules.validate_sheet(dict(rules.example_sheet)))
    states = [state]
    for _, action in EVENINGS[system]:
        if action["type"] in rules.actions:
            state = rules.replay(state, rules.decide(state, {**action, "character": HERO}, ScriptedDice(FACES)))
            states.append(state)
    return tuple(states)


def only_rule_errors(call, *args) -> None:
    try:
        call(*args)
    except RuleError:
        pass


def deep(depth: int):
    value = 1
    for _ in range(depth):
        value = [value]
    return value


@pytest.mark.parametrize("system", SYSTEMS)
def test_the_evening_reaches_states_worth_fuzzing(system):
    assert len(set(map(repr, evening_states(system)))) >= 4, "the evening should change the character"


@pytest.mark.parametrize("system", SYSTEMS)
def test_decide_odds_and_preview_only_raise_rule_errors(system):
    rules = get_system(system)
    states = evening_states(system)
    characters = st.one_of(st.just(HERO), json_values)

    @fuzz_settings(300)
    @example(action={"type": [], "character": HERO}, which=0, seed=0)  # found by this suite: TOTE's preview crashed
    @example(action={"type": "roll", "character": deep(900)}, which=0, seed=0)
    @given(action=hostile_actions(system, characters), which=st.integers(0, len(states) - 1),
           seed=st.integers(0, 2**32))
    def run(action, which, seed):
        state = states[which]
        only_rule_errors(rules.decide, state, action, SeededDice(seed))
        only_rule_errors(rules.preview, state, action)
        only_rule_errors(rules.odds, action)

    run()


@pytest.mark.parametrize("system", SYSTEMS)
def test_anything_but_an_object_is_refused_as_an_action(system):
    rules = get_system(system)
    state = evening_states(system)[-1]

    @fuzz_settings(50)
    @example(value=None)
    @example(value=[{"type": "roll"}])
    @example(value="roll")
    @given(value=json_values.filter(lambda value: not isinstance(value, dict)))
    def run(value):
        for call in (lambda: rules.decide(state, value, SeededDice(0)), lambda: rules.odds(value),
                     lambda: rules.preview(state, value)):
            with pytest.raises(RuleError, match="must be a JSON object"):
                call()

    run()


def nested_fields(sheet: dict) -> list[tuple[str, str]]:
    """(field, inner key) for every key inside the example sheet's objects: where near-valid sheets break."""
    return [(name, key) for name, value in sorted(sheet.items()) if isinstance(value, dict) for key in sorted(value)]


@pytest.mark.parametrize("system", SYSTEMS)
def test_validate_sheet_only_raises_sheet_errors(system):
    rules = get_system(system)
    sheet = dict(rules.example_sheet)
    inner = nested_fields(sheet) or [(None, None)]

    def only_sheet_errors(candidate):
        try:
            rules.validate_sheet(candidate)
        except SheetError:
            pass

    @fuzz_settings(200)
    @given(key=st.sampled_from(sorted(sheet) + ["name", "options"]), value=field_values(system) | st.just(deep(50)),
           nested=st.sampled_from(inner), inner_value=field_values(system), whole=json_values)
    def run(key, value, nested, inner_value, whole):
        only_sheet_errors({**sheet, key: value})
        name, inner_key = nested
        if name is not None:
            only_sheet_errors({**sheet, name: {**sheet[name], inner_key: inner_value}})
        only_sheet_errors(whole)

    run()
