"""Mundo das Trevas Lite: hypothesis properties.

1. Exact odds agree with a simulation through the real action functions.
2. Replaying any sequence of actions and platform events never yields an impossible state.

That any JSON raises only RuleError/SheetError is the shared rules contract (tests/contract/test_rules.py).
"""

import json
import math
from collections import Counter

import pytest
from hypothesis import Phase, given, settings
from hypothesis import strategies as st

from rules import Event, RuleError, SeededDice, get_system
from rules.mdt.actions import MAX_EARNED, MAX_PROJECTS
from rules.mdt.sheet import ATTRIBUTES, MAX_SPECIALIZATIONS
from tests.rules.folding import assert_folds_in_place

MDT = get_system("mdt")
TRIALS = 20_000


def character(rating=2, spec=0, options=None):
    sheet = {"attributes": {key: rating for key in ATTRIBUTES},
             "specializations": {"Foco": spec} if spec else {}, "options": options or {}}
    return MDT.initial_state(sheet)


def assert_close(counts: Counter, odds: dict, trials: int = TRIALS):
    """Each simulated frequency within 5 standard errors of the exact probability."""
    for outcome, p in odds.items():
        freq = counts[outcome] / trials
        if p in (0, 1):
            assert freq == p, (outcome, freq, p)
            continue
        sigma = math.sqrt(p * (1 - p) / trials)
        assert abs(freq - float(p)) <= 5 * sigma, (outcome, freq, float(p), sigma)


def simulate(state, action, flags, seed, count_outcomes=True):
    """Run the real action TRIALS times; count each outcome (optionally) and each true flag."""
    dice, counts = SeededDice(seed), Counter()
    for _ in range(TRIALS):
        [event] = MDT.decide(state, action, dice)
        if count_outcomes:
            counts[event.payload["outcome"]] += 1
        counts.update(flag for flag in flags if event.payload[flag])
    return counts


# Simulations are slow: no shrinking (a failure prints its inputs anyway).
SIMULATION = settings(deadline=None, derandomize=True, phases=[Phase.explicit, Phase.generate])


# ---------------------------------------------------------------- 1. odds vs simulation

@pytest.mark.slow  # simulates 20,000 rolls per example
@settings(SIMULATION, max_examples=5)
@given(rating=st.integers(0, 5), spec=st.integers(0, 3), modifier=st.integers(-8, 6),
       difficulty=st.integers(1, 3), luck_ten=st.integers(1, 2))
def test_test_odds_match_simulation(rating, spec, modifier, difficulty, luck_ten):
    state = character(rating, spec, {"luck_ten_successes": luck_ten})
    action = {"type": "test", "attribute": "wits", "specialization": "Foco" if spec else None,
              "modifier": modifier, "difficulty": difficulty}
    odds = MDT.preview(state, action)
    # The test's odds table is success/failure plus two special cases: count the payload's flags.
    counts = simulate(state, action, ["success", "exceptional", "dramatic_failure"], seed=rating * 1000 + modifier,
                      count_outcomes=False)
    counts["failure"] = TRIALS - counts["success"]
    assert_close(counts, odds)


@pytest.mark.slow  # simulates 20,000 rolls per example
@settings(SIMULATION, max_examples=3)
@given(rating=st.integers(0, 5), vs_pool=st.integers(-1, 8), ties=st.sampled_from(["none", "character", "opponent"]))
def test_opposed_odds_match_simulation(rating, vs_pool, ties):
    state = character(rating)
    action = {"type": "opposed_test", "attribute": "strength", "vs_pool": vs_pool, "tie_goes_to": ties}
    counts = simulate(state, action, ["dramatic_failure"], seed=vs_pool)
    assert_close(counts, MDT.preview(state, action))


@pytest.mark.slow  # simulates 20,000 rolls per example
@settings(SIMULATION, max_examples=3)
@given(rating=st.integers(0, 4), vs_pool=st.integers(0, 6), target=st.integers(1, 6),
       mine=st.integers(0, 5), theirs=st.integers(0, 5))
def test_contest_round_odds_match_simulation(rating, vs_pool, target, mine, theirs):
    state = character(rating)
    state["contest"] = {"label": "", "attribute": "wits", "specialization": None, "modifier": 0,
                        "vs_pool": vs_pool, "target": target, "mine": min(mine, target - 1),
                        "theirs": min(theirs, target - 1), "round": 1}
    action = {"type": "contest_round"}
    counts = simulate(state, action, ["dramatic_failure"], seed=target)
    assert_close(counts, MDT.preview(state, action))


@pytest.mark.slow  # simulates 20,000 rolls per example
@settings(SIMULATION, max_examples=3)
@given(rating=st.integers(0, 5), target=st.integers(1, 12), progress=st.integers(0, 11), modifier=st.integers(-4, 3))
def test_project_roll_odds_match_simulation(rating, target, progress, modifier):
    state = character(rating)
    state["projects"]["Tomo"] = {"name": "Tomo", "target": target, "attribute": "intelligence",
                                 "specialization": None, "modifier": modifier, "interval": "dia",
                                 "reset_on_dramatic_failure": False, "progress": min(progress, target - 1),
                                 "rolls": 0}
    action = {"type": "project_roll", "project": "Tomo"}
    counts = simulate(state, action, ["dramatic_failure"], seed=target)
    assert_close(counts, MDT.preview(state, action))


# ---------------------------------------------------------------- 2. replay never yields an impossible state

# Mostly valid values (so long games get played), with a few invalid ones mixed in.
names = st.sampled_from(["Foco", "foco", "Carro", "Tomo", "Nova", "Carro", "Tomo", "", "x" * 41])
attributes = st.sampled_from([*ATTRIBUTES, "wits", "wits", "luck"])
small = st.integers(-6, 6) | st.integers(-12, 12)
pools = st.integers(-2, 8) | st.integers(-31, 31)
targets = st.integers(1, 6) | st.integers(-1, 101)

actions = st.one_of(
    st.fixed_dictionaries({"type": st.just("test"), "attribute": attributes},
                          optional={"specialization": names, "modifier": small, "difficulty": st.integers(0, 4)}),
    st.fixed_dictionaries({"type": st.just("opposed_test"), "attribute": attributes, "vs_pool": pools}),
    st.fixed_dictionaries({"type": st.just("start_contest"), "attribute": attributes, "vs_pool": pools,
                           "target": targets}, optional={"modifier": small}),
    st.fixed_dictionaries({"type": st.just("contest_round")}, optional={"modifier": small, "vs_modifier": small}),
    st.fixed_dictionaries({"type": st.just("contest_round")}),
    st.fixed_dictionaries({"type": st.just("end_contest")}),
    st.fixed_dictionaries({"type": st.just("start_project"), "name": names, "attribute": attributes,
                           "target": targets},
                          optional={"reset_on_dramatic_failure": st.booleans(), "specialization": names}),
    st.fixed_dictionaries({"type": st.just("project_roll"), "project": names}, optional={"modifier": small}),
    st.fixed_dictionaries({"type": st.just("project_roll"), "project": st.sampled_from(["Carro", "Tomo"])}),
    st.fixed_dictionaries({"type": st.just("abandon_project"), "project": names}),
    st.fixed_dictionaries({"type": st.just("say_yes")}),
    st.fixed_dictionaries({"type": st.just("award_points"), "points": st.integers(-1, 101)}),
    st.fixed_dictionaries({"type": st.just("buy_advance"), "attribute": attributes}),
    st.fixed_dictionaries({"type": st.just("buy_advance"), "specialization": names}),
    st.builds(lambda kind, n: Event(kind, {"scene" if "scene" in kind else "session": n}),
              st.sampled_from(["scene_started", "scene_ended", "session_started", "session_ended"]),
              st.integers(1, 9)),
)


def assert_possible(state):
    points = state["points"]
    assert 0 <= points["spent"] <= points["earned"] <= MAX_EARNED
    assert MDT.validate_sheet(state["sheet"]) == state["sheet"]  # ratings in range, <= 20 specializations
    assert len(state["sheet"]["specializations"]) <= MAX_SPECIALIZATIONS
    contest = state["contest"]
    if contest is not None:
        assert 0 <= contest["mine"] and 0 <= contest["theirs"] and contest["round"] >= 0
        # A finished race never lingers in the state.
        assert max(contest["mine"], contest["theirs"]) < contest["target"] or contest["mine"] == contest["theirs"]
    assert len(state["projects"]) <= MAX_PROJECTS
    for project in state["projects"].values():
        assert 0 <= project["progress"] < project["target"] and project["rolls"] >= 0
    json.dumps(state)


@given(steps=st.lists(actions, min_size=5, max_size=60), seed=st.integers(0, 2**32))
def test_replay_never_yields_an_impossible_state(steps, seed):
    state = start = character(2, 1)
    played = []
    dice = SeededDice(seed)
    for step in steps:
        if isinstance(step, Event):
            events = [step]
        else:
            try:
                events = MDT.decide(state, step, dice)
            except RuleError:
                continue
            for event in events:
                json.dumps(event.payload)
        state = MDT.replay(state, events)
        played.extend(events)
        assert_possible(state)
    assert_folds_in_place(MDT, start, played)
