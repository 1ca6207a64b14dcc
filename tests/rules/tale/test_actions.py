"""Tale RPG actions: what each one records, and every refusal."""

import copy

import pytest

from rules.base import Event, RuleError, SheetError
from rules.tale.actions import skill_cost, walk

from .helpers import SYSTEM, act, sheet, state, with_points


def refused(st, action, match):
    with pytest.raises(RuleError, match=match):
        SYSTEM.decide(st, action, _no_dice())


class _no_dice:
    def roll(self, sides):
        raise AssertionError("a refused action must not roll")


# --- the system ----------------------------------------------------------------------------------

def test_system_shape():
    assert SYSTEM.name == "tale" and SYSTEM.title == "Tale RPG"
    assert SYSTEM.gm_actions == {"award_points", "take_damage", "impose_penalty",
                                 "apply_condition", "remove_condition"}
    assert set(SYSTEM.gm_actions) <= set(SYSTEM.actions)


def test_unknown_action():
    refused(state(), {"type": "fireball"}, "no action 'fireball'")


def test_platform_fields_are_tolerated():
    action = {"type": "straight_roll", "target": 21, "visibility": "gm", "character": 7, "note": "hi",
              "target_user": 3, "whatever": [1]}
    events, _ = act(state(), action, [4] * 6)
    assert events[0].payload["total"] == 24


# --- sheets --------------------------------------------------------------------------------------

def test_sheet_is_normalised():
    clean = SYSTEM.validate_sheet({**sheet(skills={"hide": 2, "Ride": {"characteristics": ["Deft", "brawn"], "dice": 1}}),
                                   "archetype": " barbarian "})
    assert clean["skills"] == {"hide": {"characteristics": ["clever", "deft"], "dice": 2},
                               "Ride": {"characteristics": ["deft", "brawn"], "dice": 1}}
    assert clean["archetype"] == "barbarian"


@pytest.mark.parametrize("bad, field", [
    (None, "sheet"),
    ([], "sheet"),
    ({**sheet(), "hp": 3}, "hp"),
    (sheet(brawn=0), "characteristics.brawn"),
    (sheet(brawn=11), "characteristics.brawn"),
    (sheet(brawn=True), "characteristics.brawn"),
    (sheet(brawn=3.0), "characteristics.brawn"),
    ({**sheet(), "characteristics": {"brawn": 3}}, "characteristics.deft"),
    ({**sheet(), "characteristics": {**sheet()["characteristics"], "luck": 3}}, "characteristics.luck"),
    (sheet(primary="luck"), "primary"),
    (sheet(primary="deft", secondary="deft"), "secondary"),
    (sheet(skills={"Ride": 1}), "skills.Ride.characteristics"),
    (sheet(skills={"Ride": {"characteristics": ["deft", "deft"]}}), "skills.Ride.characteristics"),
    (sheet(skills={"Hide": 11}), "skills.Hide.dice"),
    (sheet(skills={"Hide": 1, "hide": 2}), "skills.hide"),
    (sheet(skills={"": 1}), "skills"),
    (sheet(skills=[1]), "skills"),
    ({**sheet(), "archetype": 5}, "archetype"),
])
def test_bad_sheets(bad, field):
    with pytest.raises(SheetError) as err:
        SYSTEM.validate_sheet(bad)
    assert err.value.field == field


def test_initial_state():
    st = state()
    assert st["points"] == {"earned": 0, "spent": 0}
    assert st["contest"] is None and st["unassigned_damage"] == 0
    assert set(st["damage"]) == {"brawn", "deft", "clever", "skill", "wisecrack"}


# --- straight rolls ------------------------------------------------------------------------------

def test_straight_roll_vs_rolled_pool_tie_fails_by_default():
    events, _ = act(state(), {"type": "straight_roll", "vs_pool": 2}, [1] * 6 + [3, 3])
    p = events[0].payload
    assert p["characteristics"] == ["brawn", "wisecrack"] and p["defaulted"] is True
    assert p["challenge_dice"] == [3, 3] and p["total"] == p["challenge_total"] == 6
    assert p["success"] is False and p["outcome"] == "failure"


def test_straight_roll_tie_can_succeed():
    events, _ = act(state(), {"type": "straight_roll", "vs_pool": 2, "on_tie": "success"}, [1] * 6 + [3, 3])
    assert events[0].payload["success"] is True


def test_straight_roll_average_challenge_is_not_rolled():
    events, _ = act(state(), {"type": "straight_roll", "vs_pool": 7, "average": True}, [4, 4, 4, 4, 4, 5])
    p = events[0].payload
    assert p["target"] == 25 and p["average_of"] == 7 and p["total"] == 25 and p["success"]


def test_straight_roll_with_characteristics_and_skill_dice():
    st = state(skills={"Ride": {"characteristics": ["deft", "brawn"], "dice": 2}}, brawn=4)
    events, _ = act(st, {"type": "straight_roll", "skill": "ride", "target": 9}, [1] * 9)
    assert events[0].payload["skill"] == "Ride" and events[0].payload["pool"] == 9
    events, _ = act(st, {"type": "straight_roll", "characteristics": ["clever", "skill"], "target": 9}, [2] * 6)
    assert events[0].payload["pool"] == 6 and events[0].payload["success"]
    # an unknown skill defaults to primary + secondary
    events, _ = act(st, {"type": "straight_roll", "skill": "Juggle", "target": 9}, [2] * 7)
    assert events[0].payload["defaulted"] and events[0].payload["characteristics"] == ["brawn", "wisecrack"]


@pytest.mark.parametrize("action, match", [
    ({"type": "straight_roll"}, "exactly one of 'target'"),
    ({"type": "straight_roll", "target": 5, "vs_pool": 2}, "exactly one of 'target'"),
    ({"type": "straight_roll", "target": 0}, "'target' must be from 1"),
    ({"type": "straight_roll", "vs_pool": 41}, "'vs_pool' must be from 1 to 40"),
    ({"type": "straight_roll", "vs_pool": "7"}, "'vs_pool' must be a whole number"),
    # docs/rules.md Tale 39: the reference table's names ("Hard | 7D", tale-rpg.txt:46) are no challenge.
    ({"type": "straight_roll", "vs_pool": "hard"}, "'vs_pool' must be a whole number"),
    ({"type": "straight_roll", "difficulty": "hard"}, "exactly one of 'target'"),
    ({"type": "straight_roll", "target": 5, "skill": 3}, "'skill' must be text of 1 to 40 characters"),
    ({"type": "straight_roll", "target": 5, "characteristics": ["deft"]}, "'characteristics' must be a list"),
    ({"type": "straight_roll", "target": 5, "characteristics": ["deft", "luck"]}, "'characteristics\\[1\\]' must be one of brawn"),
    ({"type": "straight_roll", "vs_pool": 5, "on_tie": "maybe"}, "'on_tie' must be one of"),
    ({"type": "straight_roll", "vs_pool": 5, "average": "yes"}, "'average' must be true or false"),
])
def test_straight_roll_refusals(action, match):
    refused(state(), action, match)


def test_no_rolls_while_damage_waits_to_be_spread():
    _, st = act(state(), {"type": "take_damage", "dice": 2})
    refused(st, {"type": "straight_roll", "target": 5}, "Spread your 2D of damage")
    refused(st, {"type": "start_contest", "vs_pool": 5}, "Spread your 2D")


def test_no_purchase_and_no_odds_of_a_refused_roll_while_damage_waits():
    """docs/rules.md Tale 37, 38: raising a characteristic would change where the damage may go, and
    the odds of a roll the rules would refuse are refused the same way."""
    _, st = act(with_points(state(), 20), {"type": "take_damage", "dice": 2})
    refused(st, {"type": "buy_advance", "characteristic": "brawn"}, "Spread your 2D")
    for action in ({"type": "straight_roll", "target": 5}, {"type": "hide", "place": "open_space"},
                   {"type": "start_contest", "vs_pool": 5}, {"type": "start_combat", "their_pool": 5}):
        with pytest.raises(RuleError, match="Spread your 2D"):
            SYSTEM.preview(st, action)
    assert SYSTEM.advances(st)["characteristic"]["brawn"] == {"refused": "Spread your 2D of damage over brawn and "
                                                                         "skill first (assign_damage)."}
    _, st = act(st, {"type": "assign_damage", "damage": {"brawn": 2}})
    assert SYSTEM.preview(st, {"type": "straight_roll", "target": 5})
    act(st, {"type": "buy_advance", "characteristic": "brawn"})


def test_no_dice_left_to_roll():
    st = state(brawn=1, skill=1)
    _, st = act(st, {"type": "take_damage", "dice": 5})
    _, st = act(st, {"type": "assign_damage", "damage": {"brawn": 1, "skill": 1}})
    refused(st, {"type": "straight_roll", "characteristics": ["brawn", "skill"], "target": 3}, "no dice to roll")
    refused(st, {"type": "start_combat", "their_pool": 3}, "no dice to fight with")


# --- hiding --------------------------------------------------------------------------------------

def test_failed_hide_starts_no_contest():
    events, st = act(state(), {"type": "hide", "place": "open_space", "seeker_pool": 8}, [1] * 6 + [1] * 10)
    assert [e.type for e in events] == ["hide_rolled"]
    assert events[0].payload["place"] == "open_space" and events[0].payload["vs_pool"] == 10
    assert not events[0].payload["success"] and st["contest"] is None


def test_hide_without_a_seeker_is_only_the_roll():
    events, st = act(state(), {"type": "hide", "challenge": 3}, [6] * 6 + [1] * 3)
    assert [e.type for e in events] == ["hide_rolled"] and events[0].payload["success"] and st["contest"] is None


@pytest.mark.parametrize("action, match", [
    ({"type": "hide"}, "exactly one of 'place'"),
    ({"type": "hide", "place": "cellar"}, "'place' must be one of"),
    ({"type": "hide", "place": "open_space", "challenge": 3}, "exactly one of 'place'"),
    ({"type": "hide", "challenge": 3, "seeker_pool": 0}, "'seeker_pool' must be from 1"),
    ({"type": "hide", "challenge": 3, "rounds": 51}, "'rounds' must be from 1 to 50"),
])
def test_hide_refusals(action, match):
    refused(state(), action, match)


def test_cannot_hide_from_a_seeker_during_a_contest():
    _, st = act(state(), {"type": "start_contest", "vs_pool": 5})
    refused(st, {"type": "hide", "challenge": 3, "seeker_pool": 4}, "already running")


# --- iterated contests ---------------------------------------------------------------------------

def test_walk_rules():
    assert walk([6, 5, 4], [5, 5, 1]) == ["eliminated", "stopped", "not_reached"]
    assert walk([6, 5, 4], [5, 5, 1], "eliminate") == ["eliminated"] * 3
    assert walk([4], [6, 1]) == ["stopped"]
    assert walk([6, 6], [1]) == ["eliminated"]


def test_tied_sums_do_nothing():
    _, st = act(state(), {"type": "start_contest", "vs_pool": 2})
    events, st = act(st, {"type": "iterated_round"}, [1] * 6 + [3, 3])
    p = events[0].payload
    assert p["outcome"] == "tie" and p["eliminated"] == {"mine": 0, "theirs": 0}
    assert all(c["verdict"] is None for c in p["columns"])
    assert st["contest"]["round"] == 1 and st["contest"]["mine"] == 6


def test_winning_wears_the_other_side_down_to_nothing():
    _, st = act(state(), {"type": "start_contest", "vs_pool": 2, "label": "picking the lock"})
    events, st = act(st, {"type": "iterated_round"}, [6] * 6 + [5, 2])
    assert events[0].payload["outcome"] == "win" and events[0].payload["theirs_after"] == 0
    assert events[1].type == "contest_ended" and events[1].payload["winner"] == "mine"
    assert st["contest"] is None


def test_time_out_without_a_favourite_is_undecided():
    _, st = act(state(), {"type": "start_contest", "vs_pool": 2, "rounds": 1})
    events, st = act(st, {"type": "iterated_round"}, [1] * 6 + [3, 3])
    assert events[1].payload["winner"] is None and events[1].payload["reason"] == "time_out"


def test_end_contest_by_hand():
    _, st = act(state(), {"type": "start_contest", "vs_pool": 2})
    events, st = act(st, {"type": "end_contest", "winner": "theirs", "reason": "the guard gives up"})
    assert events[0].payload["winner"] == "theirs" and events[0].payload["reason"] == "ended"
    assert events[0].payload["why"] == "the guard gives up" and st["contest"] is None


@pytest.mark.parametrize("action, match", [
    ({"type": "start_contest"}, "'vs_pool' is required"),
    ({"type": "start_contest", "vs_pool": 3, "ties": "sometimes"}, "'ties' must be one of"),
    ({"type": "start_contest", "vs_pool": 3, "at_time_out": "me"}, "'at_time_out' must be one of"),
    ({"type": "start_contest", "vs_pool": 3, "label": 4}, "'label' must be text"),
    ({"type": "iterated_round"}, "no contest running"),
    ({"type": "combat_round", "attack": 1, "defence": 0, "their_attack": 0, "their_defence": 0}, "no contest"),
    ({"type": "end_contest"}, "no contest running"),
    ({"type": "impose_penalty", "dice": 1}, "no contest running"),
])
def test_contest_refusals_without_a_contest(action, match):
    refused(state(), action, match)


def test_one_contest_at_a_time_and_the_right_round_action():
    _, st = act(state(), {"type": "start_contest", "vs_pool": 3})
    refused(st, {"type": "start_contest", "vs_pool": 3}, "already running")
    refused(st, {"type": "start_combat", "their_pool": 3}, "already running")
    refused(st, {"type": "combat_round", "attack": 1, "defence": 0, "their_attack": 0, "their_defence": 0},
            "not a combat")
    refused(st, {"type": "impose_penalty", "dice": 1}, "not a combat")
    refused(st, {"type": "end_contest", "winner": "me"}, "'winner' must be one of")
    _, st = act(state(), {"type": "start_combat", "their_pool": 3})
    refused(st, {"type": "iterated_round"}, "That is a combat")


# --- combat --------------------------------------------------------------------------------------

def _fight():
    """brawn 4 (primary) + skill 3 = 7D against a 6D thug."""
    _, st = act(state(brawn=4), {"type": "start_combat", "their_pool": 6, "label": "thug"})
    assert st["contest"]["mine"] == 7 and st["contest"]["pool"]["characteristics"] == ["brawn", "skill"]
    return st


def test_a_whole_combat():
    st = _fight()
    # Round 1: both hit. Dice: my attack, my defence, their attack, their defence.
    events, st = act(st, {"type": "combat_round", "attack": 4, "defence": 3, "their_attack": 3, "their_defence": 3},
                     [6, 5, 4, 2] + [3, 3, 1] + [6, 4, 4] + [2, 2, 1])
    p = events[0].payload
    mine, theirs = p["exchanges"]["mine"], p["exchanges"]["theirs"]
    assert (mine["attack_sum"], mine["defence_sum"], mine["outcome"]) == (17, 5, "hit")
    assert [c["verdict"] for c in mine["columns"]] == ["eliminated"] * 3 + ["stopped"]
    assert [c["portion"] for c in mine["columns"]] == ["defence"] * 3 + ["attack"]
    assert mine["eliminated"] == {"defence": 3, "attack": 0, "idle": 0}
    assert (theirs["attack_sum"], theirs["defence_sum"], theirs["damage"]) == (14, 7, 3)
    assert p["outcome"] == "hit/hit" and p["damage"] == {"to_me": 3, "to_them": 3}
    assert (p["mine_after"], p["theirs_after"]) == (4, 3)
    # Round 2: my attack misses their full defence: a 1D penalty next round. My defence is not rolled.
    events, st = act(st, {"type": "combat_round", "attack": 4, "defence": 0, "their_attack": 0, "their_defence": 3},
                     [1, 1, 1, 1] + [2, 2, 2])
    p = events[0].payload
    assert p["outcome"] == "miss/no_attack" and p["dice"]["my_defence"] == []
    assert p["penalties_after"] == [{"side": "mine", "dice": 1, "rounds": 1, "why": "missed"}]
    # Round 3: only 3D of my 4 are available.
    refused(st, {"type": "combat_round", "attack": 4, "defence": 0, "their_attack": 0, "their_defence": 0},
            "only 3D")
    # They do nothing at all: their unrolled dice count as 0 and every attacking die knocks one out.
    events, st = act(st, {"type": "combat_round", "attack": 3, "defence": 0, "their_attack": 0, "their_defence": 0},
                     [3, 2, 1])
    p = events[0].payload
    assert p["available"] == {"mine": 3, "theirs": 3}
    assert p["exchanges"]["mine"]["eliminated"] == {"defence": 0, "attack": 0, "idle": 3}
    assert p["penalties_after"] == []
    end = events[1]
    assert end.type == "contest_ended" and end.payload["winner"] == "mine"
    assert end.payload["damage_taken"] == 3 and end.payload["damage_to_assign"] == 3
    assert st["contest"] is None and st["unassigned_damage"] == 3
    # Spread the damage, then rest it off: 1D per damaged characteristic per day.
    refused(st, {"type": "assign_damage", "damage": {"brawn": 2}}, "exactly 3D")
    refused(st, {"type": "assign_damage", "damage": {"brawn": 2, "deft": 1}}, "spreading 3D over brawn and skill")
    refused(st, {"type": "assign_damage", "damage": {"brawn": 5}}, "'damage.brawn' must be from 0 to 4")
    refused(st, {"type": "rest"}, "Spread your 3D")
    _, st = act(st, {"type": "assign_damage", "damage": {"brawn": 2, "skill": 1}})
    assert st["damage"]["brawn"] == 2 and st["unassigned_damage"] == 0
    events, st = act(st, {"type": "rest", "days": 1})
    assert events[0].payload["recovered"] == {"brawn": 1, "skill": 1}
    events, st = act(st, {"type": "rest", "days": 3})
    assert events[0].payload["recovered"] == {"brawn": 1} and not any(st["damage"].values())


def test_damage_rolls_over_from_defence_onto_attack():
    st = _fight()
    events, _ = act(st, {"type": "combat_round", "attack": 4, "defence": 0, "their_attack": 2, "their_defence": 2},
                    [6, 6, 6, 6] + [] + [5, 3] + [2, 1])
    x = events[0].payload["exchanges"]
    assert x["mine"]["eliminated"] == {"defence": 2, "attack": 2, "idle": 0} and x["mine"]["damage"] == 4
    # Their 8 beats my empty defence, but the walk meets my attack dice (6s) first and stops.
    assert x["theirs"]["outcome"] == "hit" and x["theirs"]["columns"][0]["verdict"] == "stopped"
    assert events[0].payload["theirs_after"] == 2


def test_equal_attack_and_defence_do_nothing():
    st = _fight()
    events, st = act(st, {"type": "combat_round", "attack": 1, "defence": 0, "their_attack": 0, "their_defence": 1},
                     [4, 4])
    assert events[0].payload["exchanges"]["mine"]["outcome"] == "even"
    assert st["contest"]["penalties"] == [] and st["contest"]["theirs"] == 6


def test_two_round_penalty_is_reclaimed_when_combat_ends():
    st = _fight()
    events, st = act(st, {"type": "impose_penalty", "side": "theirs", "dice": 2, "rounds": 2, "reason": "winded"})
    assert st["contest"]["penalties"][0]["why"] == "winded"
    for _ in range(2):
        refused(st, {"type": "combat_round", "attack": 0, "defence": 0, "their_attack": 5, "their_defence": 0}, "only 4D")
        _, st = act(st, {"type": "combat_round", "attack": 0, "defence": 0, "their_attack": 0, "their_defence": 4})
    assert st["contest"]["penalties"] == []
    _, st = act(st, {"type": "impose_penalty", "dice": 1})
    events, st = act(st, {"type": "end_contest"})
    assert events[0].payload["exhaustion_reclaimed"] == 1 and st["contest"] is None


@pytest.mark.parametrize("action, match", [
    ({"type": "start_combat"}, "'their_pool' is required"),
    ({"type": "start_combat", "their_pool": 3, "with_secondary": 1}, "'with_secondary' must be true or false"),
])
def test_start_combat_refusals(action, match):
    refused(state(), action, match)


def test_combat_with_secondary():
    _, st = act(state(), {"type": "start_combat", "their_pool": 3, "with_secondary": True})
    assert st["contest"]["mine"] == 9


@pytest.mark.parametrize("primary, secondary, with_secondary, names, pool", [
    # Skill as the secondary is in the pool already: adding the secondary adds nothing more.
    ("brawn", "skill", True, ["brawn", "skill"], 4 + 2),
    ("brawn", "skill", False, ["brawn", "skill"], 4 + 2),
    # Skill as the primary counts once; the secondary joins it as usual.
    ("skill", "deft", True, ["skill", "deft"], 2 + 5),
    ("skill", "deft", False, ["skill"], 2),
    ("brawn", "deft", True, ["brawn", "skill", "deft"], 4 + 2 + 5),
])
def test_the_combat_pool_counts_each_characteristic_once(primary, secondary, with_secondary, names, pool):
    """Reading 22: primary + Skill, plus the secondary when ``with_secondary``; Skill counted once
    whether it is the primary or the secondary (before: brawn 4 + skill 2 + skill 2 = 8D)."""
    st = state(primary=primary, secondary=secondary, brawn=4, skill=2, deft=5)
    events, st = act(st, {"type": "start_combat", "their_pool": 3, "with_secondary": with_secondary})
    assert st["contest"]["mine"] == pool and st["contest"]["pool"] == {"pool": pool, "characteristics": names}
    assert events[0].payload["contest"]["mine"] == pool
    # Every die of the pool is one die of the round: all of them portioned, one more refused.
    _, fought = act(st, {"type": "combat_round", "attack": pool, "defence": 0, "their_attack": 0,
                         "their_defence": 3}, [1] * pool + [6, 6, 6])
    assert fought["contest"] is not None
    refused(st, {"type": "combat_round", "attack": pool + 1, "defence": 0, "their_attack": 0, "their_defence": 3},
            f"You have only {pool}D")


@pytest.mark.parametrize("action, match", [
    ({"type": "combat_round", "attack": 1, "defence": 0, "their_attack": 0}, "'their_defence' is required"),
    ({"type": "combat_round", "attack": -1, "defence": 0, "their_attack": 0, "their_defence": 0}, "from 0 to 40"),
    ({"type": "combat_round", "attack": 5, "defence": 3, "their_attack": 0, "their_defence": 0}, "You have only 7D"),
    ({"type": "combat_round", "attack": 1, "defence": 0, "their_attack": 4, "their_defence": 3}, "opponent has only 6D"),
    ({"type": "impose_penalty", "dice": 1, "rounds": 3}, "'rounds' must be from 1 to 2"),
    ({"type": "impose_penalty", "dice": 1, "side": "both"}, "'side' must be one of"),
    ({"type": "rest"}, "cannot rest in the middle of a contest"),
])
def test_combat_refusals(action, match):
    refused(_fight(), action, match)


# --- damage --------------------------------------------------------------------------------------

def test_damage_is_capped_by_what_primary_and_skill_can_take():
    events, st = act(state(), {"type": "take_damage", "dice": 9, "reason": "fell off a cliff"})
    assert events[0].payload["taken"] == 6 and st["unassigned_damage"] == 6
    refused(st, {"type": "take_damage", "dice": 1}, "already at 0D")


@pytest.mark.parametrize("action, match", [
    ({"type": "take_damage"}, "'dice' is required"),
    ({"type": "assign_damage", "damage": {"brawn": 1}}, "no damage to assign"),
    ({"type": "rest"}, "no damage to recover"),
    ({"type": "rest", "days": 0}, "'days' must be from 1"),
])
def test_damage_refusals(action, match):
    refused(state(), action, match)


def test_assign_damage_must_be_an_object():
    _, st = act(state(), {"type": "take_damage", "dice": 1})
    refused(st, {"type": "assign_damage", "damage": [1]}, "must be an object")
    refused(st, {"type": "assign_damage", "damage": {"brawn": "1"}}, "whole number")


def test_primary_skill_takes_all_damage_itself():
    st = state(primary="skill", secondary="deft")
    _, st = act(st, {"type": "take_damage", "dice": 5})
    assert st["unassigned_damage"] == 3
    refused(st, {"type": "assign_damage", "damage": {"brawn": 3}}, "over skill")


# --- advancement ---------------------------------------------------------------------------------

def test_award_points():
    events, st = act(state(), {"type": "award_points", "points": 3, "reason": "session 1"})
    assert events[0].payload == {"points": 3, "reason": "session 1", "earned_after": 3}
    assert st["points"] == {"earned": 3, "spent": 0}


@pytest.mark.parametrize("action, match", [
    ({"type": "award_points", "reason": "x"}, "'points' is required"),
    ({"type": "award_points", "points": 101, "reason": "x"}, "from 1 to 100"),
    ({"type": "award_points", "points": 3}, "'reason' is required"),
    ({"type": "award_points", "points": 3, "reason": "  "}, "'reason' is required"),
])
def test_award_points_refusals(action, match):
    refused(state(), action, match)


def test_skill_costs():
    assert [skill_cost(n) for n in range(1, 7)] == [1, 1, 2, 2, 3, 3]


def test_buy_default_skill_and_raise_it_again():
    st = with_points(state(), 10)
    _, st = act(st, {"type": "buy_advance", "skill": "spot hidden"})
    assert st["sheet"]["skills"]["Spot Hidden"] == {"characteristics": ["clever", "skill"], "dice": 1}
    events, st = act(st, {"type": "buy_advance", "skill": "Spot Hidden"})
    assert events[0].payload["cost"] == 1 and events[0].payload["to"] == 2
    events, st = act(st, {"type": "buy_advance", "skill": "Spot Hidden"})
    assert events[0].payload["cost"] == 2 and st["points"]["spent"] == 4


@pytest.mark.parametrize("action, match", [
    ({"type": "buy_advance"}, "exactly one"),
    ({"type": "buy_advance", "characteristic": "brawn", "skill": "Ride"}, "exactly one"),
    ({"type": "buy_advance", "characteristic": "luck"}, "must be one of"),
    ({"type": "buy_advance", "characteristic": "brawn"}, r"Raising brawn to 4D costs 4 advancement points; you have 3"),
    ({"type": "buy_advance", "skill": "Ride"}, "Ride is a new skill"),
    ({"type": "buy_advance", "skill": "Ride", "characteristics": ["deft"]}, "'characteristics' must be a list"),
    ({"type": "buy_advance", "skill": ""}, "exactly one"),
])
def test_buy_advance_refusals(action, match):
    refused(with_points(state(), 3), action, match)


def test_advance_caps():
    st = with_points(state(brawn=10, skills={"Hide": 10}), 100)
    refused(st, {"type": "buy_advance", "characteristic": "brawn"}, "already at the 10D maximum")
    refused(st, {"type": "buy_advance", "skill": "Hide"}, r"already at the \+10D maximum")


def test_unaffordable_skill():
    refused(state(skills={"Hide": 2}), {"type": "buy_advance", "skill": "Hide"}, r"Raising Hide to \+3D costs 2")


# --- evolve --------------------------------------------------------------------------------------

def test_evolve_never_mutates_and_ignores_unknown_events():
    st = state()
    frozen = copy.deepcopy(st)
    assert SYSTEM.evolve(st, Event("roll", {"dice": [3]})) == frozen
    SYSTEM.evolve(st, Event("award_points", {"points": 2, "reason": "x"}))
    _, after = act(st, {"type": "start_contest", "vs_pool": 3})
    assert st == frozen and after["contest"] is not None


def test_scene_end_closes_a_running_contest_and_session_events_change_nothing():
    st = _fight()
    _, st = act(st, {"type": "combat_round", "attack": 0, "defence": 0, "their_attack": 2, "their_defence": 0},
                [6, 6])
    assert st["contest"]["mine"] == 5
    st2 = SYSTEM.evolve(st, Event("session_started", {"session": 1}))
    assert st2 == st
    st = SYSTEM.evolve(st, Event("scene_ended", {"scene": 1}))
    assert st["contest"] is None and st["unassigned_damage"] == 2


def test_preview_matches_the_event_odds():
    st = state(clever=5, deft=4)
    action = {"type": "hide", "place": "light_undergrowth"}
    preview = SYSTEM.preview(st, action)
    events, _ = act(st, action, [3] * 15)
    assert {k: f"{v.numerator}/{v.denominator}" for k, v in preview.items()} == \
        {k: v["p"] for k, v in events[0].payload["odds"].items()}
    assert SYSTEM.preview(st, {"type": "award_points", "points": 1, "reason": "x"}) == {}


def test_a_spread_moves_only_the_damage_still_owed():
    """Voiding a take_damage after its damage was spread: the replay must not owe -2D."""
    st = state()
    spread = Event("assign_damage", {"damage": {"brawn": 1, "skill": 1}, "unassigned_before": 2})
    after = SYSTEM.evolve(st, spread)  # the take_damage before it was voided
    assert after["unassigned_damage"] == 0 and not any(after["damage"].values())
    owed_one = SYSTEM.evolve(dict(st, unassigned_damage=1), spread)
    assert owed_one["unassigned_damage"] == 0 and owed_one["damage"]["brawn"] == 1 and owed_one["damage"]["skill"] == 0
