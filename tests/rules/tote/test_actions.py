"""TOTE actions, refusals, sheet validation and evolve, one behaviour per test."""

import copy

import pytest

from rules import get_system
from rules.base import Event, RuleError, ScriptedDice, SheetError
from rules.tote.sheet import DEFAULT_GRID, validate_sheet

SYSTEM = get_system("tote")
NO_DICE = ScriptedDice([])

ONES = {name: 1 for row in DEFAULT_GRID["skills"] for name in row}


def new_state(aspect="Stubborn as stone", **extra):
    """A freshly created hero: every skill 1 (rows and columns sum to 4)."""
    return SYSTEM.initial_state(SYSTEM.validate_sheet({"skills": dict(ONES), "aspect": aspect, **extra}))


def apply(state, action, faces=()):
    dice = ScriptedDice(list(faces))
    events = SYSTEM.decide(state, action, dice)
    assert dice.remaining == []
    return SYSTEM.replay(state, events), events


def refused(state, action, match):
    before = copy.deepcopy(state)
    with pytest.raises(RuleError, match=match):
        SYSTEM.decide(state, action, ScriptedDice([]))  # refusals roll no dice
    assert state == before


def failed_test(state, target=12):
    return apply(state, {"type": "skill_test", "skill": "Hunt", "target": target}, [2, 2])[0]


# --- the system -----------------------------------------------------------------


def test_system_shape():
    assert SYSTEM.name == "tote" and SYSTEM.title == "Tales from the Torn Earth"
    assert SYSTEM.gm_actions == {"gm_invoke_aspect", "grant_resolve", "mark_injury", "heal_injury",
                                 "award_points", "end_tale", "apply_condition", "remove_condition"}
    assert SYSTEM.gm_actions <= set(SYSTEM.actions)


def test_initial_state():
    state = new_state()
    assert state["points"] == {"earned": 0, "spent": 0}
    assert state["resolve"] == 3 and state["injuries"] == 0 and state["last_test"] is None
    assert state["sheet"]["totems"] == {t: 1 for t in state["sheet"]["totems"]}


def test_platform_fields_are_ignored():
    action = {"type": "skill_test", "skill": "Hunt", "target": 8, "visibility": "gm",
              "character": 7, "note": "hi", "target_user": 3, "whatever": [1]}
    _, events = apply(new_state(), action, [3, 5])
    assert events[0].payload["total"] == 8


# --- skill tests -------------------------------------------------------------------


@pytest.mark.parametrize("action, match", [
    ({"type": "skill_test", "target": 8}, "'skill' is required"),
    ({"type": "skill_test", "skill": "Fly", "target": 8}, "'skill' must be one of"),
    ({"type": "skill_test", "skill": "Hunt"}, "'target' is required"),
    ({"type": "skill_test", "skill": "Hunt", "target": 31}, "'target' must be from 1 to 30"),
    ({"type": "skill_test", "skill": "Hunt", "target": True}, "whole number"),
    ({"type": "skill_test", "skill": "Hunt", "target": 8, "modifier": 11}, "'modifier'"),
    ({"type": "skill_test", "skill": "Hunt", "target": 8, "modifier": 10**5000}, "not a huge number"),
    ({"type": "skill_test", "skill": "Hunt", "target": 8, "specialization": "Tracking"}, "no specialization"),
    ({"type": "skill_test", "skill": "Hunt", "target": 8, "bubble": "up"}, "'bubble'"),
    ({"type": "no_such"}, "has no action"),
])
def test_skill_test_bad_fields(action, match):
    refused(new_state(), action, match)


def test_bubble_preference_row_and_none():
    state, events = apply(new_state(), {"type": "skill_test", "skill": "Hunt", "target": 8, "bubble": "row"}, [1, 1])
    assert events[0].payload["bubble"] == {"line": "row", "index": 1, "totem": "Bison"}
    state, events = apply(state, {"type": "skill_test", "skill": "Hunt", "target": 8, "bubble": "none"}, [1, 1])
    assert events[0].payload["bubble"] is None and "chose not" in events[0].payload["bubble_note"]
    assert sum(state["bubbles"]["rows"] + state["bubbles"]["columns"]) == 1


def test_preferred_bubble_full_falls_back_to_the_other():
    state, _ = apply(new_state(), {"type": "skill_test", "skill": "Hunt", "target": 8, "bubble": "row"}, [1, 1])
    _, events = apply(state, {"type": "skill_test", "skill": "Hunt", "target": 8, "bubble": "row"}, [1, 1])
    assert events[0].payload["bubble"]["line"] == "column"


def test_skill_test_event_records_odds_and_inputs():
    _, events = apply(new_state(), {"type": "skill_test", "skill": "Hunt", "target": 8}, [3, 5])
    p = events[0].payload
    assert p["odds"]["success"]["p"] == "5/12" and p["odds"]["critical"]["p"] == "1/36"
    assert p["rating"] == 1 and p["target"] == 8 and p["bonus"] == 0 and p["blocked"] == []


# --- Resolve -------------------------------------------------------------------------


def test_spend_resolve_refusals():
    state = new_state()
    refused(state, {"type": "spend_resolve", "totem": "Bear"}, "no skill test this scene")
    refused(state, {"type": "spend_resolve", "totem": "Lion"}, "'totem' must be one of")
    ok, _ = apply(state, {"type": "skill_test", "skill": "Hunt", "target": 2}, [3, 3])
    refused(ok, {"type": "spend_resolve", "totem": "Bear"}, "succeeded: there is nothing")
    failed = failed_test(state, target=5)
    rescued, _ = apply(failed, {"type": "spend_resolve", "totem": "Bear"})
    refused(rescued, {"type": "spend_resolve", "totem": "Bear"}, "already spent Resolve")
    broke = failed_test(new_state(resolve=0), target=5)
    refused(broke, {"type": "spend_resolve", "totem": "Bear"}, "no Resolve left")
    refused(failed_test(state, target=6), {"type": "spend_resolve", "totem": "Bear"}, "won't make you succeed")


def test_failed_test_cannot_be_rescued_after_the_scene():
    state = SYSTEM.evolve(failed_test(new_state(), target=5), Event("scene_ended", {"scene": 1}))
    refused(state, {"type": "spend_resolve", "totem": "Bear"}, "no skill test this scene")


def test_grant_resolve_caps_at_maximum():
    state, events = apply(new_state(), {"type": "grant_resolve", "amount": 9})
    assert events[0].payload["amount"] == 2 and state["resolve"] == 5
    refused(state, {"type": "grant_resolve"}, "already at its maximum of 5")
    refused(new_state(), {"type": "grant_resolve", "amount": 0}, "'amount'")


def configured(state, **changes):
    """``state`` after the GM's ``campaign_configured`` with ``changes`` to its options."""
    from rules.options import CONFIGURED

    return SYSTEM.evolve(state, Event(CONFIGURED, {"options": {**state["sheet"]["options"], **changes}}))


def test_resolve_above_a_lowered_maximum_is_kept_until_spent_and_no_grant_tops_it():
    """docs/rules.md TOTE 12: Resolve granted under the old maximum stays (tote-basic-rules-v1.1.txt:14
    spends it a point at a time); grants wait until it is below the new one."""
    state, _ = apply(new_state(), {"type": "grant_resolve", "amount": 2})
    state = configured(state, resolve_max=2)
    assert state["resolve"] == 5
    refused(state, {"type": "grant_resolve"}, "already at its maximum of 2")
    for _ in range(3):
        state, _ = apply(failed_test(state, target=5), {"type": "spend_resolve", "totem": "Bison"})
    assert state["resolve"] == 2
    refused(state, {"type": "grant_resolve"}, "already at its maximum of 2")
    state, _ = apply(failed_test(state, target=5), {"type": "spend_resolve", "totem": "Bison"})
    state, events = apply(state, {"type": "grant_resolve", "amount": 5})
    assert events[0].payload["amount"] == 1 and state["resolve"] == 2


# --- aspects ---------------------------------------------------------------------------


def test_aspect_refusals():
    refused(new_state(aspect=None), {"type": "invoke_aspect"}, "no aspect to invoke")
    refused(new_state(aspect=""), {"type": "gm_invoke_aspect"}, "no aspect for the GM")
    state, _ = apply(new_state(), {"type": "gm_invoke_aspect"})
    refused(state, {"type": "gm_invoke_aspect"}, "already waiting")


def test_gm_penalty_lapses_with_the_scene():
    state, _ = apply(new_state(), {"type": "gm_invoke_aspect"})
    assert SYSTEM.preview(state, {"type": "skill_test", "skill": "Hunt", "target": 8})["success"] < \
        SYSTEM.preview(new_state(), {"type": "skill_test", "skill": "Hunt", "target": 8})["success"]
    state = SYSTEM.evolve(state, Event("scene_ended", {"scene": 1}))
    assert state["gm_penalty"] == 0


# --- injuries ------------------------------------------------------------------------


def test_injury_marking_and_healing():
    state, events = apply(new_state(), {"type": "mark_injury", "count": 2})
    assert events[0].payload["blocked"] == [4, 5] and state["injuries"] == 2
    state, events = apply(state, {"type": "mark_injury", "count": 10})  # clamps at the track's end
    assert [s["spot"] for s in events[0].payload["spots"]] == [3, 4, 5, 6] and state["taken_out"]
    refused(state, {"type": "mark_injury"}, "already full")
    state, events = apply(state, {"type": "heal_injury", "count": 2})
    assert [s["number"] for s in events[0].payload["spots"]] == [1, 0]
    assert state["injuries"] == 4 and not state["taken_out"] and events[0].payload["blocked"] == [2, 3, 4, 5]
    refused(new_state(), {"type": "heal_injury"}, "no injuries to heal")
    refused(new_state(), {"type": "mark_injury", "count": 11}, "'count'")


def test_custom_injury_track():
    state = new_state(options={"injury_track": [5, 0]})
    state, events = apply(state, {"type": "mark_injury", "count": 2})
    assert events[0].payload["blocked"] == [5] and state["taken_out"]


def test_a_changed_track_re_reads_the_wounds_a_hero_has():
    """docs/rules.md TOTE 19: the state counts filled spots (tote-basic-rules-v1.1.txt:18), and their
    faces are the current track's. A track shorter than the wounds is full: the hero is taken out, and
    healing clears the last spot the track has."""
    state, _ = apply(new_state(), {"type": "mark_injury", "count": 3})
    longer = configured(state, injury_track=[6, 5, 4, 3, 2, 1, 0])
    assert (longer["injuries"], longer["taken_out"]) == (3, False)
    _, events = apply(longer, {"type": "skill_test", "skill": "Hunt", "target": 8}, [6, 3])
    assert events[0].payload["blocked"] == [4, 5, 6]  # the new track's first three faces
    shorter = configured(state, injury_track=[5, 0])
    assert (shorter["injuries"], shorter["taken_out"]) == (2, True)
    refused(shorter, {"type": "skill_test", "skill": "Hunt", "target": 8}, "taken out")
    refused(shorter, {"type": "mark_injury"}, "already full")
    healed, events = apply(shorter, {"type": "heal_injury"})
    assert events[0].payload["spots"] == [{"spot": 2, "number": 0}]
    assert (healed["injuries"], healed["taken_out"]) == (1, False)


# --- effect tests ------------------------------------------------------------------


def test_effect_test_sum_and_count():
    _, events = apply(new_state(), {"type": "effect_test", "dice": 2, "modifier": 1}, [6, 2])
    p = events[0].payload
    assert (p["score"], p["total"], p["outcome"], p["target"]) == (8, 9, "rolled", None)
    assert p["odds"]["9"]["p"] == "5/36"
    counting = new_state(options={"effect_test": {"mode": "count", "threshold": 5}})
    _, events = apply(counting, {"type": "effect_test", "dice": 3, "target": 2}, [6, 2, 5])
    p = events[0].payload
    assert p["score"] == 2 and p["success"] and [d["counted"] for d in p["dice"]] == [True, False, True]


@pytest.mark.parametrize("action, match", [
    ({"type": "effect_test"}, "'dice' is required"),
    ({"type": "effect_test", "dice": 6}, "'dice'"),
    ({"type": "effect_test", "dice": 2, "target": 0}, "'target'"),
    ({"type": "effect_test", "dice": 2, "label": 5}, "'label'"),
])
def test_effect_test_bad_fields(action, match):
    refused(new_state(), action, match)


# --- experience and advancement ----------------------------------------------------------


def test_award_points_and_buy_skill():
    state, _ = apply(new_state(), {"type": "award_points", "points": 5, "reason": "Saved the herd"})
    state, events = apply(state, {"type": "buy_advance", "advance": "skill", "skill": "hunt"})
    assert events[0].payload == {"advance": "skill", "skill": "Hunt", "from": 1, "to": 2, "cost": 2}
    assert state["sheet"]["skills"]["Hunt"] == 2 and state["points"] == {"earned": 5, "spent": 2}
    state, _ = apply(state, {"type": "buy_advance", "advance": "skill", "skill": "Hunt"})  # 3 XP, all that's left
    refused(state, {"type": "buy_advance", "advance": "skill", "skill": "Hunt"}, "Raising Hunt to 4 costs 4 XP; you have 0")


def test_buy_advance_refusals():
    state = new_state()
    refused(state, {"type": "buy_advance", "advance": "skill", "skill": "Hunt"}, "costs 2 XP; you have 0")
    refused(state, {"type": "buy_advance", "advance": "totem", "totem": "Bear"}, "costs 4 XP; you have 0")
    refused(state, {"type": "buy_advance", "advance": "luck"}, "'advance'")
    refused(state, {"type": "buy_advance", "advance": "specialization", "skill": "Hunt"}, "'specialization' is required")
    maxed = SYSTEM.initial_state({"skills": {**ONES, "Hunt": 5}, "totems": {"Bear": 5},
                                  "specializations": {"Hunt": [{"name": "A", "bonus": 5}, {"name": "B", "bonus": 1},
                                                               {"name": "C", "bonus": 1}]}})
    maxed, _ = apply(maxed, {"type": "award_points", "points": 100})
    refused(maxed, {"type": "buy_advance", "advance": "skill", "skill": "Hunt"}, "already at 5")
    refused(maxed, {"type": "buy_advance", "advance": "totem", "totem": "Bear"}, "already at 5")
    refused(maxed, {"type": "buy_advance", "advance": "specialization", "skill": "Hunt", "specialization": "a"},
            "already at 5")
    refused(maxed, {"type": "buy_advance", "advance": "specialization", "skill": "Hunt", "specialization": "D"},
            "already has 3 specializations")


def test_buy_totem_and_specializations():
    state, _ = apply(new_state(), {"type": "award_points", "points": 10})
    state, events = apply(state, {"type": "buy_advance", "advance": "totem", "totem": "owl"})
    assert events[0].payload["cost"] == 4 and state["sheet"]["totems"]["Owl"] == 2
    state, events = apply(state, {"type": "buy_advance", "advance": "specialization", "skill": "Hunt",
                                  "specialization": "Tracking"})
    assert events[0].payload["new"] and events[0].payload["cost"] == 1
    state, events = apply(state, {"type": "buy_advance", "advance": "specialization", "skill": "Hunt",
                                  "specialization": "tracking"})
    assert events[0].payload["to"] == 2 and events[0].payload["cost"] == 2
    assert state["sheet"]["specializations"]["Hunt"] == [{"name": "Tracking", "bonus": 2}]
    assert state["points"] == {"earned": 10, "spent": 7}


def test_configurable_advance_costs():
    state = new_state(options={"advance_costs": {"skill": 3}})
    state, _ = apply(state, {"type": "award_points", "points": 5})
    refused(state, {"type": "buy_advance", "advance": "skill", "skill": "Hunt"}, "costs 6 XP; you have 5")


def test_award_points_fields():
    refused(new_state(), {"type": "award_points", "points": 0}, "'points'")
    refused(new_state(), {"type": "award_points", "points": 101}, "'points'")
    refused(new_state(), {"type": "award_points", "points": 1, "reason": ["x"]}, "'reason'")


def test_xp_is_spent_whenever_the_hero_has_it_mid_tale_or_after_its_end():
    """docs/rules.md TOTE 11: bubbles turn into XP when the Tale ends (tote-basic-rules-v1.1.txt:11),
    and XP the GM awards mid-Tale is spendable at once: no purchase waits for a Tale's end."""
    state, _ = apply(new_state(), {"type": "award_points", "points": 2, "reason": "mid-Tale"})
    state, events = apply(state, {"type": "buy_advance", "advance": "skill", "skill": "Hunt"})
    assert events[0].payload["cost"] == 2 and state["points"] == {"earned": 2, "spent": 2}
    state = apply(state, {"type": "skill_test", "skill": "Hunt", "target": 4}, [4, 1, 1])[0]  # a critical: a bubble
    state, events = apply(state, {"type": "end_tale"})
    assert events[0].payload["xp"] == 1 and state["points"] == {"earned": 3, "spent": 2}
    state, events = apply(state, {"type": "buy_advance", "advance": "specialization", "skill": "Hunt",
                                  "specialization": "Tracking"})
    assert events[0].payload["cost"] == 1


def test_end_tale_without_bubbles_gives_nothing():
    state, events = apply(new_state(), {"type": "end_tale"})
    assert events[0].payload["xp"] == 0 and state["points"]["earned"] == 0


# --- evolve ----------------------------------------------------------------------


def test_evolve_never_mutates_and_ignores_unknown_events():
    state = new_state()
    before = copy.deepcopy(state)
    _, events = apply(state, {"type": "skill_test", "skill": "Hunt", "target": 8}, [1, 1])
    SYSTEM.evolve(state, events[0])
    SYSTEM.evolve(state, Event("scene_ended", {"scene": 1}))
    assert state == before
    assert SYSTEM.evolve(state, Event("roll", {"dice": [3]})) is state
    assert SYSTEM.evolve(state, Event("session_started", {"session": 1})) == state


# --- the sheet ----------------------------------------------------------------------


def test_validate_sheet_normalises_and_is_idempotent():
    sheet = SYSTEM.validate_sheet({"skills": {k.lower(): v for k, v in ONES.items()}, "name": "  Ayasha "})
    assert sheet["name"] == "Ayasha" and list(sheet["skills"]) == list(ONES)
    assert sheet["specializations"]["Hunt"] == [] and sheet["aspect"] is None
    assert SYSTEM.validate_sheet(sheet) == sheet


@pytest.mark.parametrize("sheet, field", [
    (None, "sheet"),
    ([], "sheet"),
    ({}, "skills"),
    ({"skills": {**ONES, "Fly": 1}}, "skills.Fly"),
    ({"skills": {k: v for k, v in ONES.items() if k != "Hunt"}}, "skills.Hunt"),
    ({"skills": {**ONES, "Hunt": 6}}, "skills.Hunt"),
    ({"skills": {**ONES, "Hunt": True}}, "skills.Hunt"),
    ({"skills": ONES, "totems": {"Bear": 0}}, "totems.Bear"),
    ({"skills": ONES, "totems": {"Lion": 1}}, "totems.Lion"),
    ({"skills": ONES, "resolve": 6}, "resolve"),
    ({"skills": ONES, "aspect": 3}, "aspect"),
    ({"skills": ONES, "color": "red"}, "color"),
    ({"skills": ONES, "specializations": {"Hunt": [{"name": "a", "bonus": 1}] * 2}}, "specializations.Hunt[1]"),
    ({"skills": ONES, "specializations": {"Hunt": [{"name": str(i), "bonus": 1} for i in range(4)]}},
     "specializations.Hunt"),
    ({"skills": ONES, "specializations": {"Hunt": [{"name": "a", "bonus": 6}]}}, "specializations.Hunt[0].bonus"),
    ({"skills": ONES, "options": {"resolve_max": 0}}, "options.resolve_max"),
    ({"skills": ONES, "options": {"injury_track": []}}, "options.injury_track"),
    ({"skills": ONES, "options": {"effect_test": {"mode": "max"}}}, "options.effect_test.mode"),
    ({"skills": ONES, "grid": {"rows": ["Bear"] * 4, "columns": ["Owl"] * 4, "skills": []}}, "grid"),
])
def test_bad_sheets(sheet, field):
    with pytest.raises(SheetError) as info:
        SYSTEM.validate_sheet(sheet)
    assert info.value.field == field


def test_creation_rules():
    two_in_a_row = {**ONES, "Strike": 2, "Sneak": 0}
    with pytest.raises(SheetError, match="Bear column .* must sum to 4"):
        SYSTEM.validate_sheet({"skills": two_in_a_row})
    fixed = {**two_in_a_row, "Move": 0, "Hunt": 2}  # rows and columns all sum to 4 again
    assert SYSTEM.validate_sheet({"skills": fixed})["skills"]["Strike"] == 2
    with pytest.raises(SheetError, match="0..2 at character creation"):
        SYSTEM.validate_sheet({"skills": {**ONES, "Strike": 3, "Sneak": 0, "Shoot": 0, "Grapple": 1}})
    with pytest.raises(SheetError, match="totems start at 1"):
        SYSTEM.validate_sheet({"skills": ONES, "totems": {"Bear": 2}})
    established = {"skills": {**ONES, "Hunt": 5}, "totems": {"Bear": 3}}
    assert validate_sheet(established, creation=False)["skills"]["Hunt"] == 5


def test_custom_grid():
    grid = {"rows": ["bear", "Bison", "Coyote", "Hawk"], "columns": ["Owl", "Stag", "Turtle", "Wolf"],
            "skills": [[f"S{r}{c}" for c in range(4)] for r in range(4)]}
    skills = {f"S{r}{c}": 1 for r in range(4) for c in range(4)}
    state = SYSTEM.initial_state(SYSTEM.validate_sheet({"skills": skills, "grid": grid}))
    assert state["sheet"]["grid"]["rows"][0] == "Bear"
    _, events = apply(state, {"type": "skill_test", "skill": "s12", "target": 8}, [1, 1])
    assert events[0].payload["totems"] == ["Bison", "Turtle"]
    assert events[0].payload["bubble"]["totem"] == "Turtle"
    dup = dict(grid, skills=[["Same"] * 4] * 4)
    with pytest.raises(SheetError, match="must all differ"):
        SYSTEM.validate_sheet({"skills": skills, "grid": dup})
