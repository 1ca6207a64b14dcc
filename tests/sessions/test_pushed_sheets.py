"""Sheets pushed with events: each viewer gets exactly the sheet a fetch would give them.

The browser does not fetch ``GET .../characters/<id>`` after every event:
the event frame carries the sheets it changed, filtered for the
viewer (campaign/sheets.py). For every role (gm, the owner, another player, a
spectator) and every visibility, the pushed sheet must equal the fetched one,
and a viewer who may not see an event gets no sheet with it (that would say
whose it was).
"""

from __future__ import annotations

import pytest
from channels.db import database_sync_to_async
from django.test import Client

from rules import ScriptedDice, get_system
from tests.conftest import HANG
from tests.sessions.test_table_consumer import connect, until_ready
# (who rolls, visibility) -> who sees the roll: the same for a sheet it changed
from tests.sessions.test_visibility import SEES, VIEWERS

# Does not depend on the database engine (the per-viewer filter of pushed sheets, over queries
# tests/sessions/test_visibility.py runs on both): the SQLite pass leaves it out.
pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.one_database]


@database_sync_to_async
def fetched(table, user, character_id: int) -> dict:
    client = Client()
    client.force_login(user)
    response = client.get(f"/api/campaigns/torn-road/characters/{character_id}")
    assert response.status_code == 200, response.json()
    return response.json()


@database_sync_to_async
def run(table, user, action, faces=()):
    return table.command(user, action, dice=ScriptedDice(list(faces)))


async def next_event_frame(comm) -> dict:
    while True:
        frame = await comm.receive_json_from(timeout=HANG)
        if frame["type"] == "event":
            return frame


@database_sync_to_async
def tote_hero(table):
    hero = table.create_character(table.alice, "Hero", {**get_system("tote").example_sheet, "resolve": 3})
    table.command(table.gm, {"type": "start_session"})
    table.command(table.gm, {"type": "start_scene"})
    return hero.id


async def sheets_before_a_test(table, hero: int, roller: str, visibility: str) -> dict:
    """Every viewer's sheet of ``hero``, fetched; then ``roller`` makes a test for it that changes it."""
    before = {name: await fetched(table, getattr(table, name), hero) for name in VIEWERS}
    await run(table, getattr(table, roller), {"type": "skill_test", "character": hero, "skill": "Strike",
                                              "target": 14, "visibility": visibility}, [5, 2, 5])
    return before


async def open_sockets(table) -> dict:
    sockets = {}
    for name in VIEWERS:
        sockets[name] = await connect(table, getattr(table, name))
        await until_ready(sockets[name])
    return sockets


@pytest.mark.parametrize("roller, visibility", sorted(SEES))
async def test_the_pushed_sheet_is_the_fetched_sheet_for_every_role_and_visibility(
        transactional_table, roller, visibility):
    table = transactional_table
    hero = await tote_hero(table)
    sockets = await open_sockets(table)
    before = await sheets_before_a_test(table, hero, roller, visibility)
    for name, comm in sockets.items():
        frame = await next_event_frame(comm)
        now = await fetched(table, getattr(table, name), hero)
        if name in SEES[(roller, visibility)]:
            assert frame["sheets"] == [now], name
            assert now != before[name]  # the test changed the sheet (last_test), so this compares something
        else:
            # Sealed for them: no sheet rides with it, and theirs did not change.
            assert frame["sheets"] == [] and now == before[name], name
    if visibility != "public":
        # A reveal shows everyone the sheet with the roll in it.
        seq = (await database_sync_to_async(lambda: table.campaign.events.order_by("-seq").first().seq)())
        await run(table, table.gm, {"type": "reveal", "seq": seq})
        for name, comm in sockets.items():
            frame = await next_event_frame(comm)
            assert frame["sheets"] == [await fetched(table, getattr(table, name), hero)], name
    for comm in sockets.values():
        await comm.disconnect()


async def test_a_scene_ending_pushes_every_sheet(transactional_table):
    table = transactional_table
    hero = await tote_hero(table)
    other = (await database_sync_to_async(table.create_character)(table.bob, "Other", get_system("tote").example_sheet)).id
    sockets = await open_sockets(table)
    await run(table, table.gm, {"type": "end_scene"})
    for name, comm in sockets.items():
        frame = await next_event_frame(comm)
        assert frame["sheets"] == [await fetched(table, getattr(table, name), c) for c in sorted((hero, other))]
        await comm.disconnect()


@database_sync_to_async
def in_an_encounter(table, *ids: int) -> None:
    table.command(table.gm, {"type": "start_encounter", "name": "Ambush"})
    for character in ids:
        table.command(table.gm, {"type": "add_combatant", "character": character})
    table.command(table.gm, {"type": "apply_condition", "character": ids[0], "name": "Dazed", "duration": "rounds",
                             "rounds": 1, "modifier": -1})


@database_sync_to_async
def stored(character_id: int) -> tuple[dict, int]:
    from campaign.models import CharacterProjection

    row = CharacterProjection.objects.get(character_id=character_id)
    return row.state, row.last_seq


async def test_a_turn_pushes_and_stores_only_the_states_its_conditions_change(transactional_table, settings):
    """An encounter's turn is folded into every character for its conditions alone (rules/conditions.py
    TURN_EVENTS): a state without any is left as stored, its last seq moves, and no sheet of it is pushed
    again; the log rebuilds the same rows, snapshots included."""
    from campaign.projections import rebuild

    settings.PROJECTION_SNAPSHOT_EVERY = 4  # turns cross snapshot blocks: those states are written whole
    table = transactional_table
    hero = await tote_hero(table)
    other = (await database_sync_to_async(table.create_character)(table.bob, "Other", get_system("tote").example_sheet)).id
    await in_an_encounter(table, hero, other)
    sockets = await open_sockets(table)
    for turn in range(6):  # round 1's two turns, round 2's (its first ends Dazed), round 3's
        before = await stored(other)
        await run(table, table.gm, {"type": "advance_turn"})
        after = await stored(other)
        assert after[0] == before[0] and after[1] == await head_seq(table)
        for name, comm in sockets.items():
            frame = await next_event_frame(comm)
            pushed = [body["character"] for body in frame["sheets"]]
            # The hero's state holds Dazed until round 2 begins (the third turn); after that no sheet changes.
            assert pushed == ([hero] if turn < 3 else []), (turn, name)
    assert (await stored(hero))[0].get("conditions") == []
    assert await database_sync_to_async(lambda: rebuild(type(table.campaign).objects.get(pk=table.campaign.pk), True))() == []
    for comm in sockets.values():
        await comm.disconnect()


async def backlog_frames(table, name: str, after: int) -> list[dict]:
    """The event frames a reconnecting socket of ``name`` reads before ``ready``."""
    comm = await connect(table, getattr(table, name), after=after)
    frames = []
    while not frames or frames[-1]["type"] != "ready":
        frames.append(await comm.receive_json_from(timeout=HANG))
    await comm.disconnect()
    return [f for f in frames if f["type"] == "event"]


@database_sync_to_async
def head_seq(table) -> int:
    return type(table.campaign).objects.get(pk=table.campaign.pk).last_seq


@pytest.mark.parametrize("roller, visibility", sorted(SEES))
async def test_a_reconnecting_socket_gets_the_backlogs_sheets_as_fetched_for_every_role_and_visibility(
        transactional_table, roller, visibility):
    """Events committed while a member was away come with the sheets they changed (on the backlog's
    last event), so a reconnecting browser fetches nothing; sealed for them, no sheet comes."""
    table = transactional_table
    hero = await tote_hero(table)
    away = await head_seq(table)
    before = await sheets_before_a_test(table, hero, roller, visibility)
    for name in VIEWERS:
        events = await backlog_frames(table, name, away)
        assert [f["event"]["seq"] for f in events] == [away + 1]
        now = await fetched(table, getattr(table, name), hero)
        if name in SEES[(roller, visibility)]:
            assert events[-1]["sheets"] == [now], name
            assert now != before[name]  # the test changed the sheet, so this compares something
        else:
            assert events[-1]["sheets"] == [] and now == before[name], name
    if visibility != "public":
        # Revealed while they were away: the sealed roll and its reveal come with the sheet that has the roll.
        await run(table, table.gm, {"type": "reveal", "seq": away + 1})
        for name in VIEWERS:
            events = await backlog_frames(table, name, away)
            assert [f["event"]["seq"] for f in events] == [away + 1, away + 2]
            assert events[0]["sheets"] == [] and events[-1]["sheets"] == [
                await fetched(table, getattr(table, name), hero)], name


async def test_a_backlog_with_a_scene_ending_carries_every_sheet_once(transactional_table):
    table = transactional_table
    hero = await tote_hero(table)
    other = (await database_sync_to_async(table.create_character)(table.bob, "Other", get_system("tote").example_sheet)).id
    away = await head_seq(table)
    await run(table, table.alice, {"type": "skill_test", "character": hero, "skill": "Strike", "target": 14,
                                   "visibility": "public"}, [5, 2, 5])
    await run(table, table.gm, {"type": "end_scene"})
    for name in VIEWERS:
        events = await backlog_frames(table, name, away)
        assert [f["sheets"] for f in events[:-1]] == [[]] * (len(events) - 1)
        assert events[-1]["sheets"] == [await fetched(table, getattr(table, name), c) for c in sorted((hero, other))]


async def test_a_backlog_of_turns_carries_only_the_sheets_their_conditions_change(transactional_table):
    """Replayed to a reconnecting socket, an encounter's turns bring the sheets a live turn pushes: the
    character whose condition ran down, never the one without conditions (rules/conditions.py
    TURN_EVENTS), whose state the turns left as it was."""
    table = transactional_table
    hero = await tote_hero(table)
    other = (await database_sync_to_async(table.create_character)(table.bob, "Other", get_system("tote").example_sheet)).id
    await in_an_encounter(table, hero, other)
    away = await head_seq(table)
    for _ in range(3):  # round 1's two turns, then round 2's first: it ends Dazed
        await run(table, table.gm, {"type": "advance_turn"})
    assert (await stored(hero))[0]["conditions"] == []
    for name in VIEWERS:
        events = await backlog_frames(table, name, away)
        assert [f["event"]["type"] for f in events] == ["turn_advanced"] * 3
        assert [body["character"] for body in events[-1]["sheets"]] == [hero], name
        assert events[-1]["sheets"] == [await fetched(table, getattr(table, name), hero)], name


@pytest.mark.parametrize("shown", ["name", "full"])
async def test_an_npcs_sheet_reaches_only_who_may_fetch_it(transactional_table, shown):
    table = transactional_table

    @database_sync_to_async
    def npc():
        result = table.command(table.gm, {"type": "create_character", "npc": True, "name": "Bandit", "shown": shown,
                                          "quick": {"template": "veteran"}})
        return result.events[0].character_id

    bandit = await npc()
    sockets = await open_sockets(table)
    await run(table, table.gm, {"type": "skill_test", "character": bandit, "skill": "Strike", "target": 8,
                                "visibility": "public"}, [5, 2, 5] * 4)
    for name, comm in sockets.items():
        frame = await next_event_frame(comm)
        if name == "gm" or shown == "full":
            assert frame["sheets"] == [await fetched(table, getattr(table, name), bandit)], name
        else:  # the GM keeps it: a fetch is refused, and nothing is pushed
            assert frame["sheets"] == [], name
        await comm.disconnect()


def test_sheets_with_nothing_hidden_cost_two_queries_however_many_characters(transactional_table):
    """Every command's doorbell and every backlog read pushes sheets: when nothing is hidden, the
    characters with their projections and one look for hidden events, whatever their number."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from campaign.models import Character
    from campaign.sheets import pushed_sheets, sheet
    from campaign.visibility import Viewer

    table = transactional_table
    ids = [table.create_character(user, name, get_system("tote").example_sheet).id
           for user, name in ((table.alice, "Hero"), (table.bob, "Other"), (table.alice, "Third"))]
    for c in ids:
        table.command(table.alice if c != ids[1] else table.bob, {"type": "roll", "notation": "1d6", "character": c})
    with CaptureQueriesContext(connection) as queries:
        pushed = pushed_sheets(table.campaign.id, set(ids))
    assert len(queries) == 2, [q["sql"] for q in queries]
    player = Viewer(user_id=table.bob.id, role="player")
    assert pushed == {c: {"all": sheet(Character.objects.get(pk=c), player)} for c in ids}


@pytest.fixture
def reads(monkeypatch):
    """The characters whose sheets a doorbell read after its commit (campaign.sheets.pushed_sheets,
    as campaign.sheets.changed_sheets calls it)."""
    import campaign.sheets

    calls: list[set[int]] = []
    read = campaign.sheets.pushed_sheets

    def spy(campaign_id, character_ids):
        calls.append(set(character_ids))
        return read(campaign_id, character_ids)

    monkeypatch.setattr(campaign.sheets, "pushed_sheets", spy)
    return calls


# What the table did to the hero before a public skill test, and whether that test's sheet is then
# the one its command holds (no read after the commit): a hidden plain roll changes no state (it
# only moves the sheet's seq, and the public test after it moves it again, for everyone).
BEFORE = {
    "nothing": (None, True),
    "a secret plain roll": ({"type": "roll", "notation": "1d6", "visibility": "secret"}, True),
    "a secret test": ({"type": "skill_test", "skill": "Strike", "target": 14, "visibility": "secret"}, False),
    "a GM-only test": ({"type": "skill_test", "skill": "Strike", "target": 14, "visibility": "gm"}, False),
}


@pytest.mark.parametrize("before", sorted(BEFORE))
async def test_a_public_action_pushes_the_sheet_its_command_holds_only_when_nothing_that_changed_it_is_hidden(
        transactional_table, reads, before):
    table = transactional_table
    hero = await tote_hero(table)
    action, in_hand = BEFORE[before]
    if action is not None:
        await run(table, table.alice, {**action, "character": hero}, [5, 2, 5])
    sockets = await open_sockets(table)
    reads.clear()
    await run(table, table.alice, {"type": "skill_test", "character": hero, "skill": "Strike", "target": 14,
                                   "visibility": "public"}, [6, 1, 4])
    for name, comm in sockets.items():
        frame = await next_event_frame(comm)
        # After a hidden change, the next one is sealed from whoever may not see that (campaign.visibility.hidden).
        whole = "hidden" not in frame["event"]["payload"]
        assert whole or not in_hand
        assert frame["sheets"] == ([await fetched(table, getattr(table, name), hero)] if whole else []), name
        await comm.disconnect()
    assert reads == [set() if in_hand else {hero}]


async def test_a_hidden_action_and_a_public_one_in_the_same_command_are_read_after_the_commit(transactional_table,
                                                                                             reads):
    """A command's own hidden event keeps its sheet from the others: never pushed from what it holds."""
    table = transactional_table
    hero = await tote_hero(table)
    sockets = await open_sockets(table)
    reads.clear()
    await run(table, table.alice, {"type": "skill_test", "character": hero, "skill": "Strike", "target": 14,
                                   "visibility": "secret"}, [6, 1, 4])
    for name, comm in sockets.items():
        if name in SEES[("alice", "secret")]:
            frame = await next_event_frame(comm)
            assert frame["sheets"] == [await fetched(table, getattr(table, name), hero)], name
        await comm.disconnect()
    assert reads == [{hero}]


async def test_an_ownerless_characters_pushed_sheet_is_the_fetched_one(transactional_table, reads):
    """An imported log may name no owner for a character (campaign/exports.py): its sheet, pushed
    from the command or fetched, says so (the fetch used to fail, and so did the push's read)."""
    from campaign.models import Character

    table = transactional_table
    hero = await tote_hero(table)
    await database_sync_to_async(lambda: Character.objects.filter(pk=hero).update(owner=None))()
    sockets = await open_sockets(table)
    reads.clear()
    await run(table, table.gm, {"type": "roll", "character": hero, "notation": "1d6"}, [3])
    for name, comm in sockets.items():
        frame = await next_event_frame(comm)
        fetched_sheet = await fetched(table, getattr(table, name), hero)
        assert frame["sheets"] == [fetched_sheet] and fetched_sheet["owner"] is None, name
        await comm.disconnect()
    assert reads == [set()]
    as_of = await database_sync_to_async(lambda: _as_of(table, hero))()
    assert as_of["owner"] is None and as_of["character"] == hero


def _as_of(table, character_id: int) -> dict:
    client = Client()
    client.force_login(table.alice)
    response = client.get(f"/api/campaigns/torn-road/characters/{character_id}?as_of=1")
    assert response.status_code == 200, response.content
    assert client.get("/campaigns/torn-road/").status_code == 200  # the table page lists it too
    return response.json()


async def test_an_npc_shown_in_full_then_by_name_pushes_its_sheet_only_to_the_gm(transactional_table, reads):
    """It was created in full (its creation is public), but the GM keeps its sheet now: its later rolls
    come with its sheet for the GM only, read after the commit."""
    table = transactional_table

    @database_sync_to_async
    def npc_named_after_being_shown():
        bandit = table.command(table.gm, {"type": "create_character", "npc": True, "name": "Bandit", "shown": "full",
                                          "quick": {"template": "veteran"}}).events[0].character_id
        table.command(table.gm, {"type": "show_npc", "character": bandit, "shown": "name"})
        return bandit

    bandit = await npc_named_after_being_shown()
    sockets = await open_sockets(table)
    reads.clear()
    await run(table, table.gm, {"type": "skill_test", "character": bandit, "skill": "Strike", "target": 8,
                                "visibility": "public"}, [5, 2, 5] * 4)
    for name, comm in sockets.items():
        frame = await next_event_frame(comm)
        if name == "gm":
            assert frame["sheets"] == [await fetched(table, table.gm, bandit)]
        else:
            assert frame["sheets"] == [], name
        await comm.disconnect()
    assert reads == [{bandit}]  # an NPC's sheet is always read after the commit
