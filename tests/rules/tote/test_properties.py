"""Hypothesis properties of the TOTE engine: odds agree with simulation, replays stay possible.

That any JSON raises only RuleError/SheetError is the shared rules contract (tests/contract/test_rules.py)."""

import copy
import json
import math

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from rules import get_system
from rules.base import Event, RuleError, SeededDice
from rules.tote.sheet import TOTEMS, validate_sheet
from tests.rules.folding import assert_folds_in_place

from .test_actions import ONES

SYSTEM = get_system("tote")
SKILLS = list(ONES)
TRIALS = 20_000


def hero(rating=1, spec=0, injuries=0, gm_penalty=False, options=None):
    sheet = {"skills": {**ONES, "Hunt": rating}, "aspect": "Keen", "totems": {"Bear": 3}}
    if spec:
        sheet["specializations"] = {"Hunt": [{"name": "Tracking", "bonus": spec}]}
    if options:
        sheet["options"] = options
    state = SYSTEM.initial_state(sheet)
    if injuries:
        state = SYSTEM.replay(state, SYSTEM.decide(state, {"type": "mark_injury", "count": injuries}, SeededDice()))
    if gm_penalty:
        state = SYSTEM.replay(state, SYSTEM.decide(state, {"type": "gm_invoke_aspect"}, SeededDice()))
    return state


def close_enough(hits, p, trials=TRIALS):
    """Within 4.5 standard errors; exact when the odds are 0 or 1."""
    freq = hits / trials
    if p in (0, 1):
        return freq == p
    return abs(freq - float(p)) <= 4.5 * math.sqrt(float(p) * (1 - float(p)) / trials)


# --- (1) exact odds agree with the real actions -------------------------------------------


@pytest.mark.slow  # simulates 20,000 rolls per example
@settings(max_examples=6, deadline=None, derandomize=True)
@example(rating=3, spec=2, modifier=0, target=10, injuries=1, gm_penalty=False)  # the CLI's raw form
@example(rating=5, spec=1, modifier=-1, target=9, injuries=5, gm_penalty=True)
@given(rating=st.integers(0, 5), spec=st.integers(0, 5), modifier=st.integers(-10, 10),
       target=st.integers(1, 30), injuries=st.integers(0, 5), gm_penalty=st.booleans())
def test_skill_test_odds_match_simulation(rating, spec, modifier, target, injuries, gm_penalty):
    state = hero(rating, spec, injuries, gm_penalty)
    action = {"type": "skill_test", "skill": "Hunt", "target": target, "modifier": modifier}
    if spec:
        action["specialization"] = "Tracking"
    odds = SYSTEM.preview(state, action)
    dice = SeededDice(rating * 1000 + target)
    successes = criticals = 0
    for _ in range(TRIALS):
        p = SYSTEM.actions["skill_test"](state, action, dice)[0].payload
        successes += p["success"]
        criticals += p["critical"]
    assert close_enough(successes, odds["success"])
    assert close_enough(criticals, odds["critical"])


@pytest.mark.slow  # simulates 20,000 rolls per example
@settings(max_examples=4, deadline=None, derandomize=True)
@given(n=st.integers(1, 5), target=st.integers(1, 30), mode=st.sampled_from(["sum", "count"]),
       threshold=st.integers(2, 6))
def test_effect_test_odds_match_simulation(n, target, mode, threshold):
    state = hero(options={"effect_test": {"mode": mode, "threshold": threshold}})
    action = {"type": "effect_test", "dice": n, "target": target}
    odds = SYSTEM.preview(state, action)
    dice = SeededDice(n * 100 + target)
    hits = sum(SYSTEM.actions["effect_test"](state, action, dice)[0].payload["success"] for _ in range(TRIALS // 2))
    assert close_enough(hits, odds["success"], TRIALS // 2)


# --- (2) replaying any valid sequence keeps the state possible --------------------------------

small = st.integers(1, 3) | st.integers(-1, 12)  # mostly valid, sometimes out of range
BUILDERS = {
    "skill_test": st.fixed_dictionaries({
        "type": st.just("skill_test"), "skill": st.sampled_from(SKILLS + ["Hunt"] * 8 + ["Fly"]),
        "target": st.integers(5, 12) | st.integers(0, 31), "modifier": st.just(0) | st.integers(-11, 11),
        "bubble": st.sampled_from(["auto", "row", "column", "none"]),
        "specialization": st.sampled_from([None, None, None, "Tracking", "Nope"])}),
    "spend_resolve": st.fixed_dictionaries({"type": st.just("spend_resolve"), "totem": st.sampled_from(TOTEMS)}),
    "invoke_aspect": st.just({"type": "invoke_aspect"}),
    "gm_invoke_aspect": st.just({"type": "gm_invoke_aspect"}),
    "grant_resolve": st.fixed_dictionaries({"type": st.just("grant_resolve"), "amount": small}),
    "mark_injury": st.fixed_dictionaries({"type": st.just("mark_injury"), "count": small}),
    "heal_injury": st.fixed_dictionaries({"type": st.just("heal_injury"), "count": small}),
    "effect_test": st.fixed_dictionaries({"type": st.just("effect_test"), "dice": small,
                                          "target": st.none() | small}),
    "award_points": st.fixed_dictionaries({"type": st.just("award_points"), "points": st.integers(-1, 101)}),
    "end_tale": st.just({"type": "end_tale"}),
    "buy_advance": st.fixed_dictionaries({
        "type": st.just("buy_advance"), "advance": st.sampled_from(["skill", "totem", "specialization"]),
        "skill": st.sampled_from(SKILLS), "totem": st.sampled_from(TOTEMS),
        "specialization": st.sampled_from(["Tracking", "Stalking", "Snares", "Lore"])}),
    "campaign": st.builds(lambda kind, n: {"campaign": kind, "n": n},
                          st.sampled_from(["scene_started", "scene_ended", "session_started", "session_ended"]),
                          st.integers(1, 50)),
}
# Skill tests and Resolve come up most, so bubbles fill and failed tests get rescued.
WEIGHTS = {"skill_test": 6, "spend_resolve": 3, "buy_advance": 2, "campaign": 2}
ACTION = st.sampled_from([k for k in BUILDERS for _ in range(WEIGHTS.get(k, 1))]).flatmap(BUILDERS.get)


def check_possible(state):
    sheet = state["sheet"]
    options = sheet["options"]
    assert validate_sheet(sheet, creation=False) == sheet  # ratings, totems, specializations in range
    assert 0 <= state["points"]["spent"] <= state["points"]["earned"]
    assert 0 <= state["resolve"] <= options["resolve_max"]
    assert state["scene_resolve"] in (0, 1)
    assert state["gm_penalty"] in (0, -2)
    assert 0 <= state["injuries"] <= len(options["injury_track"])
    assert state["taken_out"] == (state["injuries"] == len(options["injury_track"]))
    assert len(state["bubbles"]["rows"]) == len(state["bubbles"]["columns"]) == 4
    json.dumps(state)


@settings(suppress_health_check=[HealthCheck.too_slow])
@given(actions=st.lists(ACTION, min_size=5, max_size=60), seed=st.integers(0, 2**32))
def test_replay_never_reaches_an_impossible_state(actions, seed):
    state = start = hero(rating=2, spec=1)
    played = []
    dice = SeededDice(seed)
    xp_from_tales = 0
    awarded = 0
    for action in actions:
        if "campaign" in action:
            events = [Event(action["campaign"], {action["campaign"].split("_")[0]: action["n"]})]
        else:
            try:
                events = SYSTEM.decide(state, action, dice)
            except RuleError:
                continue
        for event in events:
            json.dumps(event.payload)
            before = copy.deepcopy(state)
            new = SYSTEM.evolve(state, event)
            assert state == before  # evolve never mutates
            if event.type == "tale_ended":
                assert event.payload["xp"] <= 8  # one bubble per row and per column
                xp_from_tales += event.payload["xp"]
            if event.type == "points_awarded":
                awarded += event.payload["points"]
            state = new
            played.append(event)
        check_possible(state)
    assert state["points"]["earned"] == xp_from_tales + awarded
    assert_folds_in_place(SYSTEM, start, played)
