"""Hypothesis properties of the Tale RPG engine: odds agree with simulation, any sequence leaves a possible state.

That any JSON raises only RuleError/SheetError is the shared rules contract (tests/contract/test_rules.py)."""

import json
import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rules.base import Event, RuleError, SeededDice
from rules.tale.odds import available
from rules.tale.sheet import CHARACTERISTICS, current, damage_room, damage_targets
from tests.rules.folding import assert_folds_in_place

from .helpers import SYSTEM, act, sheet, state

TRIALS = 20_000


def _close(counts: dict, odds: dict, trials: int) -> None:
    """Every outcome's frequency within 5 standard errors of its exact probability."""
    for outcome, p in odds.items():
        p = float(p)
        error = math.sqrt(max(p * (1 - p), 1 / trials) / trials)
        assert abs(counts.get(outcome, 0) / trials - p) <= 5 * error, (outcome, counts, p)


# --- (1) exact odds agree with the real actions, rolled many times -----------------------------------

@pytest.mark.slow  # simulates 20,000 rolls per example
@settings(max_examples=4, deadline=None, derandomize=True)
@given(deft=st.integers(1, 6), skill=st.integers(1, 6), vs=st.integers(1, 12), by_target=st.booleans())
def test_straight_roll_odds_match_simulation(deft, skill, vs, by_target):
    character = state(deft=deft, skill=skill)
    action = {"type": "straight_roll", "skill": "Jump"}
    action.update({"target": round(3.5 * vs)} if by_target else {"vs_pool": vs})
    odds = SYSTEM.preview(character, action)
    assert odds == SYSTEM.odds({**action, "pool": deft + skill})
    dice, counts = SeededDice(deft * 1000 + skill * 100 + vs), {}
    for _ in range(TRIALS):
        outcome = SYSTEM.decide(character, action, dice)[0].payload["outcome"]
        counts[outcome] = counts.get(outcome, 0) + 1
    _close(counts, odds, TRIALS)


@pytest.mark.slow  # simulates 20,000 rolls per example
@settings(max_examples=3, deadline=None, derandomize=True)
@given(mine=st.integers(1, 8), theirs=st.integers(1, 8))
def test_iterated_round_odds_match_simulation(mine, theirs):
    _, character = act(state(clever=4, deft=4), {"type": "start_contest", "skill": "Hide", "vs_pool": theirs})
    character["contest"]["mine"] = mine  # as if worn down to this many dice
    odds = SYSTEM.preview(character, {"type": "iterated_round"})
    dice, counts = SeededDice(mine * 100 + theirs), {}
    for _ in range(TRIALS):
        outcome = SYSTEM.decide(character, {"type": "iterated_round"}, dice)[0].payload["outcome"]
        counts[outcome] = counts.get(outcome, 0) + 1
    _close(counts, odds, TRIALS)


@pytest.mark.slow  # simulates 20,000 rolls per example
@settings(max_examples=3, deadline=None, derandomize=True)
@given(attack=st.integers(1, 4), defence=st.integers(0, 3), their_attack=st.integers(1, 4), their_defence=st.integers(0, 3))
def test_combat_round_odds_match_simulation(attack, defence, their_attack, their_defence):
    _, character = act(state(brawn=4, skill=4), {"type": "start_combat", "their_pool": 8})
    action = {"type": "combat_round", "attack": attack, "defence": defence,
              "their_attack": their_attack, "their_defence": their_defence}
    odds = SYSTEM.preview(character, action)
    dice, counts = SeededDice(attack * 1000 + defence * 100 + their_attack * 10 + their_defence), {}
    for _ in range(TRIALS // 2):
        exchanges = SYSTEM.decide(character, action, dice)[0].payload["exchanges"]
        for who, side in (("my", "mine"), ("their", "theirs")):
            key = f"{who}_{exchanges[side]['outcome']}"
            counts[key] = counts.get(key, 0) + 1
    _close(counts, odds, TRIALS // 2)


# --- (2) any sequence of actions leaves a possible state ---------------------------------------------

small = st.integers(0, 12)
share = st.fractions(0, 1, max_denominator=4)
# "The next round" of whatever contest runs; combat portions as shares of each side's dice.
ROUND = st.builds(lambda a, d, x, y: {"type": "round", "shares": [a, d, x, y]}, share, share, share, share)
START = st.one_of(
    st.builds(lambda c, s, r, t: {"type": "hide", "challenge": c, "seeker_pool": s, "rounds": r, "ties": t},
              st.integers(1, 6), st.integers(1, 10), st.integers(1, 4), st.sampled_from(["stop", "eliminate"])),
    st.builds(lambda v, r, w, t: {"type": "start_contest", "vs_pool": v, "rounds": r, "at_time_out": w, "ties": t},
              st.integers(1, 10), st.integers(1, 5), st.sampled_from(["mine", "theirs", "none"]),
              st.sampled_from(["stop", "eliminate"])),
    st.builds(lambda p, s, t: {"type": "start_combat", "their_pool": p, "with_secondary": s, "ties": t},
              st.integers(1, 10), st.booleans(), st.sampled_from(["stop", "eliminate"])),
)
ACTION = st.one_of(
    st.builds(lambda t: {"type": "straight_roll", "target": t}, st.integers(1, 40)),
    st.builds(lambda v, s: {"type": "straight_roll", "vs_pool": v, "skill": s}, st.integers(1, 8),
              st.sampled_from(["Hide", "Jump", "Ride", "Spot Hidden"])),
    START,
    ROUND,
    st.builds(lambda a, d, x, y: {"type": "combat_round", "attack": a, "defence": d, "their_attack": x,
                                  "their_defence": y}, small, small, small, small),
    st.builds(lambda s, d, r: {"type": "impose_penalty", "side": s, "dice": d, "rounds": r},
              st.sampled_from(["mine", "theirs"]), st.integers(1, 3), st.integers(1, 2)),
    st.builds(lambda w: {"type": "end_contest", "winner": w}, st.sampled_from(["mine", "theirs", "none"])),
    st.builds(lambda d: {"type": "take_damage", "dice": d}, st.integers(1, 8)),
    st.builds(lambda a, b: {"type": "assign_damage", "damage": {"brawn": a, "skill": b}}, small, small),
    st.builds(lambda k: {"type": "assign_damage", "first": k}, small),  # a valid spread, see _resolve
    st.builds(lambda d: {"type": "rest", "days": d}, st.integers(1, 3)),
    st.builds(lambda p: {"type": "award_points", "points": p, "reason": "play"}, st.integers(1, 20)),
    st.builds(lambda c: {"type": "buy_advance", "characteristic": c}, st.sampled_from(CHARACTERISTICS)),
    st.builds(lambda s: {"type": "buy_advance", "skill": s, "characteristics": ["deft", "brawn"]},
              st.sampled_from(["Hide", "Ride", "Jump"])),
    st.builds(lambda n: {"type": "scene_ended", "scene": n}, st.integers(1, 9)),  # a platform event
)

# Contests come with a burst of rounds, so they get played out rather than abandoned.
BURST = st.tuples(START, st.lists(ROUND, min_size=1, max_size=8)).map(lambda b: [b[0], *b[1]])
RECOVER = st.builds(lambda k, d: [{"type": "end_contest"}, {"type": "assign_damage", "first": k},
                                  {"type": "rest", "days": d}], small, st.integers(1, 3))
SEQUENCE = st.lists(st.one_of(ACTION.map(lambda a: [a]), BURST, BURST, RECOVER),
                    min_size=4, max_size=16).map(lambda chunks: [a for chunk in chunks for a in chunk])


def _resolve(action: dict, s: dict) -> dict:
    """Turn the strategy's placeholders into concrete (mostly valid) fields for this state."""
    if action["type"] == "round":
        if not s["contest"] or s["contest"]["kind"] != "combat":
            return {"type": "iterated_round"}
        (mine, theirs), _ = available(s["contest"], s)
        a, d, x, y = action["shares"]
        attack, their_attack = int(a * mine), int(x * theirs)
        return {"type": "combat_round", "attack": attack, "defence": int(d * (mine - attack)),
                "their_attack": their_attack, "their_defence": int(y * (theirs - their_attack))}
    if "first" in action:
        owed, targets = s["unassigned_damage"], damage_targets(s)
        first = min(action["first"], owed, current(s, targets[0]))
        spread = {targets[0]: first}
        if owed > first and len(targets) > 1:
            spread[targets[1]] = owed - first
        return {"type": "assign_damage", "damage": spread}
    return action


def _check_possible(s: dict) -> None:
    json.dumps(s)
    assert SYSTEM.validate_sheet(s["sheet"]) == s["sheet"]
    points = s["points"]
    assert 0 <= points["spent"] <= points["earned"]
    for name in CHARACTERISTICS:
        assert 0 <= s["damage"][name] <= s["sheet"]["characteristics"][name]
    assert all(n == 0 for c, n in s["damage"].items() if c not in damage_targets(s))
    assert 0 <= s["unassigned_damage"] <= sum(current(s, c) for c in damage_targets(s))
    assert damage_room(s) >= 0
    contest = s["contest"]
    if contest:
        assert 1 <= contest["mine"] <= contest["start_mine"] and 1 <= contest["theirs"] <= contest["start_theirs"]
        assert contest["rounds_left"] is None or contest["rounds_left"] >= 1
        assert contest["damage_taken"] == contest["start_mine"] - contest["mine"] or contest["kind"] != "combat"
        for penalty in contest["penalties"]:
            assert penalty["dice"] >= 1 and 1 <= penalty["rounds"] <= 2


@settings(suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32), actions=SEQUENCE, brawn=st.integers(1, 10),
       skill=st.integers(1, 10), primary=st.sampled_from(CHARACTERISTICS))
def test_any_sequence_leaves_a_possible_state(seed, actions, brawn, skill, primary):
    secondary = "wisecrack" if primary != "wisecrack" else "clever"
    s = start = SYSTEM.initial_state(sheet(brawn=brawn, skill=skill, primary=primary, secondary=secondary))
    played = []
    dice = SeededDice(seed)
    for action in actions:
        if action["type"] == "scene_ended":
            events = [Event("scene_ended", {"scene": action["scene"]})]
        else:
            try:
                events = SYSTEM.decide(s, _resolve(action, s), dice)
            except RuleError:
                continue
        for event in events:
            json.dumps(dict(event.payload))
            s = SYSTEM.evolve(s, event)
        played.extend(events)
        _check_possible(s)
    assert_folds_in_place(SYSTEM, start, played)
