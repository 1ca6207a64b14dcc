"""One GM request asking several (or all) players for the same roll: one request each, each answered
alone with the action it quotes."""

from __future__ import annotations

import pytest

from campaign.actions import ActionError, Forbidden, NotFound, Refused
from campaign.models import Character
from rules import get_system

SHEET = get_system("tote").example_sheet
HUNT = {"type": "skill_test", "skill": "Hunt", "target": 8}


def test_the_gm_asks_every_player_and_each_answers_her_own(table):
    ayasha = table.create_character(table.alice, "Ayasha", SHEET)
    bo = table.create_character(table.bob, "Bo", SHEET)
    table.command(table.gm, {"type": "create_character", "npc": True, "name": "Bandit", "quick": {"rating": 2}})
    asked = table.command(table.gm, {"type": "request_roll", "characters": "players", "action": HUNT,
                                     "note": "the elk's trail"}).events
    assert [(e.type, e.character_id, e.visibility) for e in asked] == [
        ("roll_requested", ayasha.id, "public"), ("roll_requested", bo.id, "public")]  # not the GM's NPC
    assert all(e.payload["action"] == {**HUNT, "character": e.character_id} for e in asked)
    with pytest.raises(ActionError, match="not a roll request for this character"):
        table.command(table.alice, {**HUNT, "character": ayasha.id, "request": asked[1].seq})
    answer = table.command(table.alice, {**HUNT, "character": ayasha.id, "request": asked[0].seq}).events[0]
    assert answer.payload["answers"] == asked[0].seq
    with pytest.raises(Refused, match="already answered"):
        table.command(table.alice, {**HUNT, "character": ayasha.id, "request": asked[0].seq})
    assert table.command(table.bob, {**HUNT, "character": bo.id, "request": asked[1].seq}).events[0].payload[
        "answers"] == asked[1].seq


def test_a_group_request_names_characters_once_and_is_the_gms(table):
    ayasha = table.create_character(table.alice, "Ayasha", SHEET)
    bo = table.create_character(table.bob, "Bo", SHEET)
    two = table.command(table.gm, {"type": "request_roll", "characters": [bo.id, ayasha.id], "action": HUNT}).events
    assert [e.character_id for e in two] == [bo.id, ayasha.id]
    with pytest.raises(ActionError, match="each once"):
        table.command(table.gm, {"type": "request_roll", "characters": [bo.id, bo.id], "action": HUNT})
    with pytest.raises(ActionError, match="not both"):
        table.command(table.gm, {"type": "request_roll", "characters": [bo.id], "character": bo.id, "action": HUNT})
    with pytest.raises(NotFound):
        table.command(table.gm, {"type": "request_roll", "characters": [bo.id, 12345], "action": HUNT})
    with pytest.raises(Forbidden):
        table.command(table.alice, {"type": "request_roll", "characters": "players", "action": HUNT})
    assert Character.objects.filter(campaign=table.campaign).count() == 2
