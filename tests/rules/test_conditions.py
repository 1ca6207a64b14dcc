"""Conditions with a duration (rules/conditions.py, docs/rules.md "Conditions"), in every system.

A condition's modifier is read where a text gives circumstances an effect: TOTE's "other bonuses
or penalties to add, based on the circumstances" (tote-basic-rules-v1.1.txt:8), WYRM's
"circumstantial modifiers to any DL" (wyrm-srd-rules-mechanics.txt:31), MdT's situational
modifiers "adicionando ou subtraindo dados no Teste" (mundo-das-trevas-lite-testes.pt.txt:3) and
Tale's "one- and two-round penalties" (tale-rpg.txt:64-66). With no modifier it is shown only.
"""

from __future__ import annotations

import pytest

from rules import Event, RuleError, ScriptedDice, get_system
from rules.conditions import MAX_CONDITIONS

from .folding import assert_folds_in_place

SYSTEMS = ("tote", "wyrm", "tale", "mdt")


def fresh(name: str) -> dict:
    system = get_system(name)
    return system.initial_state(system.validate_sheet(system.example_sheet))


def act(name: str, state: dict, action: dict, faces=()) -> tuple[list[Event], dict]:
    system = get_system(name)
    events = system.decide(state, action, ScriptedDice(faces))
    return events, system.replay(state, events)


def fold(name: str, state: dict, *events: Event) -> dict:
    return get_system(name).replay(state, list(events))


def turn(round_: int, turn_: int = 0) -> Event:
    return Event("turn_advanced", {"round": round_, "turn": turn_, "acting": 1, "name": "Ayasha"})


def condition(name="Blinded", duration="rounds", rounds=2, modifier=0) -> dict:
    return {"type": "apply_condition", "name": name, "duration": duration, "rounds": rounds, "modifier": modifier}


def names(state: dict) -> list[tuple[str, int | None]]:
    return [(c["name"], c.get("rounds_left")) for c in state.get("conditions") or []]


@pytest.mark.parametrize("name", SYSTEMS)
def test_rounds_run_down_as_the_encounter_s_rounds_end(name):
    events, st = act(name, fresh(name), condition(rounds=2))
    assert [e.type for e in events] == ["condition_applied"]
    assert events[0].payload["lasts"] == "for 2 rounds"
    assert names(st) == [("Blinded", 2)]
    # Round 1 begins: no round has ended yet. Later turns of a round end none either.
    st = fold(name, st, turn(1), turn(1, 1), turn(1, 2))
    assert names(st) == [("Blinded", 2)]
    st = fold(name, st, turn(2))  # round 1 ended
    assert names(st) == [("Blinded", 1)]
    st = fold(name, st, turn(2, 1), turn(3))  # round 2 ended: two rounds have passed
    assert names(st) == []
    assert_folds_in_place(get_system(name), fresh(name), [*events, turn(1), turn(2), turn(3)])


@pytest.mark.parametrize("name", SYSTEMS)
def test_the_scene_s_end_ends_what_lasts_the_scene_or_some_rounds(name):
    st = fresh(name)
    for action in (condition("Dazed", rounds=5), condition("Inspired", "scene"), condition("Cursed", "until_removed")):
        st = act(name, st, action)[1]
    for ending in ("scene_ended", "session_ended", "scene_started"):
        assert names(fold(name, st, Event(ending, {"scene": 1}))) == [("Cursed", None)]
    # The encounter's end leaves no rounds to count: what lasts some rounds ends with it.
    assert names(fold(name, st, Event("encounter_ended", {"name": "Ambush", "rounds": 2}))) == [
        ("Inspired", None), ("Cursed", None)]


@pytest.mark.parametrize("name", SYSTEMS)
def test_the_gm_removes_one_and_the_same_name_again_replaces_it(name):
    st = act(name, fresh(name), condition("Blinded", rounds=2))[1]
    events, st = act(name, st, condition("blinded", rounds=4))
    assert events[0].payload["replaces"] is True and events[0].payload["name"] == "Blinded"
    assert names(st) == [("Blinded", 4)]
    events, st = act(name, st, {"type": "remove_condition", "name": "BLINDED"})
    assert events[0].type == "condition_removed" and names(st) == []
    with pytest.raises(RuleError, match="no condition “Blinded” \\(theirs: none\\)"):
        act(name, st, {"type": "remove_condition", "name": "Blinded"})
    for i in range(MAX_CONDITIONS):
        st = act(name, st, condition(f"C{i}", "scene"))[1]
    with pytest.raises(RuleError, match="at most 12 conditions"):
        act(name, st, condition("One more", "scene"))
    assert get_system(name).gm_actions >= {"apply_condition", "remove_condition"}


@pytest.mark.parametrize("bad, message", [
    ({"name": ""}, "'name' is required"),
    ({"rounds": 21}, "'rounds' must be from 1 to 20"),
    ({"duration": "forever"}, "'duration' must be one of"),
    ({"modifier": 11}, "'modifier' must be from"),
])
def test_a_malformed_condition_is_refused_in_words(bad, message):
    with pytest.raises(RuleError, match=message):
        act("wyrm", fresh("wyrm"), {**condition(), **bad})


def test_a_side_of_a_fight_counts_the_fight_s_rounds_not_the_encounter_s():
    st = act("wyrm", fresh("wyrm"), condition(rounds=2))[1]
    view = {"fight": {"seq": 7, "kind": "opposed", "label": "Bridge", "bonus": 3, "explodes": False}}
    st = fold("wyrm", st, Event("fight_started", view))
    # The encounter's rounds go by; the fight has rolled none: nothing passes for its side.
    st = fold("wyrm", st, turn(2), turn(3))
    assert names(st) == [("Blinded", 2)]
    st = fold("wyrm", st, Event("fight_round_rolled", view))
    assert names(st) == [("Blinded", 1)]
    st = fold("wyrm", st, Event("fight_round_rolled", view))
    assert names(st) == []


def test_tote_a_condition_s_bonus_or_penalty_is_added_to_a_skill_test():
    # tote-basic-rules-v1.1.txt:8: "You might have other bonuses or penalties to add, based on the circumstances."
    st = act("tote", fresh("tote"), condition("Dazzled", "scene", modifier=-2))[1]
    # Strike 2: skill dice 5, 4; Paragon 3. 5 + 3 - 2 = 6 against T7: a failure it would not be without.
    events, _ = act("tote", st, {"type": "skill_test", "skill": "Strike", "target": 7}, [5, 4, 3])
    p = events[0].payload
    assert (p["total"], p["bonus"], p["outcome"]) == (6, -2, "failure")
    assert p["conditions"] == [{"name": "Dazzled", "modifier": -2}]
    system = get_system("tote")
    without = system.preview(fresh("tote"), {"type": "skill_test", "skill": "Strike", "target": 7})
    assert system.preview(st, {"type": "skill_test", "skill": "Strike", "target": 7})["success"] < without["success"]


def test_wyrm_a_condition_s_modifier_is_added_to_the_dl():
    # wyrm-srd-rules-mechanics.txt:31: "The GM may add circumstantial modifiers to any DL if appropriate."
    st = act("wyrm", fresh("wyrm"), condition("In the dark", "scene", modifier=2))[1]
    # Rogue 3 + Stealth 2 + a 4 = 9 against DL 8 (+2): 10, a failure.
    events, _ = act("wyrm", st, {"type": "check", "attribute": "rogue", "skills": ["Stealth"], "dl": 8,
                                 "modifier": 0}, [4])
    p = events[0].payload
    assert (p["total"], p["dl"], p["modifier"], p["outcome"]) == (9, 10, 2, "failure")
    assert p["conditions"] == [{"name": "In the dark", "modifier": 2}]


def test_mdt_a_condition_s_dice_join_or_leave_the_pool():
    # mundo-das-trevas-lite-testes.pt.txt:3: "MODIFICADORES situacionais ... adicionando ou subtraindo dados".
    st = act("mdt", fresh("mdt"), condition("Ferido", "until_removed", modifier=-1))[1]
    # Presence 3: 1 + 3 = 4 dice, one fewer for the condition: three d10s.
    events, _ = act("mdt", st, {"type": "test", "attribute": "presence", "difficulty": 1}, [7, 2, 10])
    p = events[0].payload
    assert (p["pool"], p["modifier"], p["successes"]) == (3, 0, 3)
    assert p["conditions"] == [{"name": "Ferido", "modifier": -1}]


def test_tale_a_condition_s_penalty_dice_are_not_portioned_out_in_a_combat_round():
    # tale-rpg.txt:64-66: a 1D penalty "in the next round of combat"; "the one- and two-round penalties".
    st = act("tale", fresh("tale"), condition("Winded", rounds=1, modifier=2))[1]
    st = act("tale", st, {"type": "start_combat", "their_pool": 5})[1]  # brawn 4 + skill 3: 7D
    with pytest.raises(RuleError, match="only 5D"):
        act("tale", st, {"type": "combat_round", "attack": 6, "defence": 0, "their_attack": 0, "their_defence": 0})
    events, st = act("tale", st, {"type": "combat_round", "attack": 5, "defence": 0, "their_attack": 0,
                                  "their_defence": 2}, [6, 6, 6, 6, 6] + [1, 1])
    assert events[0].payload["available"]["mine"] == 5
    assert events[0].payload["conditions"] == [{"name": "Winded", "modifier": 2}]
    # The combat round was the condition's one round: it is over.
    assert names(st) == []


@pytest.mark.parametrize("name", SYSTEMS)
def test_a_condition_without_a_modifier_is_shown_not_applied(name):
    shown = act(name, fresh(name), condition("Frightened", "scene"))[1]
    assert shown["conditions"] == [{"name": "Frightened", "duration": "scene", "modifier": 0}]
    action, faces = {
        "tote": ({"type": "skill_test", "skill": "Strike", "target": 7}, [5, 4, 3]),
        "wyrm": ({"type": "check", "attribute": "rogue", "skills": [], "dl": 5}, [4]),
        "tale": ({"type": "straight_roll", "vs_pool": 2}, [3] * 30),
        "mdt": ({"type": "test", "attribute": "presence", "difficulty": 1}, [7, 2, 10, 1]),
    }[name]
    system = get_system(name)
    with_it = system.decide(shown, action, ScriptedDice(faces))
    without = system.decide(fresh(name), action, ScriptedDice(faces))
    # The same decision, to the byte: a log from before conditions replays as it was decided.
    assert [e.payload for e in with_it] == [e.payload for e in without]
    assert "conditions" not in with_it[0].payload


# --- in a fight of several sides (rules/fights.py with_conditions) -----------------------------------


def _fight(kind: str, entries: dict, settings: dict) -> dict:
    order = list(entries)
    return {"kind": kind, "label": "Ford", "order": order, "teams": {s: s for s in order},
            "names": {s: f"side {s}" for s in order}, "entries": entries, "settings": settings, "round": 0}


def _with(name: str, fight: dict, modifier: int, side: str = "1") -> dict:
    from rules import fights

    st = act(name, fresh(name), condition("Winded", modifier=modifier))[1]
    return fights.with_conditions(get_system(name), fight, {side: st, "2": fresh(name)})


def test_a_fight_reads_a_side_s_conditions_each_round_and_records_them():
    from rules import fights

    tale = get_system("tale")
    entry = {"dice": 7, "start": 7, "penalty": 0, "damage_taken": 0}
    plain = _fight("combat", {"1": dict(entry), "2": dict(entry)}, {"ties": "stop", "defence": "each"})
    assert fights.with_conditions(tale, plain, {"1": fresh("tale"), "2": fresh("tale")}) == plain  # none: no key
    fight = _with("tale", plain, 2)
    assert fight["conditions"] == {"1": 2}
    # tale-rpg.txt:64-66: penalty dice are dice the side can't portion out this round.
    with pytest.raises(RuleError, match="side 1 has only 5D"):
        fights.read_choice(tale, fight, "1", {"attack": {"2": 6}, "defence": 0})
    assert fights.read_choice(tale, plain, "1", {"attack": {"2": 6}, "defence": 0})["attack"] == {"2": 6}
    events = fights.round_events(tale, {"fight": fight, "seq": 3, "choices": {"2": {"attack": {}, "defence": 0}}},
                                 {"character": "1", "attack": {"2": 5}, "defence": 0}, ScriptedDice([6] * 5))
    assert events[0].payload["result"]["exchanges"][0]["attack"] == [6] * 5


def test_mdt_a_side_s_conditions_add_or_take_dice_in_a_fight():
    from rules import fights

    # mundo-das-trevas-lite-testes.pt.txt:3: situational modifiers add or take dice.
    mdt = get_system("mdt")
    fight = _with("mdt", _fight("opposed", {"1": {"pool": 3, "mine": 0}, "2": {"pool": 3, "mine": 0}},
                                {"luck_ten_successes": 1, "luck_dramatic_failure": True}), -1)
    decided = fights.resolve(mdt, fight, {}, ScriptedDice([7, 7] + [2, 2, 2]))
    assert decided["result"]["rolls"]["1"]["pool"] == 2 and decided["result"]["winner"] == "1"


def test_wyrm_an_active_side_s_conditions_add_to_the_dl_it_must_reach():
    from rules import fights

    # wyrm-srd-rules-mechanics.txt:31: "The GM may add circumstantial modifiers to any DL".
    wyrm = get_system("wyrm")
    entries = {"1": {"bonus": 3, "explodes": False}, "2": {"bonus": 2, "explodes": False}}
    fight = _with("wyrm", _fight("opposed", entries, {"ties_succeed": True, "passive_rolls": "each"}), 2)
    # The guard's 3 + 2 = DL 5, +2 for the condition: the thief's 4 + 3 = 7 just makes it.
    x = fights.resolve(wyrm, fight, {"1": {"against": ["2"]}}, ScriptedDice([3, 4]))["result"]["exchanges"][0]
    assert (x["passive"]["dl"], x["dl"], x["modifier"], x["total"], x["outcome"]) == (5, 7, 2, 7, "success")
    plain = fights.resolve(wyrm, {k: v for k, v in fight.items() if k != "conditions"}, {"1": {"against": ["2"]}},
                           ScriptedDice([3, 4]))["result"]["exchanges"][0]
    assert "modifier" not in plain and "dl" not in plain
    assert x["odds"]["success"]["float"] < plain["odds"]["success"]["float"]


# --- iterated resolution and the passive side (docs/rules.md "Conditions" 5 and 6) -----------------


def test_tale_an_iterated_round_leaves_a_condition_s_penalty_dice_out_of_the_roll_and_the_walk():
    from fractions import Fraction

    from rules.tale.odds import compare

    # tale-rpg.txt:9: the available pool is portioned into "attack, defence and do-nothing pools".
    tale = get_system("tale")
    st = act("tale", fresh("tale"), condition("Winded", rounds=2, modifier=2))[1]
    st = act("tale", st, {"type": "start_contest", "characteristics": ["clever", "deft"], "vs_pool": 4})[1]  # 6D
    win, tie, lose = compare(4, 4)  # four of my six dice against their four
    assert tale.preview(st, {"type": "iterated_round"}) == {"win": win, "tie": tie, "lose": lose}
    # Mine 1 1 1 1 (sum 4) lose to 6 6 6 6: my four rolled dice go, the two sitting out stay.
    events, after = act("tale", st, {"type": "iterated_round"}, [1, 1, 1, 1] + [6, 6, 6, 6])
    p = events[0].payload
    assert (len(p["dice"]["mine"]), p["sitting_out"], p["outcome"]) == (4, {"mine": 2, "theirs": 0}, "lose")
    assert (p["eliminated"]["mine"], p["mine_after"]) == (4, 2)
    assert p["conditions"] == [{"name": "Winded", "modifier": 2}]
    assert Fraction(p["odds"]["win"]["p"]) == win
    # Its first round passed; in the next it still keeps 2D out (of the 2D left: nothing to roll).
    assert names(after) == [("Winded", 1)]
    events, after = act("tale", after, {"type": "iterated_round"}, [3, 3, 3, 3])
    assert (events[0].payload["dice"]["mine"], events[0].payload["outcome"]) == ([], "lose")
    assert events[0].payload["mine_after"] == 2 and names(after) == []
    # Without the condition the same dice are a whole pool: six rolled.
    plain = act("tale", fresh("tale"), {"type": "start_contest", "characteristics": ["clever", "deft"], "vs_pool": 4})[1]
    p = act("tale", plain, {"type": "iterated_round"}, [1] * 6 + [6] * 4)[0][0].payload
    assert len(p["dice"]["mine"]) == 6 and "sitting_out" not in p and "conditions" not in p


def test_tale_an_iterated_fight_keeps_a_side_s_penalty_dice_out_of_its_round():
    from rules import fights
    from rules.tale.odds import compare

    tale = get_system("tale")
    entry = lambda n: {"dice": n, "start": n, "penalty": 0, "damage_taken": 0}  # noqa: E731
    plain = _fight("iterated", {"1": entry(4), "2": entry(3)}, {"ties": "stop", "defence": "each"})
    fight = _with("tale", plain, 2)
    assert fight["conditions"] == {"1": 2}
    choices = {"1": {"against": ["2"]}, "2": {"against": []}}
    # Side 1 rolls two dice (1 1) against three (6 6 6): it loses the two it rolled, keeps the two out.
    decided = fights.resolve(tale, fight, choices, ScriptedDice([1, 1] + [6, 6, 6]))
    result = decided["result"]
    assert result["dice"]["1"] == [1, 1] and result["sitting_out"] == {"1": 2}
    assert (result["eliminated"]["1"], decided["entries"]["1"]["dice"]) == (2, 2)
    x = result["exchanges"][0]
    assert [x["odds"][k]["p"] for k in ("win", "tie", "lose")] == [str(f) for f in compare(2, 3)]
    # The same round without it rolls all four.
    assert fights.resolve(tale, plain, choices, ScriptedDice([1] * 4 + [6] * 3))["result"]["dice"]["1"] == [1] * 4


def _passive(setting: bool = True) -> tuple[dict, dict]:
    from rules import contests

    wyrm = get_system("wyrm")
    guard = act("wyrm", fresh("wyrm"), condition("Drowsy", "scene", modifier=2))[1]
    thief = fresh("wyrm")
    thief["sheet"]["options"]["conditions"]["passive"] = setting
    action = {"type": "check", "attribute": "rogue", "skills": ["Stealth"], "vs_character": 2,
              "vs_attribute": "mage", "vs_skills": ["Awareness"]}
    action.update(contests.fill(wyrm, dict(action), guard))
    return thief, action


def test_wyrm_a_passive_side_s_conditions_lower_the_dl_its_roll_sets():
    from rules.wyrm.odds import opposed_odds

    # wyrm-srd-rules-mechanics.txt:23 and 31: the passive side's roll sets the DL; circumstances modify any DL.
    thief, action = _passive()
    assert action["vs"] == {"attribute": 2, "skills": 1, "static": False, "conditions": 2}
    wyrm = get_system("wyrm")
    chances = opposed_odds(5, True, 4, True, -2, True)
    assert wyrm.preview(thief, action) == chances
    # The guard's 3 + 4 = DL 7, less 2 for Drowsy: 5. The thief's 1 + 5 = 6 succeeds.
    p = wyrm.decide(thief, action, ScriptedDice([3, 1]))[0].payload
    assert (p["dl_base"], p["modifier"], p["dl"], p["total"], p["outcome"]) == (7, -2, 5, 6, "success")
    assert p["opposition"]["conditions"] == 2
    assert {k: v["p"] for k, v in p["odds"].items()} == {k: str(v) for k, v in chances.items()}
    # The setting off: only the active side's conditions count, as before.
    thief, action = _passive(False)
    p = wyrm.decide(thief, action, ScriptedDice([3, 1]))[0].payload
    assert (p["dl"], p["outcome"]) == (7, "failure") and "conditions" not in p["opposition"]


def test_wyrm_a_passive_side_s_conditions_count_in_a_fight_where_the_campaign_reads_them():
    from rules import fights

    wyrm = get_system("wyrm")
    entries = {"1": {"bonus": 3, "explodes": False}, "2": {"bonus": 2, "explodes": False}}
    guard = act("wyrm", fresh("wyrm"), condition("Drowsy", "scene", modifier=2))[1]
    settings = {"ties_succeed": True, "passive_rolls": "each", "passive_conditions": True}
    fight = fights.with_conditions(wyrm, _fight("opposed", entries, settings), {"1": fresh("wyrm"), "2": guard})
    # The guard's 3 + 2 = DL 5, less 2: 3. The thief's 1 + 3 = 4 succeeds.
    x = fights.resolve(wyrm, fight, {"1": {"against": ["2"]}}, ScriptedDice([3, 1]))["result"]["exchanges"][0]
    assert (x["passive"]["dl"], x["modifier"], x["dl"], x["total"], x["outcome"]) == (5, -2, 3, 4, "success")
    # A fight started under the setting off (or before it) reads only the active side's.
    old = {**fight, "settings": {"ties_succeed": True, "passive_rolls": "each"}}
    x = fights.resolve(wyrm, old, {"1": {"against": ["2"]}}, ScriptedDice([3, 1]))["result"]["exchanges"][0]
    assert (x["outcome"], "modifier" in x) == ("failure", False)


# --- what the table says of a condition (rules/base.py ConditionsRead) -----------------------------

# Every action each system declares as reading a condition's modifier, after what sets it up.
READ_BY = {
    "tote": [([], {"type": "skill_test", "skill": "Strike", "target": 7})],
    "wyrm": [([], {"type": "check", "attribute": "rogue", "skills": [], "dl": 5})],
    "mdt": [([], {"type": "test", "attribute": "presence", "difficulty": 1}),
            ([], {"type": "opposed_test", "attribute": "presence", "vs_pool": 3}),
            ([{"type": "start_contest", "attribute": "presence", "vs_pool": 3, "target": 20}], {"type": "contest_round"}),
            ([{"type": "start_project", "name": "Tome", "target": 50, "attribute": "presence"}],
             {"type": "project_roll", "project": "Tome"})],
    "tale": [([{"type": "start_combat", "their_pool": 5}],
              {"type": "combat_round", "attack": 1, "defence": 1, "their_attack": 1, "their_defence": 1}),
             ([{"type": "start_contest", "characteristics": ["clever", "deft"], "vs_pool": 4}],
              {"type": "iterated_round"})],
}


@pytest.mark.parametrize("name", SYSTEMS)
def test_the_actions_a_system_says_read_a_condition_record_it(name):
    system = get_system(name)
    read = system.conditions
    assert read.actions <= set(system.actions) and {a["type"] for _, a in READ_BY[name]} == read.actions
    with_it = act(name, fresh(name), condition("Staggered", "scene", modifier=1))[1]
    for setup, action in READ_BY[name]:
        states = []
        for start in (with_it, fresh(name)):
            for before in setup:
                start = act(name, start, before, [5] * 60)[1]
            states.append(start)
        recorded = system.decide(states[0], action, ScriptedDice([5] * 200))[0].payload
        plain = system.decide(states[1], action, ScriptedDice([5] * 200))[0].payload
        found = recorded.get("conditions") or recorded.get("parts", {}).get("conditions") or \
            next((v["conditions"] for v in recorded.values() if isinstance(v, dict) and "conditions" in v), None)
        assert found == [{"name": "Staggered", "modifier": 1}], (action, recorded)
        assert "conditions" not in str(plain), action


@pytest.mark.parametrize(("name", "modifier", "words"), [
    ("tote", -1, "−1 to the total"), ("wyrm", 2, "+2 to the DL"), ("mdt", -1, "−1 die"), ("mdt", 3, "+3 dice"),
    ("tale", 2, "2 penalty dice"), ("tale", 1, "1 penalty die"),
])
def test_a_condition_s_effect_in_the_system_s_words(name, modifier, words):
    from rules.conditions import effect_words

    assert effect_words(get_system(name).conditions.effect, modifier) == words


def test_tale_a_two_sided_round_reads_the_opponent_s_penalty_dice_as_filled():
    from fractions import Fraction

    from rules.tale.odds import compare

    tale = get_system("tale")
    st = act("tale", fresh("tale"), {"type": "start_contest", "characteristics": ["clever", "deft"], "vs_pool": 4})[1]
    # Their 4 dice, 3 of them sitting out: one die against my six.
    round_ = {"type": "iterated_round", "their_conditions": 3}
    win, tie, lose = compare(6, 1)
    assert tale.preview(st, round_) == {"win": win, "tie": tie, "lose": lose}
    p = tale.decide(st, round_, ScriptedDice([1] * 6 + [6]))[0].payload
    assert (len(p["dice"]["theirs"]), p["sitting_out"]) == (1, {"mine": 0, "theirs": 3})
    assert Fraction(p["odds"]["lose"]["p"]) == lose
    # A combat: they portion out 5D less 2.
    st = act("tale", fresh("tale"), {"type": "start_combat", "their_pool": 5})[1]
    fight = {"type": "combat_round", "attack": 1, "defence": 1, "their_attack": 2, "their_defence": 2,
             "their_conditions": 2}
    with pytest.raises(RuleError, match="Your opponent has only 3D"):
        tale.decide(st, fight, ScriptedDice([3] * 20))
    p = tale.decide(st, {**fight, "their_defence": 1}, ScriptedDice([3] * 20))[0].payload
    assert (p["available"]["theirs"], p["their_conditions"]) == (3, 2)


def test_mdt_an_opposed_test_reads_the_opponent_s_conditions_as_filled():
    from rules import contests
    from rules.mdt.odds import odds_of_opposed

    # mundo-das-trevas-lite-testes.pt.txt:24, "Ambos rolam": each side's circumstances on its own pool.
    mdt = get_system("mdt")
    foe = act("mdt", fresh("mdt"), condition("Ferido", "scene", modifier=-1))[1]
    action = {"type": "opposed_test", "attribute": "presence", "vs_character": 2}
    action.update(contests.fill(mdt, dict(action), foe))
    assert (action["vs_pool"], action["vs_conditions"]) == (4, -1)
    with pytest.raises(RuleError, match="vs_conditions"):
        contests.fill(mdt, {**action, "vs_pool": None}, foe)
    chances = odds_of_opposed(4, 3, "none", fresh("mdt")["sheet"]["options"])
    assert mdt.preview(fresh("mdt"), action) == chances
    p = mdt.decide(fresh("mdt"), action, ScriptedDice([7, 7, 2, 2] + [7, 2, 2]))[0].payload
    assert (p["vs_pool"], p["vs_conditions"], len(p["opponent_roll"]["dice"]), p["outcome"]) == (3, -1, 3, "win")
