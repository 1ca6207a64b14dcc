"""Fights of several sides at the table (campaign/actions/fights.py over rules/fights.py): two against
one, a group race; each side chosen by whoever controls it, an NPC's choice sealed until its round."""

from __future__ import annotations

import pytest

from campaign.actions import ActionError, Forbidden, Refused
from campaign.actions.fights import current_fight
from campaign.eventlog import events_after, verify_chain
from campaign.fairdice import verify_session
from campaign.models import Character, Event
from campaign.projections import rebuild
from campaign.visibility import Viewer, for_viewer
from rules import get_system
from rules.base import ScriptedDice


def state(character):
    character.projection.refresh_from_db()
    return character.projection.state


def npc(table, name="Bandit", rating=3):
    result = table.command(table.gm, {"type": "create_character", "npc": True, "name": name, "shown": "full",
                                      "quick": {"rating": rating}})
    return Character.objects.get(pk=result.events[0].character_id)


def seen_by(table, user, seq):
    viewer = Viewer.of(table.membership(user))
    events, revealed = events_after(table.campaign.id, seq - 1, 1)
    return for_viewer(events[0], viewer, revealed)


def tale_two_against_one(table_for):
    table = table_for("tale")
    sheet = get_system("tale").example_sheet
    ana = table.create_character(table.alice, "Ana", sheet)
    ben = table.create_character(table.bob, "Ben", sheet)
    bandit = npc(table)
    return table, ana, ben, bandit


def test_tale_two_against_one_each_side_chosen_by_its_controller_the_npcs_sealed(table_for):
    table, ana, ben, bandit = tale_two_against_one(table_for)
    start = table.command(table.gm, {"type": "start_fight", "label": "Ambush at the ford", "sides": [
        {"character": ana.id, "team": "heroes"}, {"character": ben.id, "team": "heroes"},
        {"character": bandit.id, "team": "bandits"}]}).events[0]
    assert (start.type, start.character_id, start.visibility) == ("fight_started", None, "public")
    pools = {s: e["dice"] for s, e in start.payload["fight"]["entries"].items()}
    assert state(ana)["fight"]["dice"] == pools[str(ana.id)] and state(bandit)["fight"]["label"] == "Ambush at the ford"
    # A player chooses only for her own character: not the GM's NPC, not her friend's.
    with pytest.raises(Forbidden):
        table.command(table.alice, {"type": "choose_in_fight", "character": bandit.id, "attack": {str(ana.id): 1}})
    with pytest.raises(Forbidden):
        table.command(table.alice, {"type": "choose_in_fight", "character": ben.id, "attack": {str(bandit.id): 1}})
    with pytest.raises(Forbidden):
        table.command(table.alice, {"type": "end_fight"})
    with pytest.raises(ActionError, match="Ana has only .*to portion out"):
        table.command(table.alice, {"type": "choose_in_fight", "character": ana.id,
                                    "attack": {str(bandit.id): 30}})
    bandit_dice = pools[str(bandit.id)]
    chosen = table.command(table.gm, {"type": "choose_in_fight", "character": bandit.id,
                                      "attack": {str(ana.id): 2}, "defence": bandit_dice - 2}).events[0]
    assert (chosen.type, chosen.visibility) == ("fight_choice_made", "gm")
    assert "payload" not in seen_by(table, table.alice, chosen.seq) or \
        "choice" not in seen_by(table, table.alice, chosen.seq)["payload"]
    mine = table.command(table.alice, {"type": "choose_in_fight", "character": ana.id,
                                       "attack": {str(bandit.id): 3}, "defence": 2}).events[0]
    assert mine.visibility == "secret" and seen_by(table, table.alice, mine.seq)["payload"]["choice"]["defence"] == 2
    assert "choice" not in (seen_by(table, table.bob, mine.seq).get("payload") or {})
    with pytest.raises(Refused, match="already chosen"):
        table.command(table.alice, {"type": "choose_in_fight", "character": ana.id, "attack": {str(bandit.id): 1}})
    # Ben's choice completes the round: it rolls, in public, quoting every side's choice.
    # Dice: Ana's attack (3), Ben's (2), the bandit's (2); Ana's defence (2), the bandit's (defence dice).
    faces = [6, 6, 5] + [1, 1] + [2, 2] + [5, 5] + [4, 3, 2, 1, 1][:bandit_dice - 2]
    result = table.command(table.bob, {"type": "choose_in_fight", "character": ben.id,
                                       "attack": {str(bandit.id): 2}}, dice=ScriptedDice(faces))
    rolled = result.events[0]
    assert (rolled.type, rolled.visibility, rolled.character_id) == ("fight_round_rolled", "public", None)
    assert rolled.payload["choices"][str(bandit.id)] == {"attack": {str(ana.id): 2}, "defence": bandit_dice - 2}
    exchanges = {(x["by"], x["against"]): x for x in rolled.payload["result"]["exchanges"]}
    assert set(exchanges) == {(str(ana.id), str(bandit.id)), (str(ben.id), str(bandit.id)),
                              (str(bandit.id), str(ana.id))}
    assert exchanges[str(ben.id), str(bandit.id)]["outcome"] == "miss"
    assert set(exchanges[str(ana.id), str(bandit.id)]["odds"]) == {"hit", "even", "miss"}
    after = rolled.payload["entries"]
    assert state(bandit)["fight"]["dice"] == after[str(bandit.id)]["dice"] < bandit_dice
    assert state(ben)["fight"]["penalty"] == 1  # his miss: 1D less next round
    assert current_fight(table.campaign)["round"] == 1
    # The GM ends it; the damage each side took waits to be spread.
    taken = after[str(bandit.id)]["damage_taken"]
    table.command(table.gm, {"type": "end_fight"})
    assert current_fight(table.campaign) is None
    assert state(bandit)["fight"] is None and state(bandit)["unassigned_damage"] == taken
    with pytest.raises(Refused, match="No fight"):
        table.command(table.alice, {"type": "choose_in_fight", "character": ana.id, "attack": {}})
    assert rebuild(table.campaign, check=True) == []
    assert verify_chain(type(table.campaign).objects.get(pk=table.campaign.pk)).ok


def test_a_fight_needs_two_teams_and_leaves_hidden_npcs_out(table_for):
    table, ana, ben, bandit = tale_two_against_one(table_for)
    for sides in ([5, {"character": ana.id}], "all", [{"character": ana.id}]):  # a 400 with words, never a 500
        with pytest.raises(ActionError, match="sides"):
            table.command(table.gm, {"type": "start_fight", "sides": sides})
    with pytest.raises(ActionError, match="two teams"):
        table.command(table.gm, {"type": "start_fight", "sides": [{"character": ana.id, "team": "x"},
                                                                 {"character": ben.id, "team": "x"}]})
    table.command(table.gm, {"type": "show_npc", "character": bandit.id, "shown": "hidden"})
    with pytest.raises(Refused, match="show it by name first"):
        table.command(table.gm, {"type": "start_fight", "sides": [{"character": ana.id},
                                                                 {"character": bandit.id}]})
    with pytest.raises(Forbidden):
        table.command(table.alice, {"type": "start_fight", "sides": [{"character": ana.id},
                                                                    {"character": ben.id}]})


def test_a_round_of_a_fight_verifies_from_the_seed(table_for):
    """verify_dice replays a round from the action and what it read (``filled``)."""
    table, ana, ben, bandit = tale_two_against_one(table_for)
    table.command(table.gm, {"type": "start_session"})
    table.command(table.gm, {"type": "start_fight", "sides": [{"character": ana.id, "team": "heroes"},
                                                              {"character": ben.id, "team": "heroes"},
                                                              {"character": bandit.id, "team": "bandits"}]})
    table.command(table.gm, {"type": "choose_in_fight", "character": bandit.id, "attack": {str(ben.id): 2},
                             "defence": 2})
    table.command(table.alice, {"type": "choose_in_fight", "character": ana.id, "attack": {str(bandit.id): 2},
                                "defence": 1})
    table.command(table.bob, {"type": "choose_in_fight", "character": ben.id, "attack": {str(bandit.id): 2},
                              "defence": 2})
    table.command(table.gm, {"type": "end_session"})
    report = verify_session(table.campaign, 1)
    assert report.ok, report.problems
    assert report.events >= 1


def test_mdt_group_race_three_sides_the_one_ahead_wins(table_for):
    table = table_for("mdt")
    sheet = get_system("mdt").example_sheet
    ana = table.create_character(table.alice, "Ana", sheet)
    ben = table.create_character(table.bob, "Ben", sheet)
    ghoul = npc(table, "Ghoul", 2)
    sides = [{"character": c.id, "attribute": "dexterity"} for c in (ana, ben, ghoul)]
    with pytest.raises(ActionError, match="target"):
        table.command(table.gm, {"type": "start_fight", "kind": "race", "sides": sides})
    started = table.command(table.gm, {"type": "start_fight", "kind": "race", "target": 2, "label": "To the gate",
                                       "sides": sides}).events[0]
    pools = {s: e["pool"] for s, e in started.payload["fight"]["entries"].items()}
    table.command(table.gm, {"type": "choose_in_fight", "character": ghoul.id})
    table.command(table.alice, {"type": "choose_in_fight", "character": ana.id})
    # Ana 7 (1), Ben 10 (2), the ghoul 8 (1); the rest of each pool fails.
    faces = [7] + [1] * (pools[str(ana.id)] - 1) + [10] + [2] * (pools[str(ben.id)] - 1) + [8] + \
        [3] * (pools[str(ghoul.id)] - 1)
    events = table.command(table.bob, {"type": "choose_in_fight", "character": ben.id},
                           dice=ScriptedDice(faces)).events
    assert [e.type for e in events] == ["fight_round_rolled", "fight_ended"]
    assert events[0].payload["result"]["totals"] == {str(ana.id): 1, str(ben.id): 2, str(ghoul.id): 1}
    assert events[1].payload["winner"] == str(ben.id)  # each side its own team
    odds = events[0].payload["result"]["odds"]
    assert set(odds) == {str(ana.id), str(ben.id), str(ghoul.id), "continue"}
    assert state(ben)["fight"] is None and current_fight(table.campaign) is None


def test_wyrm_two_against_one_each_acts_against_the_ogre(table_for):
    table = table_for("wyrm")
    sheet = get_system("wyrm").example_sheet
    ana = table.create_character(table.alice, "Ana", sheet)
    ben = table.create_character(table.bob, "Ben", sheet)
    ogre = npc(table, "Ogre", 2)
    table.command(table.gm, {"type": "start_fight", "sides": [
        {"character": ana.id, "attribute": "warrior", "team": "heroes"},
        {"character": ben.id, "attribute": "rogue", "team": "heroes"},
        {"character": ogre.id, "attribute": "warrior", "team": "ogre"}]})
    with pytest.raises(ActionError, match="against"):
        table.command(table.alice, {"type": "choose_in_fight", "character": ana.id, "against": [ana.id]})
    table.command(table.gm, {"type": "choose_in_fight", "character": ogre.id, "against": []})
    table.command(table.alice, {"type": "choose_in_fight", "character": ana.id, "against": [ogre.id]})
    rolled = table.command(table.bob, {"type": "choose_in_fight", "character": ben.id, "against": [ogre.id]},
                           dice=ScriptedDice([3, 4, 2, 5])).events[0]
    result = rolled.payload["result"]
    assert [(x["by"], x["against"]) for x in result["exchanges"]] == [(str(ana.id), str(ogre.id)),
                                                                     (str(ben.id), str(ogre.id))]
    assert all(x["passive"]["dice"] for x in result["exchanges"])  # passive_rolls "each": one roll per check
    assert current_fight(table.campaign)["round"] == 1  # WYRM's fight ends when the GM says
