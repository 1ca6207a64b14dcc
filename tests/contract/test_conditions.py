"""Conditions with a duration through the command path, in every system (rules/conditions.py),
with the server's own dice, so the session's replay checks every roll that read one.

The GM applies a condition; a roll of the character reads its modifier while it lasts; the
encounter's rounds and the scene's end run it down in every fold (the projection, the state as of a
seq, a rebuild, the session's dice replay), with no event of its own; a player can't apply one.
"""

from __future__ import annotations

import pytest

from campaign.actions import ActionError, Forbidden
from campaign.eventlog import verify_chain
from campaign.fairdice import verify_session
from campaign.models import CharacterProjection, Event
from campaign.projections import rebuild, state_as_of
from rules import get_system


# A roll each system's condition modifier changes (rules/conditions.py), and the modifier.
READS = {
    "tote": ({"type": "skill_test", "skill": "Strike", "target": 8}, -2),
    "wyrm": ({"type": "check", "attribute": "rogue", "skills": ["Stealth"], "dl": 8}, 2),
    "tale": ({"type": "start_combat", "their_pool": 4}, 2),
    "mdt": ({"type": "test", "attribute": "presence", "difficulty": 2}, -1),
}


def conditions(character) -> list[tuple[str, int | None]]:
    state = CharacterProjection.objects.get(character=character).state
    return [(c["name"], c.get("rounds_left")) for c in state.get("conditions") or []]


@pytest.mark.parametrize("system", sorted(READS))
def test_a_condition_is_read_while_it_lasts_and_runs_down_in_every_fold(table_for, system):
    table = table_for(system)
    rules = get_system(system)
    hero = table.create_character(table.alice, "Hero", rules.example_sheet)
    play = lambda who, action: table.command(who, {**action, "character": hero.id})  # noqa: E731
    table.command(table.gm, {"type": "start_session"})
    table.command(table.gm, {"type": "start_scene"})
    roll, modifier = READS[system]
    with pytest.raises(Forbidden):
        play(table.alice, {"type": "apply_condition", "name": "Dazed", "duration": "scene"})
    play(table.gm, {"type": "apply_condition", "name": "Dazed", "duration": "rounds", "rounds": 1,
                    "modifier": modifier})
    play(table.gm, {"type": "apply_condition", "name": "Inspired", "duration": "scene"})
    play(table.gm, {"type": "apply_condition", "name": "Cursed", "duration": "until_removed"})
    assert conditions(hero) == [("Dazed", 1), ("Inspired", None), ("Cursed", None)]
    rolled = play(table.alice, roll).events[0]
    if system == "tale":  # Tale's penalty dice are read by its combat rounds
        rolled = play(table.alice, {"type": "combat_round", "attack": 2, "defence": 3, "their_attack": 2,
                                    "their_defence": 2}).events[0]
        assert rolled.payload["available"]["mine"] == 5  # brawn 4 + skill 3, 2D off
        assert conditions(hero) == [("Inspired", None), ("Cursed", None)]  # its one combat round is over
        play(table.alice, {"type": "end_contest"})
    else:
        assert rolled.payload["conditions"] == [{"name": "Dazed", "modifier": modifier}]
        # The encounter's rounds: round 1 begins, then round 2 ends Dazed's one round.
        table.command(table.gm, {"type": "start_encounter", "name": "Ambush"})
        table.command(table.gm, {"type": "add_combatant", "character": hero.id})
        table.command(table.gm, {"type": "advance_turn"})
        assert conditions(hero) == [("Dazed", 1), ("Inspired", None), ("Cursed", None)]
        table.command(table.gm, {"type": "advance_turn"})
        assert conditions(hero) == [("Inspired", None), ("Cursed", None)]
        table.command(table.gm, {"type": "end_encounter"})
    ended = table.command(table.gm, {"type": "end_scene"}).events[-1]
    assert conditions(hero) == [("Cursed", None)]
    play(table.gm, {"type": "remove_condition", "name": "cursed"})
    assert conditions(hero) == []
    table.command(table.gm, {"type": "end_session"})

    campaign = type(table.campaign).objects.get(pk=table.campaign.pk)
    assert [c["name"] for c in state_as_of(hero, ended.seq - 1)["conditions"]] == ["Inspired", "Cursed"]
    assert verify_chain(campaign).ok
    assert rebuild(campaign, check=True) == []
    report = verify_session(campaign, 1)
    assert report.ok, report.problems
    kinds = set(Event.objects.filter(campaign=campaign).values_list("type", flat=True))
    assert {"condition_applied", "condition_removed"} <= kinds and not any("expired" in k for k in kinds)


def test_a_fight_s_round_reads_the_conditions_the_table_may_read(table_for):
    """A Tale fight of two sides with the server's dice: Ana's penalty dice (tale-rpg.txt:64-66) are
    read by the round and recorded in what it read (``filled``), so the session's replay decides the
    same; a condition the GM applied in secret is not read (the round would show it)."""
    table, ana, ben = _in_session(table_for, "tale", ("Ana", "Ben"), "Winded", 2)
    table.command(table.gm, {"type": "start_fight", "sides": [{"character": ana.id, "team": "A"},
                                                              {"character": ben.id, "team": "B"}]})
    table.command(table.gm, {"type": "apply_condition", "character": ben.id, "name": "Poisoned", "duration": "scene",
                             "modifier": 3, "visibility": "gm"})
    with pytest.raises(ActionError, match="Ana has only 5D"):
        table.command(table.alice, {"type": "choose_in_fight", "character": ana.id, "attack": {str(ben.id): 6}})
    table.command(table.alice, {"type": "choose_in_fight", "character": ana.id, "attack": {str(ben.id): 5}})
    rolled = table.command(table.bob, {"type": "choose_in_fight", "character": ben.id, "attack": {str(ana.id): 7}}
                           ).events[0]
    assert rolled.type == "fight_round_rolled" and rolled.visibility == "public"
    assert rolled.payload["filled"]["fight"]["conditions"] == {str(ana.id): 2}
    table.command(table.gm, {"type": "end_session"})
    report = verify_session(type(table.campaign).objects.get(pk=table.campaign.pk), 1)
    assert report.ok, report.problems



def test_a_name_only_npc_s_conditions_count_in_its_fight_as_the_gm_knows_them(table_for):
    """A quick NPC shown by name: its every event is the GM's, and its numbers hers to disclose, as
    its dice are when the fight starts (docs/rules.md, Conditions 1): its penalty dice count."""
    table, ana = _in_session(table_for, "tale", ("Ana",), "Winded", 0)
    bandit = table.command(table.gm, {"type": "create_character", "npc": True, "name": "Bandit", "shown": "name",
                                      "quick": {"rating": 3}}).events[0].character
    applied = table.command(table.gm, {"type": "apply_condition", "character": bandit.id, "name": "Dazed",
                                       "duration": "scene", "modifier": 2}).events[0]
    assert applied.visibility == "gm"  # stored for the GM alone, as every event of a name-only NPC
    table.command(table.gm, {"type": "start_fight", "sides": [{"character": ana.id, "team": "A"},
                                                              {"character": bandit.id, "team": "B"}]})
    entry = Event.objects.filter(campaign=table.campaign, type="fight_started").get().payload["fight"]["entries"]
    room = entry[str(bandit.id)]["dice"] - 2
    with pytest.raises(ActionError, match=f"Bandit has only {room}D"):
        table.command(table.gm, {"type": "choose_in_fight", "character": bandit.id, "attack": {str(ana.id): room + 1}})
    table.command(table.gm, {"type": "choose_in_fight", "character": bandit.id, "attack": {str(ana.id): room}})
    rolled = table.command(table.alice, {"type": "choose_in_fight", "character": ana.id, "attack": {str(bandit.id): 1}}
                           ).events[0]
    assert rolled.visibility == "public"
    assert rolled.payload["filled"]["fight"]["conditions"] == {str(bandit.id): 2}
    _replays(table)


def _in_session(table_for, system: str, names: tuple[str, ...], condition: str, modifier: int, on: int = 0):
    """A table of ``system`` in session: alice's and bob's characters named ``names`` from the example
    sheet, the one at ``on`` under ``condition`` for the scene."""
    table = table_for(system)
    sheet = get_system(system).example_sheet
    heroes = [table.create_character(user, name, sheet) for user, name in zip((table.alice, table.bob), names)]
    table.command(table.gm, {"type": "start_session"})
    table.command(table.gm, {"type": "apply_condition", "character": heroes[on].id, "name": condition,
                             "duration": "scene", "modifier": modifier})
    return (table, *heroes)


def _replays(table) -> None:
    table.command(table.gm, {"type": "end_session"})
    report = verify_session(type(table.campaign).objects.get(pk=table.campaign.pk), 1)
    assert report.ok, report.problems


def test_an_iterated_contest_reads_the_actor_s_penalty_dice_and_replays_the_same(table_for):
    """Tale's iterated round keeps the actor's penalty dice out (docs/rules.md, Conditions 6)."""
    tale, ana = _in_session(table_for, "tale", ("Ana",), "Winded", 2)
    tale.command(tale.alice, {"type": "start_contest", "character": ana.id, "characteristics": ["clever", "deft"],
                              "vs_pool": 4})
    rolled = tale.command(tale.alice, {"type": "iterated_round", "character": ana.id}).events[0]
    assert (len(rolled.payload["dice"]["mine"]), rolled.payload["sitting_out"]) == (4, {"mine": 2, "theirs": 0})
    _replays(tale)


def test_a_contest_round_reads_the_opponent_s_penalty_dice_as_its_sheet_holds_them(table_for):
    """A Tale contest against another character: the round fills the opponent's conditions' penalty
    dice into the action the log records (docs/rules.md, Conditions 7); the opponent's side reads the
    round mirrored; a player can't give them herself."""
    tale, ana, ben = _in_session(table_for, "tale", ("Ana", "Ben"), "Winded", 2, on=1)
    tale.command(tale.alice, {"type": "start_contest", "character": ana.id, "characteristics": ["clever", "deft"],
                              "vs_character": ben.id, "vs_skill": "Ride"})
    with pytest.raises(ActionError, match="their_conditions"):
        tale.command(tale.alice, {"type": "iterated_round", "character": ana.id, "their_conditions": 0})
    rolled = tale.command(tale.alice, {"type": "iterated_round", "character": ana.id}).events[0]
    assert rolled.payload["filled"] == {"their_conditions": 2}  # what the server read, for the replay
    assert rolled.payload["sitting_out"] == {"mine": 0, "theirs": 2}
    assert rolled.payload["sides"][str(ben.id)]["sitting_out"] == {"mine": 2, "theirs": 0}
    _replays(tale)


def test_a_passive_side_s_conditions_are_filled_into_the_check_and_replay_the_same(table_for):
    """WYRM's opposed check naming its opponent fills the passive side's conditions into the action
    the log records (docs/rules.md, Conditions 5)."""
    wyrm, thief, guard = _in_session(table_for, "wyrm", ("Thief", "Guard"), "Drowsy", 2, on=1)
    checked = wyrm.command(wyrm.alice, {"type": "check", "character": thief.id, "attribute": "rogue",
                                        "skills": ["Stealth"], "vs_character": guard.id, "vs_attribute": "mage",
                                        "vs_skills": ["Awareness"]}).events[0]
    p = checked.payload
    assert p["opposition"]["conditions"] == 2 and p["dl"] == p["dl_base"] - 2
    _replays(wyrm)


def test_an_opposed_test_reads_the_opponent_s_conditions_and_replays_the_same(table_for):
    """MdT: both roll, each side's conditions on its own pool (docs/rules.md, Conditions 8)."""
    mdt, lia, rui = _in_session(table_for, "mdt", ("Lia", "Rui"), "Ferido", -1, on=1)
    rolled = mdt.command(mdt.alice, {"type": "opposed_test", "character": lia.id, "attribute": "presence",
                                     "vs_character": rui.id}).events[0]
    assert (rolled.payload["vs_conditions"], rolled.payload["vs_pool"]) == (-1, 3)  # 1 + Presence 3, less 1
    _replays(mdt)
