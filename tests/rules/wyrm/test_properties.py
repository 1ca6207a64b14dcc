"""Hypothesis properties of the WYRM engine.

1. Exact odds agree with simulations through the real action functions.
2. Any sequence of actions and campaign events replays to a possible state.

That any JSON raises only RuleError/SheetError is the shared rules contract (tests/contract/test_rules.py).
"""

import json
import math
from collections import Counter
from fractions import Fraction

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from rules.base import Event, RuleError, SeededDice
from rules.wyrm.actions import check, damage
from rules.wyrm.sheet import MAX_FATE, MAX_POINTS, MAX_SKILLS
from tests.rules.folding import assert_folds_in_place

from .helpers import WYRM, make

TRIALS = 20_000


def close(hits: int, p: Fraction) -> bool:
    """``hits`` of ``TRIALS`` is within 5 standard errors (plus one trial) of ``p``."""
    p = float(p)
    return abs(hits / TRIALS - p) <= 5 * math.sqrt(p * (1 - p) / TRIALS) + 1 / TRIALS


def character(rogue: int, attribute_max: int = 10) -> dict:
    return make(attributes={"warrior": 0, "rogue": rogue, "mage": 0}, options={"attribute_max": attribute_max})


SKILLS = ([], ["Stealth"], ["Stealth", "Climbing"])


# --- 1. odds against simulation -------------------------------------------------------


@pytest.mark.slow  # simulates 20,000 rolls per example
@settings(max_examples=6, deadline=None, derandomize=True)
@given(
    rogue=st.integers(0, 10),
    skills=st.integers(0, 2),
    modifier=st.integers(-4, 4),
    difficulty=st.one_of(
        st.integers(0, 22).map(lambda dl: {"dl": dl}),
        st.tuples(st.integers(0, 10), st.integers(0, 2), st.booleans()).map(
            lambda v: {"vs": {"attribute": v[0], "skills": v[1], "static": v[2]}}
        ),
    ),
)
@example(rogue=3, skills=1, modifier=0, difficulty={"vs": {"attribute": 2, "skills": 1, "static": False}})
@example(rogue=0, skills=1, modifier=0, difficulty={"dl": 9})
def test_check_odds_match_simulation(rogue, skills, modifier, difficulty):
    state = character(rogue)
    action = {"type": "check", "attribute": "rogue", "skills": SKILLS[skills], "gm_allows_second_skill": True,
              "modifier": modifier, **difficulty}
    exact = WYRM.preview(state, action)
    dice = SeededDice(rogue * 1000 + skills * 100 + modifier)
    wins = sum(check(state, action, dice)[0].payload["success"] for _ in range(TRIALS))
    assert close(wins, exact["success"]), (wins / TRIALS, float(exact["success"]))


@pytest.mark.slow  # simulates 20,000 rolls per example
@settings(max_examples=3, deadline=None, derandomize=True)
@given(count=st.integers(1, 3), bonus=st.integers(0, 20))
@example(count=3, bonus=20)
@example(count=1, bonus=2)
def test_damage_odds_match_simulation(count, bonus):
    action = {"type": "damage", "dice": count, "bonus": bonus}
    exact = WYRM.odds(action)
    dice, state = SeededDice(count * 100 + bonus), make()
    seen = Counter(damage(state, action, dice)[0].payload["outcome"] for _ in range(TRIALS))
    assert set(seen) <= set(exact)
    for total, p in exact.items():
        assert close(seen[total], p), (total, seen[total] / TRIALS, float(p))


# --- 2. replays stay possible --------------------------------------------------------------

# Mostly valid values, with a few bad ones so refusals are exercised too.
ATTRS = st.sampled_from(["warrior", "rogue", "mage", "Rogue", "warrior", "rogue", "mage", "bard"])
SKILL_NAMES = st.sampled_from(["Stealth", "climbing", "Swords", "Lore", "Fire Magic", "Dancing", "Riding", "Herbs"])
FATE_USES = st.sampled_from(["reroll", "plus_two", "reroll", "plus_two", "ignore_attack", "minor_detail", "wish"])
SPEND = st.fixed_dictionaries({"type": st.just("spend_fate"), "use": FATE_USES, "die": st.integers(0, 3),
                               "detail": st.just("a friendly innkeeper")})
ANSWER = st.fixed_dictionaries({"type": st.sampled_from(["approve_fate", "approve_fate", "deny_fate"])})
ACTIONS = st.one_of(
    st.fixed_dictionaries({
        "type": st.just("check"), "attribute": ATTRS, "skills": st.lists(SKILL_NAMES, max_size=2),
        "gm_allows_second_skill": st.booleans(), "dl": st.integers(-1, 61), "modifier": st.integers(-21, 21),
    }),
    st.fixed_dictionaries({
        "type": st.just("check"), "attribute": ATTRS,
        "vs": st.fixed_dictionaries({"attribute": st.integers(0, 10), "skills": st.integers(0, 2), "static": st.booleans()}),
    }),
    st.fixed_dictionaries({"type": st.just("damage"), "dice": st.integers(0, 4), "bonus": st.integers(-1, 21)}),
    st.fixed_dictionaries({"type": st.just("automatic_success"), "attribute": ATTRS, "skill": SKILL_NAMES}),
    SPEND,
    st.tuples(SPEND, ANSWER),  # a request and the GM's answer, back to back
    st.tuples(
        st.fixed_dictionaries({"type": st.just("damage"), "dice": st.integers(1, 2)}) | st.just(
            {"type": "check", "attribute": "rogue", "skills": ["Stealth"], "dl": 9}),
        st.fixed_dictionaries({"type": st.just("spend_fate"), "use": st.sampled_from(["reroll", "plus_two"]), "die": st.just(1)}),
        st.just({"type": "approve_fate"}),
    ),
    ANSWER,
    st.fixed_dictionaries({"type": st.just("grant_fate"), "amount": st.integers(0, 11)}),
    st.fixed_dictionaries({"type": st.just("award_points"), "points": st.integers(0, 101)}),
    st.fixed_dictionaries({"type": st.just("buy_advance"), "advance": st.just("attribute"), "attribute": ATTRS}),
    st.fixed_dictionaries({"type": st.just("buy_advance"), "advance": st.just("skill"), "skill": SKILL_NAMES, "attribute": ATTRS}),
    st.sampled_from(["scene_started", "scene_ended", "session_started", "session_ended"]).map(lambda t: Event(t, {"scene": 1})),
)


def assert_possible(state: dict) -> None:
    top = state["sheet"]["options"]["attribute_max"]
    assert 0 <= state["fate"] <= MAX_FATE
    assert 0 <= state["points"]["spent"] <= state["points"]["earned"] <= MAX_POINTS
    assert all(0 <= v <= top for v in state["attributes"].values())
    assert set(state["attributes"]) == {"warrior", "rogue", "mage"}
    names = [s["name"].casefold() for s in state["skills"]]
    assert len(names) == len(set(names)) <= MAX_SKILLS
    assert state["rolls"] >= 0
    if state["pending_fate"] is not None:
        assert state["fate"] >= 1
    last = state["last_roll"]
    if last is not None:
        assert last["roll"] == state["rolls"] and last["total"] >= 1
    assert json.loads(json.dumps(state)) == state


@settings(suppress_health_check=[HealthCheck.too_slow])
@given(steps=st.lists(ACTIONS, max_size=40), fate=st.integers(0, 3), seed=st.integers(0, 2**16))
def test_replays_never_reach_an_impossible_state(steps, fate, seed):
    state, dice = make(fate=fate), SeededDice(seed)
    start, played = state, []
    flat = [s for step in steps for s in (step if isinstance(step, tuple) else [step])]
    for step in flat:
        if isinstance(step, Event):
            events = [step]
        else:
            try:
                events = WYRM.decide(state, step, dice)
            except RuleError:
                continue
        for event in events:
            state = WYRM.evolve(state, event)
            json.dumps(dict(event.payload))
        played.extend(events)
        assert_possible(state)
    assert_folds_in_place(WYRM, start, played)
