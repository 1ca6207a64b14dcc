"""Hostile input for the four rules engines themselves, without Django or a database.

The same hostile values the HTTP and socket suites send (huge numbers, NUL and
control text, nested lists and objects, the systems' own words in the wrong
places), straight into ``decide``, ``odds``, ``preview`` and ``validate_sheet``
of every system: the only exception allowed out is ``RuleError`` (which the
server turns into a 400 or 422). Anything else would be a 500 at the table.
"""

from __future__ import annotations

import pytest
from hypothesis import example, given, strategies as st

from rules import get_system
from rules.base import RuleError, SeededDice

from .conftest import SYSTEMS, field_values, fuzz_settings, hostile_actions, json_values


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
def test_decide_odds_and_preview_only_raise_rule_errors(system):
    rules = get_system(system)
    state = rules.initial_state(rules.validate_sheet(dict(rules.example_sheet)))
    characters = st.one_of(st.just(1), json_values)

    @fuzz_settings(300)
    @example(action={"type": [], "character": 1}, seed=0)  # found by this suite: TOTE's preview crashed
    @example(action={"type": "roll", "character": deep(900)}, seed=0)
    @given(action=hostile_actions(system, characters), seed=st.integers(0, 2**32))
    def run(action, seed):
        only_rule_errors(rules.decide, state, action, SeededDice(seed))
        only_rule_errors(rules.preview, state, action)
        only_rule_errors(rules.odds, action)

    run()


@pytest.mark.parametrize("system", SYSTEMS)
def test_validate_sheet_only_raises_rule_errors(system):
    rules = get_system(system)
    example = dict(rules.example_sheet)

    @fuzz_settings(200)
    @given(key=st.sampled_from(sorted(example) + ["name", "options"]), value=field_values(system) | st.just(deep(50)),
           whole=json_values)
    def run(key, value, whole):
        only_rule_errors(rules.validate_sheet, {**example, key: value})
        only_rule_errors(rules.validate_sheet, whole)

    run()
