"""The GM's tools for a whole evening: campaign settings as events, sheet adjustments, the
creation-limit override, NPCs shown as the GM chooses, encounters and turn order."""

from __future__ import annotations

import json

import pytest

from campaign.actions import ActionError, Forbidden, NotFound, Refused, access_character_for_reading
from campaign.actions.campaign_options import current_options
from campaign.actions.encounters import current_encounter
from campaign.eventlog import events_after, verify_chain
from campaign.models import Character, Event
from campaign.projections import rebuild
from campaign.visibility import Viewer, for_viewer
from rules import get_system

CREATION_OK = get_system("tote").example_sheet


def state(character):
    character.projection.refresh_from_db()
    return character.projection.state


def seen_by(table, user):
    """Every event as ``user`` receives it (the one visibility filter)."""
    viewer = Viewer.of(table.membership(user))
    events, revealed = events_after(table.campaign.id, 0, 10_000)
    return [for_viewer(e, viewer, revealed) for e in events]


# --- campaign settings ---------------------------------------------------------------------------

def test_a_settings_change_is_one_event_every_character_folds(table):
    hero = table.create_character(table.alice, "Ayasha", CREATION_OK)
    other = table.create_character(table.bob, "Bo", CREATION_OK)
    result = table.command(table.gm, {"type": "configure_campaign", "settings": {"resolve_max": 7},
                                      "reason": "heroic campaign"})
    event = result.events[0]
    assert (event.type, event.character_id, event.visibility) == ("campaign_configured", None, "public")
    assert event.payload["changed"] == {"resolve_max": {"from": 5, "to": 7}}
    assert state(hero)["sheet"]["options"]["resolve_max"] == 7 == state(other)["sheet"]["options"]["resolve_max"]
    # A character created later starts with the campaign's settings, whatever its sheet said.
    late = table.create_character(table.alice, "Late", {**CREATION_OK, "options": {"resolve_max": 2}})
    assert state(late)["sheet"]["options"]["resolve_max"] == 7
    assert current_options(table.campaign)["resolve_max"] == 7
    assert rebuild(table.campaign, check=True) == []


def test_settings_changes_are_the_gm_s_and_must_change_something(table):
    head = table.campaign.last_seq
    with pytest.raises(Forbidden):
        table.command(table.alice, {"type": "configure_campaign", "settings": {"resolve_max": 7}})
    with pytest.raises(ActionError, match="no setting 'hp'"):
        table.command(table.gm, {"type": "configure_campaign", "settings": {"hp": 7}})
    with pytest.raises(ActionError, match="from 1 to 20"):
        table.command(table.gm, {"type": "configure_campaign", "settings": {"resolve_max": 99}})
    with pytest.raises(Refused, match="nothing changed"):
        table.command(table.gm, {"type": "configure_campaign", "settings": {"resolve_max": 5}})
    with pytest.raises(Refused, match="can't be voided"):
        seq = table.command(table.gm, {"type": "configure_campaign", "settings": {"resolve_max": 6}}).events[0].seq
        table.command(table.gm, {"type": "void", "seq": seq, "reason": "oops"})
    assert Event.objects.filter(campaign=table.campaign, seq__gt=head).count() == 1


def test_an_older_log_s_sheet_options_are_the_campaign_s_until_the_gm_changes_one(table):
    # Before settings existed a sheet carried its options: read as played, never rewritten.
    hero = table.create_character(table.alice, "Old", {**CREATION_OK, "options": {"resolve_max": 3}})
    stored = Event.objects.get(character=hero, type="character_created").payload["sheet"]["options"]
    assert current_options(table.campaign)["resolve_max"] == 3 == stored["resolve_max"]
    table.command(table.gm, {"type": "configure_campaign", "settings": {"injury_track": [4, 2, 0]}})
    assert state(hero)["sheet"]["options"]["resolve_max"] == 3  # carried over from the upcast, not reset
    assert state(hero)["sheet"]["options"]["injury_track"] == [4, 2, 0]


def test_the_settings_page_shows_and_changes_the_rules_settings(table, client):
    client.force_login(table.gm)
    page = client.get(f"/campaigns/{table.campaign.slug}/settings/")
    assert b"Resolve maximum" in page.content and b'name="opt:injury_track" value="5, 4, 3, 2, 1, 0"' in page.content
    client.post(f"/campaigns/{table.campaign.slug}/settings/", {
        "do": "configure_campaign", "opt:resolve_max": "6", "opt:injury_track": "5, 4, 3, 2, 1, 0",
        "opt:effect_test.mode": "count", "reason": "we like counting"})
    event = Event.objects.filter(campaign=table.campaign, type="campaign_configured").get()
    assert event.payload["changed"] == {"resolve_max": {"from": 5, "to": 6},
                                        "effect_test.mode": {"from": "sum", "to": "count"}}
    assert event.payload["reason"] == "we like counting"
    bad = client.post(f"/campaigns/{table.campaign.slug}/settings/", {
        "do": "configure_campaign", "opt:injury_track": "5, x"}, follow=True)
    assert b"whole numbers only" in bad.content


# --- the GM's adjustments and the creation-limit override ---------------------------------------

def test_an_adjustment_stores_its_diff_and_reason_and_folds(table):
    hero = table.create_character(table.alice, "Ayasha", CREATION_OK)
    result = table.command(table.gm, {"type": "adjust_sheet", "character": hero.id, "reason": "lost an eye",
                                      "changes": {"sheet.skills.Shoot": 0, "resolve": 1}})
    event = result.events[0]
    assert event.payload == {"reason": "lost an eye", "changes": [
        {"path": "sheet.skills.Shoot", "from": 1, "to": 0}, {"path": "resolve", "from": 3, "to": 1}]}
    assert state(hero)["sheet"]["skills"]["Shoot"] == 0 and state(hero)["resolve"] == 1
    from campaign.audit import describe
    from campaign.eventlog import serialize_event
    # The table's sentence (rules/common.py): a path without its "sheet.", the reason quoted.
    assert describe(serialize_event(event)) == "adjusted the sheet: skills.Shoot 1 → 0, resolve 3 → 1 “lost an eye”"
    with pytest.raises(ActionError, match="does not fit the sheet"):
        table.command(table.gm, {"type": "adjust_sheet", "character": hero.id, "reason": "r",
                                 "changes": {"sheet.skills.Shoot": 9}})
    with pytest.raises(ActionError, match="Say why"):
        table.command(table.gm, {"type": "adjust_sheet", "character": hero.id, "changes": {"resolve": 2}})
    with pytest.raises(Forbidden):
        table.command(table.alice, {"type": "adjust_sheet", "character": hero.id, "reason": "r",
                                    "changes": {"resolve": 5}})
    assert rebuild(table.campaign, check=True) == []


def test_the_gm_may_override_creation_limits_and_the_character_says_so(table):
    veteran = {**CREATION_OK, "skills": {**CREATION_OK["skills"], "Strike": 5}}
    with pytest.raises(ActionError, match="at character creation"):
        table.create_character(table.alice, "Too good", veteran)
    with pytest.raises(Forbidden):
        table.command(table.alice, {"type": "create_character", "name": "V", "sheet": veteran, "override_limits": True})
    result = table.command(table.gm, {"type": "create_character", "name": "Veteran", "sheet": veteran,
                                      "override_limits": True, "owner": "alice"})
    assert result.events[0].payload["limits_overridden"] is True
    character = Character.objects.get(pk=result.events[0].character_id)
    assert state(character)["limits_overridden"] is True and state(character)["sheet"]["skills"]["Strike"] == 5


# --- NPCs -------------------------------------------------------------------------------------------

def make_npc(table, name="Bandit", shown="hidden", **extra):
    result = table.command(table.gm, {"type": "create_character", "npc": True, "name": name, "shown": shown,
                                      "quick": {"template": "veteran"}, **extra})
    return Character.objects.get(pk=result.events[0].character_id)


def test_a_hidden_npc_never_reaches_a_player(table, client):
    npc = make_npc(table)
    table.command(table.gm, {"type": "skill_test", "character": npc.id, "skill": "Strike", "target": 8})
    roll = table.command(table.gm, {"type": "roll", "character": npc.id, "notation": "2d6"}).events[0]
    table.command(table.gm, {"type": "void", "seq": roll.seq, "reason": "a slip"})  # the void names it too
    assert npc.owner_id == table.gm.id and npc.npc and state(npc)["limits_overridden"] is True
    for user in (table.alice, table.watcher):
        seen = seen_by(table, user)
        assert not any("Bandit" in str(e) for e in seen)  # not its name, sheet, nor its character id
        assert not any(e.get("character") == npc.id for e in seen)
        with pytest.raises(NotFound, match=f"no character {npc.id}"):
            access_character_for_reading(table.membership(user), npc.id)
    client.force_login(table.alice)
    page = client.get(f"/campaigns/{table.campaign.slug}/")
    assert b"Bandit" not in page.content
    assert client.get(f"/api/campaigns/{table.campaign.slug}/characters/{npc.id}").status_code == 404
    assert b"Bandit" in seen_by(table, table.gm).__str__().encode()


def test_a_name_only_npc_shows_its_name_never_its_sheet_and_can_be_shown_fully(table, client):
    npc = make_npc(table, shown="name")
    client.force_login(table.alice)
    page = client.get(f"/campaigns/{table.campaign.slug}/")
    assert b"Bandit" in page.content
    assert client.get(f"/api/campaigns/{table.campaign.slug}/characters/{npc.id}").status_code == 404
    created = next(e for e in seen_by(table, table.alice) if e["seq"] == Event.objects.get(
        character=npc, type="character_created").seq)
    assert created["type"] == "sealed"  # the sheet is in it
    shown = table.command(table.gm, {"type": "show_npc", "character": npc.id, "shown": "full"}).events[0]
    assert shown.visibility == "public" and shown.payload["shown"] == "full"
    assert client.get(f"/api/campaigns/{table.campaign.slug}/characters/{npc.id}").json()["state"]["sheet"]
    assert table.command(table.gm, {"type": "roll", "character": npc.id, "notation": "1d6"}).events[0].visibility == "public"
    with pytest.raises(Refused, match="player's character"):
        table.command(table.gm, {"type": "show_npc", "character": table.create_character(table.alice, "A", CREATION_OK).id,
                                 "shown": "hidden"})


def test_the_characters_list_is_the_table_pages_hidden_npcs_for_the_gm_only_and_no_sheets(table, client):
    """``GET .../characters``: what the table page lists on load (its tabs), which the page asks for
    after a sealed event (the GM may have made or hidden an NPC): never more than a reload shows."""
    hero = table.create_character(table.alice, "Ayasha", CREATION_OK)
    bandit = make_npc(table, "Bandit", shown="name")
    make_npc(table, "Innkeeper", shown="hidden")
    url = f"/api/campaigns/{table.campaign.slug}/characters"
    table.campaign.refresh_from_db()
    for user in (table.alice, table.watcher):
        client.force_login(user)
        body = client.get(url).json()
        assert body == {"head": table.campaign.last_seq, "characters": [
            {"id": hero.id, "name": "Ayasha", "owner": "alice", "npc": False, "shown": "full"},
            {"id": bandit.id, "name": "Bandit", "owner": "gm", "npc": True, "shown": "name"}]}
        page = client.get(f"/campaigns/{table.campaign.slug}/").context["table_data"]["characters"]
        assert [{k: c[k] for k in ("id", "name", "owner", "npc", "shown")} for c in page] == body["characters"]
    client.force_login(table.gm)
    assert [c["name"] for c in client.get(url).json()["characters"]] == ["Ayasha", "Bandit", "Innkeeper"]
    client.force_login(table.outsider)
    assert client.get(url).status_code == 404


def test_only_the_gm_makes_npcs(table):
    with pytest.raises(Forbidden):
        table.command(table.alice, {"type": "create_character", "npc": True, "name": "X", "quick": {"rating": 2}})
    with pytest.raises(ActionError, match="quick.template"):
        table.command(table.gm, {"type": "create_character", "npc": True, "name": "X", "quick": {"template": "god"}})


# --- encounters and turn order -----------------------------------------------------------------------

def test_an_encounter_orders_turns_and_advances_them(table):
    alice = table.create_character(table.alice, "Ayasha", CREATION_OK)
    bob = table.create_character(table.bob, "Bo", CREATION_OK)
    npc = make_npc(table)
    table.command(table.gm, {"type": "start_encounter", "name": "Ambush"})
    table.command(table.gm, {"type": "add_combatant", "character": alice.id})
    table.command(table.gm, {"type": "add_combatant", "character": bob.id})
    with pytest.raises(Refused, match="show it by name first"):
        table.command(table.gm, {"type": "add_combatant", "character": npc.id})
    table.command(table.gm, {"type": "show_npc", "character": npc.id, "shown": "name"})
    table.command(table.gm, {"type": "add_combatant", "character": npc.id})
    with pytest.raises(Refused, match="in the running encounter"):
        table.command(table.gm, {"type": "show_npc", "character": npc.id, "shown": "hidden"})
    table.command(table.gm, {"type": "set_turn_order", "order": [npc.id, alice.id, bob.id]})
    first = table.command(table.gm, {"type": "advance_turn"}).events[0]
    assert first.payload == {"round": 1, "turn": 0, "acting": npc.id, "name": "Bandit"}
    with pytest.raises(Forbidden):
        table.command(table.alice, {"type": "advance_turn"})  # not Ayasha's turn yet
    table.command(table.gm, {"type": "advance_turn"})
    table.command(table.alice, {"type": "advance_turn"})  # Ayasha ends her turn
    assert current_encounter(table.campaign)["acting"] == bob.id
    table.command(table.bob, {"type": "advance_turn"})
    assert current_encounter(table.campaign)["round"] == 2 and current_encounter(table.campaign)["acting"] == npc.id
    with pytest.raises(ActionError, match="exactly once"):
        table.command(table.gm, {"type": "set_turn_order", "order": [npc.id, alice.id]})
    table.command(table.gm, {"type": "end_encounter"})
    assert current_encounter(table.campaign) is None
    with pytest.raises(Refused, match="No encounter"):
        table.command(table.gm, {"type": "advance_turn"})
    assert all(e.visibility == "public" for e in Event.objects.filter(campaign=table.campaign, type__in=(
        "encounter_started", "combatant_added", "turn_order_set", "turn_advanced", "encounter_ended")))
    assert verify_chain(type(table.campaign).objects.get(pk=table.campaign.pk)).ok


# --- contests naming two characters ------------------------------------------------------------------


def test_hidden_npcs_act_in_the_gms_turn_a_slot_that_says_neither_who_nor_how_many(table):
    alice = table.create_character(table.alice, "Ayasha", CREATION_OK)
    spy, ghost = make_npc(table, "Spy"), make_npc(table, "Ghost")
    table.command(table.gm, {"type": "start_encounter", "name": "Night watch"})
    table.command(table.gm, {"type": "add_combatant", "character": alice.id})
    with pytest.raises(Refused) as refused:
        table.command(table.gm, {"type": "add_combatant", "character": spy.id})
    assert "GM's turn" in refused.value.message and "_" not in refused.value.message  # words, no command name
    slot = table.command(table.gm, {"type": "add_combatant", "gm_turn": True}).events[0]
    assert (slot.visibility, slot.payload) == ("public", {"character": 0, "name": "GM's turn"})
    with pytest.raises(Refused, match="already in the encounter"):
        table.command(table.gm, {"type": "add_combatant", "gm_turn": True})
    table.command(table.gm, {"type": "set_turn_order", "order": [0, alice.id]})
    gm_turn = table.command(table.gm, {"type": "advance_turn"}).events[0]
    assert gm_turn.payload == {"round": 1, "turn": 0, "acting": 0, "name": "the GM"}
    with pytest.raises(Forbidden):
        table.command(table.alice, {"type": "advance_turn"})  # the GM's turn is hers to end
    table.command(table.gm, {"type": "skill_test", "character": ghost.id, "skill": "Sneak", "target": 8})
    table.command(table.gm, {"type": "advance_turn"})
    assert current_encounter(table.campaign)["acting"] == alice.id
    # Nothing the players receive names the hidden NPCs or counts them.
    for event in seen_by(table, table.alice):
        said = json.dumps(event)
        assert "Spy" not in said and "Ghost" not in said and str(spy.id) not in said and str(ghost.id) not in said

def test_a_tale_combat_runs_on_both_sides_and_the_shared_opponent_keeps_its_wounds(table_for):
    from rules import ScriptedDice

    table = table_for("tale")
    hero = table.create_character(table.alice, "Hero", get_system("tale").example_sheet)
    bandit = make_npc(table, shown="name")  # every characteristic 3: combat pool brawn 3 + skill 3
    with pytest.raises(Forbidden, match="Only the GM can pit"):
        table.command(table.alice, {"type": "start_combat", "character": hero.id, "vs_character": bandit.id})
    start = table.command(table.gm, {"type": "start_combat", "character": hero.id, "vs_character": bandit.id})
    assert start.events[0].visibility == "public"
    assert state(hero)["contest"]["theirs"] == 6 and state(hero)["contest"]["opponent"] == bandit.id
    assert state(bandit)["contest"]["mine"] == 6 and state(bandit)["contest"]["theirs"] == 4 + 3
    assert state(bandit)["contest"]["opponent"] == hero.id
    # My attack 6,6,6 against their defence 1,1,1: three of theirs eliminated; their attack 1 misses my 6.
    faces = [6, 6, 6] + [6] + [1] + [1, 1, 1]
    with pytest.raises(Forbidden, match="Bandit's side is the GM's to choose"):
        table.command(table.alice, {"type": "combat_round", "character": hero.id, "attack": 3, "defence": 1,
                                    "their_attack": 1, "their_defence": 3})
    table.command(table.gm, {"type": "combat_round", "character": hero.id, "attack": 3, "defence": 1,
                             "their_attack": 1, "their_defence": 3}, dice=ScriptedDice(faces))
    assert state(hero)["contest"]["damage_dealt"] == 3 == state(bandit)["contest"]["damage_taken"]
    assert state(bandit)["contest"]["mine"] == 3 and state(bandit)["contest"]["penalties"][0]["side"] == "mine"
    with pytest.raises(Forbidden, match="the GM's to choose"):
        table.command(table.alice, {"type": "end_contest", "character": hero.id, "winner": "mine"})
    table.command(table.gm, {"type": "end_contest", "character": hero.id, "winner": "mine"})
    assert state(hero)["contest"] is None is state(bandit)["contest"]
    assert state(bandit)["unassigned_damage"] == 3 and state(hero)["unassigned_damage"] == 0
    # The next fighter meets the wounded bandit once its damage is spread.
    friend = table.create_character(table.bob, "Friend", get_system("tale").example_sheet)
    with pytest.raises(Refused, match="spread its damage"):
        table.command(table.gm, {"type": "start_combat", "character": friend.id, "vs_character": bandit.id})
    table.command(table.gm, {"type": "assign_damage", "character": bandit.id, "damage": {"brawn": 2, "skill": 1}})
    table.command(table.gm, {"type": "start_combat", "character": friend.id, "vs_character": bandit.id})
    assert state(friend)["contest"]["theirs"] == 3
    with pytest.raises(Refused, match="can't be voided"):
        table.command(table.gm, {"type": "void", "seq": start.events[0].seq, "reason": "no"})
    assert rebuild(table.campaign, check=True) == []


def test_an_mdt_race_between_characters_runs_on_both_sides(table_for):
    from rules import ScriptedDice

    table = table_for("mdt")
    hero = table.create_character(table.alice, "Hero", get_system("mdt").example_sheet)  # presence 3: 4 dice
    rival = table.create_character(table.bob, "Rival", get_system("mdt").example_sheet)  # wits 2: 3 dice
    table.command(table.gm, {"type": "start_contest", "character": hero.id, "attribute": "presence",
                             "vs_character": rival.id, "vs_attribute": "wits", "target": 4, "label": "the chase"})
    assert {k: state(hero)["contest"][k] for k in ("vs_pool", "opponent", "attribute")} == {
        "vs_pool": 3, "opponent": rival.id, "attribute": "presence"}
    assert {k: state(rival)["contest"][k] for k in ("vs_pool", "opponent", "attribute", "label")} == {
        "vs_pool": 4, "opponent": hero.id, "attribute": "wits", "label": "the chase"}
    with pytest.raises(Refused, match="already in a race"):
        friend = table.create_character(table.bob, "Friend", get_system("mdt").example_sheet)
        table.command(table.gm, {"type": "start_contest", "character": friend.id, "attribute": "wits",
                                 "vs_character": rival.id, "target": 2})
    # Alice's round: her 10,1,1,1 (2 successes) against Rival's 8,1,1 (1). One event, both states fold it.
    first = table.command(table.alice, {"type": "contest_round", "character": hero.id},
                          dice=ScriptedDice([10, 1, 1, 1, 8, 1, 1])).events
    assert len(first) == 1 and first[0].payload["sides"][str(rival.id)]["mine"] == 1
    assert (state(hero)["contest"]["mine"], state(hero)["contest"]["theirs"]) == (2, 1)
    assert (state(rival)["contest"]["mine"], state(rival)["contest"]["theirs"]) == (1, 2)
    # Bob answers from Rival's side: his 10,10,1 (4, 5 in all) against Hero's 1,1,1,1. Rival wins, Hero loses.
    second = table.command(table.bob, {"type": "contest_round", "character": rival.id},
                           dice=ScriptedDice([10, 10, 1, 1, 1, 1, 1])).events[0]
    assert second.character_id == rival.id and second.payload["outcome"] == "win"
    assert second.payload["sides"][str(hero.id)]["outcome"] == "loss"
    assert state(hero)["contest"] is None is state(rival)["contest"]
    # A race ended early ends on both sides too.
    table.command(table.gm, {"type": "start_contest", "character": rival.id, "attribute": "wits",
                             "vs_character": hero.id, "target": 9})
    assert state(hero)["contest"]["opponent"] == rival.id
    table.command(table.alice, {"type": "end_contest", "character": hero.id, "reason": "gave up"})
    assert state(hero)["contest"] is None is state(rival)["contest"]
    assert rebuild(table.campaign, check=True) == []


def test_an_mdt_race_names_each_side_on_the_other_s_sheet_unless_the_npc_is_hidden(table_for):
    # A play-test's find: the opponent's sheet showed the race against "Them".
    table = table_for("mdt")
    hero = table.create_character(table.alice, "Hero", get_system("mdt").example_sheet)
    rival = table.create_character(table.bob, "Rival", get_system("mdt").example_sheet)
    table.command(table.gm, {"type": "start_contest", "character": hero.id, "attribute": "wits",
                             "vs_character": rival.id, "opponent": "Rival", "target": 3})  # as the table sends it
    assert state(hero)["contest"]["opponent_name"] == "Rival"
    assert state(rival)["contest"]["opponent_name"] == "Hero"
    table.command(table.gm, {"type": "end_contest", "character": hero.id})
    # A hidden NPC's race is the players' to see (it names their character), its name is not.
    npc = make_npc(table, "Shadow")
    table.command(table.gm, {"type": "start_contest", "character": npc.id, "attribute": "wits",
                             "vs_character": hero.id, "opponent": "Hero", "target": 3})
    assert "opponent_name" not in state(hero)["contest"]
    assert "Shadow" not in json.dumps([e for e in seen_by(table, table.alice) if e])
    assert rebuild(table.campaign, check=True) == []


def test_a_player_against_player_check_reads_both_sheets(table_for):
    from rules import ScriptedDice

    table = table_for("wyrm")
    hero = table.create_character(table.alice, "Hero", get_system("wyrm").example_sheet)
    rival = table.create_character(table.bob, "Rival", {"attributes": {"warrior": 4, "rogue": 0, "mage": 5},
                                                        "skills": [{"name": "Awareness", "attribute": "mage"}]})
    table.command(table.gm, {"type": "start_session"})  # a session's commands record their action for replay
    event = table.command(table.alice, {"type": "check", "character": hero.id, "attribute": "rogue",
                                        "vs_character": rival.id, "vs_attribute": "mage", "vs_skills": ["Awareness"]},
                          dice=ScriptedDice([3, 4])).events[0]
    opposition = event.payload["opposition"]
    assert (opposition["attribute"], opposition["skill_bonus"]) == (5, 2)  # read from Rival's sheet
    assert event.payload["action"]["vs"] == {"attribute": 5, "skills": 1, "static": False}  # what a replay reads
    with pytest.raises(ActionError, match="does not know"):
        table.command(table.alice, {"type": "check", "character": hero.id, "attribute": "rogue",
                                    "vs_character": rival.id, "vs_skills": ["Stealth"]})
    with pytest.raises(ActionError, match="not both"):
        table.command(table.alice, {"type": "check", "character": hero.id, "attribute": "rogue", "dl": 5,
                                    "vs_character": rival.id})
    with pytest.raises(NotFound):
        table.command(table.alice, {"type": "check", "character": hero.id, "attribute": "rogue",
                                    "vs_character": make_npc(table).id})  # hidden: does not exist for her


def test_a_contest_between_characters_replays_from_the_session_seed(table_for):
    from campaign.fairdice import verify_session

    table = table_for("tale")
    hero = table.create_character(table.alice, "Hero", get_system("tale").example_sheet)
    friend = table.create_character(table.bob, "Friend", get_system("tale").example_sheet)
    table.command(table.gm, {"type": "start_session"})
    table.command(table.bob, {"type": "start_combat", "character": friend.id, "vs_character": hero.id})
    with pytest.raises(Forbidden, match="Hero's side is its player's to choose"):
        table.command(table.bob, {"type": "combat_round", "character": friend.id, "attack": 4, "defence": 3,
                                  "their_attack": 4, "their_defence": 3})
    table.command(table.gm, {"type": "combat_round", "character": friend.id, "attack": 4, "defence": 3,
                             "their_attack": 4, "their_defence": 3})
    table.command(table.gm, {"type": "end_contest", "character": friend.id})
    table.command(table.gm, {"type": "end_session"})
    report = verify_session(type(table.campaign).objects.get(pk=table.campaign.pk), 1)
    assert report.ok, report.problems


def test_a_player_can_t_name_an_opponent_whose_sheet_hides_something_from_her(table_for):
    table = table_for("tale")
    hero = table.create_character(table.alice, "Hero", get_system("tale").example_sheet)
    rival = table.create_character(table.bob, "Rival", get_system("tale").example_sheet)
    head = table.command(table.gm, {"type": "take_damage", "character": rival.id, "dice": 2,
                                    "visibility": "gm"}).events[0].seq
    # Whether the GM's hidden damage left the rival a damage to spread must not show in her answer.
    with pytest.raises(Refused, match="holds what you may not see"):
        table.command(table.alice, {"type": "start_combat", "character": hero.id, "vs_character": rival.id})
    assert type(table.campaign).objects.get(pk=table.campaign.pk).last_seq == head
    # The GM sees the whole sheet, so the GM hears why.
    with pytest.raises(Refused, match="spread its damage first"):
        table.command(table.gm, {"type": "start_combat", "character": hero.id, "vs_character": rival.id})


# --- bad input: a clear error, never a 500 -----------------------------------------------------------

@pytest.mark.parametrize("bad", [[], {}, ["minion"]])
@pytest.mark.parametrize("action", [
    lambda bad: {"type": "create_character", "npc": True, "name": "Z", "quick": {"template": bad}},
    lambda bad: {"type": "post_message", "text": "hi", "kind": bad},
    lambda bad: {"type": "change_role", "username": "bob", "role": bad},
], ids=["quick-template", "message-kind", "role"])
def test_a_list_or_object_where_a_name_belongs_is_a_clear_error(table, action, bad):
    # Before: ``bad in {...}`` raised TypeError (unhashable), a 500 on the API and the socket.
    before = table.campaign.last_seq
    with pytest.raises(ActionError) as refused:
        table.command(table.gm, action(bad))
    assert refused.value.code == "invalid" and "must be" in refused.value.message
    table.campaign.refresh_from_db()
    assert table.campaign.last_seq == before


@pytest.mark.parametrize("bad", [[], {}])
def test_an_opposed_test_naming_a_character_with_a_list_for_its_attribute_is_a_clear_error(table_for, bad):
    table = table_for("mdt")
    hero = table.create_character(table.alice, "Hero", get_system("mdt").example_sheet)
    rival = table.create_character(table.bob, "Rival", get_system("mdt").example_sheet)
    # Before: the attribute's lookup raised TypeError (unhashable), a 500.
    with pytest.raises(ActionError, match="vs_attribute"):
        table.command(table.alice, {"type": "opposed_test", "character": hero.id, "attribute": bad,
                                    "vs_character": rival.id})
