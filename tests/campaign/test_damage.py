"""Damage that reaches a track: one GM command applies a roll's damage to a character, stored as the
target's own event naming the roll; WYRM's Fate against a killing attack clears the boxes it ignored."""

from __future__ import annotations

import pytest

from campaign.actions import ActionError, Forbidden, Refused
from campaign.models import Character
from rules import ScriptedDice, get_system


def state(character):
    character.projection.refresh_from_db()
    return character.projection.state


def npc(table, name="Ogre"):
    result = table.command(table.gm, {"type": "create_character", "npc": True, "name": name, "shown": "full",
                                      "quick": {"rating": 2}})
    return Character.objects.get(pk=result.events[0].character_id)


def test_wyrm_a_damage_roll_applied_to_its_target_marks_the_track_and_names_the_roll(table_for):
    table = table_for("wyrm")
    hero = table.create_character(table.alice, "Hero", get_system("wyrm").example_sheet)
    ogre = npc(table)
    rolled = table.command(table.alice, {"type": "damage", "character": hero.id, "dice": 1, "bonus": 1},
                           dice=ScriptedDice([3])).events[0]
    with pytest.raises(Refused, match="health track"):
        table.command(table.gm, {"type": "apply_damage", "character": ogre.id, "roll": rolled.seq})
    table.command(table.gm, {"type": "configure_campaign", "settings": {"health.enabled": True}})
    with pytest.raises(Forbidden):
        table.command(table.alice, {"type": "apply_damage", "character": ogre.id, "roll": rolled.seq})
    applied = table.command(table.gm, {"type": "apply_damage", "character": ogre.id, "roll": rolled.seq}).events[0]
    assert (applied.type, applied.character_id, applied.visibility) == ("harm_marked", ogre.id, "public")
    assert applied.payload["applies"] == rolled.seq and applied.payload["amount"] == 4
    assert state(ogre)["harm"] == applied.payload["harm_after"]
    with pytest.raises(Refused, match="already applied to Ogre"):
        table.command(table.gm, {"type": "apply_damage", "character": ogre.id, "roll": rolled.seq})
    with pytest.raises(ActionError, match="not a roll that deals damage"):
        table.command(table.gm, {"type": "apply_damage", "character": ogre.id, "roll": applied.seq})


def test_wyrm_fate_against_a_killing_attack_clears_what_the_attack_marked(table_for):
    """wyrm-srd-rules-mechanics.txt:37 "Ignore an attack that would have killed the character": the
    boxes the blow marked are cleared with the Fate point (docs/rules.md, WYRM 12)."""
    table = table_for("wyrm")
    hero = table.create_character(table.alice, "Hero", get_system("wyrm").example_sheet)
    table.command(table.gm, {"type": "configure_campaign", "settings": {"health.enabled": True}})
    table.command(table.gm, {"type": "grant_fate", "character": hero.id, "amount": 1})
    table.command(table.gm, {"type": "mark_harm", "character": hero.id, "amount": 2})
    blow = table.command(table.gm, {"type": "roll", "notation": "1d6+20"}, dice=ScriptedDice([6])).events[0]
    table.command(table.gm, {"type": "apply_damage", "character": hero.id, "roll": blow.seq})
    out = state(hero)
    assert out["harm"] >= 2 + 1
    table.command(table.alice, {"type": "spend_fate", "character": hero.id, "use": "ignore_attack"})
    spent = table.command(table.gm, {"type": "approve_fate", "character": hero.id}).events[0]
    assert spent.payload["harm_cleared"] == out["harm"] - 2 and spent.payload["harm_after"] == 2
    assert state(hero)["harm"] == 2


def test_tale_a_roll_applied_is_damage_to_spread(table_for):
    table = table_for("tale")
    hero = table.create_character(table.alice, "Hero", get_system("tale").example_sheet)
    fall = table.command(table.gm, {"type": "roll", "notation": "1d3"}, dice=ScriptedDice([2])).events[0]
    taken = table.command(table.gm, {"type": "apply_damage", "character": hero.id, "roll": fall.seq}).events[0]
    assert (taken.type, taken.payload["taken"], taken.payload["applies"]) == ("damage_taken", 2, fall.seq)
    assert state(hero)["unassigned_damage"] == 2


def test_mdt_a_tests_successes_are_the_harm_it_deals(table_for):
    table = table_for("mdt")
    hero = table.create_character(table.alice, "Hero", get_system("mdt").example_sheet)
    ghoul = npc(table, "Ghoul")
    table.command(table.gm, {"type": "configure_campaign", "settings": {"health.enabled": True}})
    test = table.command(table.alice, {"type": "test", "character": hero.id, "attribute": "strength",
                                       "difficulty": 1}, dice=ScriptedDice([10, 8, 1, 1, 1, 1, 1, 1, 1])).events[0]
    applied = table.command(table.gm, {"type": "apply_damage", "character": ghoul.id, "roll": test.seq}).events[0]
    assert applied.payload["amount"] == test.payload["successes"] == 3
