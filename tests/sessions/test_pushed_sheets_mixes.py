"""Sheets pushed with events, over random mixes of commands: every sheet a doorbell carries, as each
member's socket would pick it, is the sheet that member fetches right after.

tests/sessions/test_pushed_sheets.py covers each case by name; this one covers their orders: public,
secret and GM-only tests and rolls, grants, sheet adjustments, reveals, voids, scenes, NPCs shown and
hidden, so that sheets pushed from what a command holds (campaign.sheets.sheets_in_hand) and sheets
read after the commit (pushed_sheets) follow each other on the same characters. Seeded, scripted dice.
"""

from __future__ import annotations

import random
from types import SimpleNamespace

import pytest

from rules import ScriptedDice, get_system
from tests.sessions.test_visibility import VIEWERS

# Does not depend on the database engine (the per-viewer filter of pushed sheets, over queries
# tests/sessions/test_visibility.py runs on both): the SQLite pass leaves it out.
pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.one_database]
COMMANDS = 60


def a_command(table, rng: random.Random, characters: dict[int, str], npcs: list[int]) -> tuple[str, dict] | None:
    """(who, action): mostly the owner's public actions, as at a real table."""
    from campaign.models import Event

    character = rng.choice(sorted(characters))
    who = characters[character] if rng.random() < 0.7 else "gm"
    visibility = "public" if rng.random() < 0.85 else rng.choice(["secret", "gm"])
    kind = rng.random()
    if kind < 0.35:
        return who, {"type": "skill_test", "character": character, "skill": "Strike", "target": rng.randint(5, 14),
                     "visibility": visibility}
    if kind < 0.55:
        return who, {"type": "roll", "character": character, "notation": "1d6", "visibility": visibility}
    if kind < 0.62:
        return "gm", {"type": "grant_resolve", "character": character, "amount": 1, "visibility": visibility}
    if kind < 0.68:
        return "gm", {"type": "adjust_sheet", "character": character, "reason": "a ruling",
                      "changes": {"sheet.skills.Strike": rng.randint(0, 4)}}
    events = Event.objects.filter(campaign=table.campaign).order_by("seq")
    if kind < 0.76:
        hidden = list(events.exclude(visibility="public").values_list("seq", flat=True))
        return ("gm", {"type": "reveal", "seq": rng.choice(hidden)}) if hidden else None
    if kind < 0.82:
        rolled = list(events.filter(character__isnull=False).exclude(type="character_created")
                      .values_list("seq", flat=True))
        return ("gm", {"type": "void", "seq": rng.choice(rolled), "reason": "a mistake"}) if rolled else None
    if kind < 0.86:
        return "gm", {"type": rng.choice(["end_scene", "start_scene"])}
    if kind < 0.9:
        return "gm", {"type": "show_npc", "character": rng.choice(npcs),
                      "shown": rng.choice(["hidden", "name", "full"])}
    return who, {"type": "invoke_aspect", "character": character, "visibility": visibility}


@pytest.mark.parametrize("seed", range(3))
def test_every_pushed_sheet_is_the_fetched_one_over_a_mix_of_commands(transactional_table, monkeypatch, doorbells, seed):
    import campaign.publish
    from campaign.actions import ActionError
    from campaign.actions.access import access_character_for_reading
    from campaign.sheets import sheet
    from campaign.visibility import Viewer
    from sessions.consumers import TableConsumer

    table = transactional_table
    in_hand = []
    hold = campaign.publish.sheets_in_hand
    monkeypatch.setattr(campaign.publish, "sheets_in_hand", lambda events: in_hand.append(hold(events)) or in_hand[-1])

    example = get_system("tote").example_sheet
    characters = {table.create_character(table.alice, "Hero", example).id: "alice",
                  table.create_character(table.bob, "Other", example).id: "bob",
                  table.create_character(table.gm, "The GM's own", example).id: "gm"}
    npcs = [table.command(table.gm, {"type": "create_character", "npc": True, "name": f"Bandit {shown}",
                                     "shown": shown, "quick": {"template": "veteran"}}).events[0].character_id
            for shown in ("hidden", "name", "full")]
    characters.update({npc: "gm" for npc in npcs})
    table.command(table.gm, {"type": "start_session"})
    table.command(table.gm, {"type": "start_scene"})
    rng = random.Random(seed)
    done = []
    while len(done) < COMMANDS:
        command = a_command(table, rng, characters, npcs)
        if command is None:
            continue
        who, action = command
        doorbells.rung.clear()
        try:
            table.command(getattr(table, who), action, dice=ScriptedDice([rng.randint(1, 6) for _ in range(40)]))
        except ActionError:
            continue  # the rules said no (nothing stored, no doorbell)
        done.append(command)
        ((_, data, sheets),) = doorbells.rung
        for name in VIEWERS:
            membership = table.membership(getattr(table, name))
            viewer = Viewer.of(membership)
            picked = TableConsumer._sheets_for(SimpleNamespace(viewer=viewer), data, sheets)
            assert picked is not None, (name, done)  # every doorbell carried its sheets
            for character, _, pushed in picked:
                try:
                    fetched = sheet(access_character_for_reading(membership, character), viewer)
                except ActionError:
                    raise AssertionError(f"{name} was pushed the sheet of {character}, which they may not read: {done}")
                assert pushed == fetched, (name, character, done)
    # Both ways of pushing a sheet were compared, several times each (a character's first hidden change
    # ends its sheets in hand for good: the lock's test counts revealed and voided ones too).
    assert sum(1 for sheets in in_hand if sheets) >= 5 and sum(1 for sheets in in_hand if not sheets) >= 10, in_hand
