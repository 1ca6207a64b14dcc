"""Chat at the table (campaign/actions/messages.py): messages and whispers are events, and a
whisper reaches only its sender, the members it names and the GM, through every way out of the
server (the commands' answers, the events API, both exports, the audit page). Members read the
table through the HTTP API, as a client would (tests/campaign/test_hidden_information.py's style).
"""

from __future__ import annotations

import json

import pytest

from campaign.models import Event
from rules import get_system
from tests.campaign.served import client_for, command as send, seen

pytestmark = pytest.mark.django_db

SLUG = "torn-road"
SECRET = "the duke is the vampire"


def everything_received(user) -> str:
    """All a member can pull out of the server about the campaign, as text."""
    client = client_for(user)
    parts = [client.get(f"/api/campaigns/{SLUG}/events?after=0&limit=100").content,
             b"".join(client.get(f"/api/campaigns/{SLUG}/export.jsonl").streaming_content),
             b"".join(client.get(f"/api/campaigns/{SLUG}/export.csv").streaming_content),
             client.get(f"/campaigns/{SLUG}/audit/").content]
    return b"\n".join(parts).decode()


@pytest.fixture
def table(table_for):
    table = table_for("tote")
    table.hero = table.create_character(table.alice, "Ayasha", get_system("tote").example_sheet)
    return table


def test_a_message_is_an_event_everyone_reads(table):
    ooc = send(table, table.bob, {"type": "post_message", "text": "  pizza's here  "})
    assert ooc.status == 201
    ic = send(table, table.alice, {"type": "post_message", "kind": "ic", "character": table.hero.id,
                                   "text": "We ride at dawn."})
    assert ic.status == 201
    for user in (table.gm, table.alice, table.bob, table.watcher):
        assert seen(user, ooc.json()["seq"])["payload"] == {"text": "pizza's here", "kind": "ooc"}
        said = seen(user, ic.json()["seq"])
        assert said["type"] == "message_posted" and said["visibility"] == "public"
        assert said["payload"] == {"text": "We ride at dawn.", "kind": "ic", "character": table.hero.id,
                                   "character_name": "Ayasha"}
    # A watcher talks at the table too, out of character only.
    assert send(table, table.watcher, {"type": "post_message", "text": "go Ayasha!"}).status == 201
    assert send(table, table.watcher, {"type": "post_message", "kind": "ic", "character": table.hero.id,
                                       "text": "hi"}).status == 403
    # Only her player (or the GM) speaks as a character.
    assert send(table, table.bob, {"type": "post_message", "kind": "ic", "character": table.hero.id,
                                   "text": "I am Ayasha"}).status == 403
    assert send(table, table.gm, {"type": "post_message", "kind": "ic", "character": table.hero.id,
                                  "text": "(the GM speaks for her)"}).status == 201


def test_a_player_demoted_to_spectator_no_longer_speaks_as_their_character(table):
    friend = table.create_character(table.bob, "Bo", get_system("tote").example_sheet)
    said = {"type": "post_message", "kind": "ic", "character": friend.id, "text": "Bo speaks"}
    assert send(table, table.bob, said).status == 201
    table.command(table.gm, {"type": "change_role", "username": "bob", "role": "spectator"})
    head = Event.objects.filter(campaign=table.campaign).count()
    # Before: Bo still spoke through his old player (he still owns the character).
    refused = send(table, table.bob, said)
    assert refused.status == 403 and "out of character" in refused.json()["error"]["message"]
    assert send(table, table.bob, {"type": "post_message", "text": "just watching now"}).status == 201
    assert Event.objects.filter(campaign=table.campaign).count() == head + 1


def test_a_whisper_reaches_only_its_sender_those_named_and_the_gm(table):
    # The members' own events name them by id in public (member_joined): count what is there before.
    ids_before = everything_received(table.watcher).count('"user_id"')
    whisper = send(table, table.alice, {"type": "post_message", "text": SECRET, "to": ["bob"]})
    assert whisper.status == 201
    seq = whisper.json()["seq"]
    stored = Event.objects.get(campaign=table.campaign, seq=seq)
    assert stored.visibility == "whisper" and stored.character is None
    assert stored.payload["to"] == [{"user_id": table.bob.id, "username": "bob"}]
    assert len(stored.payload["nonce"]) >= 32  # the commitment can't be checked against guessed texts

    for user in (table.alice, table.bob, table.gm):
        event = seen(user, seq)
        assert event["payload"]["text"] == SECRET and event.get("hidden") is None, user.username
    event = seen(table.watcher, seq)
    assert event["hidden"] is True and event["type"] == "sealed" and event["visibility"] == "whisper"
    assert set(event["payload"]) == {"hidden", "commitment"}
    # Not the text, nor who it was for, through anything the watcher or another player can read.
    received = everything_received(table.watcher)
    assert SECRET not in received and '"to"' not in received and received.count('"user_id"') == ids_before
    send(table, table.gm, {"type": "post_message", "text": "you see a door", "to": ["alice"]})
    for_bob = everything_received(table.bob)
    assert "you see a door" not in for_bob and SECRET in for_bob
    # The GM's audit shows it whole.
    assert f"whispered to bob (ooc): “{SECRET}”" in client_for(table.gm).get(f"/campaigns/{SLUG}/audit/").content.decode()


def test_a_whisper_is_no_hidden_roll(table):
    seq = send(table, table.alice, {"type": "post_message", "text": SECRET, "to": ["gm"]}).json()["seq"]
    refused = send(table, table.gm, {"type": "reveal", "seq": seq})
    assert refused.status == 422 and "whisper" in refused.json()["error"]["message"]
    # ... but a message can be voided like any mistake.
    assert send(table, table.gm, {"type": "void", "seq": seq, "reason": "wrong window"}).status == 201
    # A roll can't borrow a whisper's visibility.
    bad = send(table, table.alice, {"type": "roll", "notation": "1d6", "visibility": "whisper"})
    assert bad.status == 400 and "'visibility' must be one of: public, gm, secret." == bad.json()["error"]["message"]


@pytest.mark.parametrize("action, message", [
    ({"text": "   "}, "'text' is required"),
    ({"text": "x" * 2001}, "'text' must be text of 1 to 2000 characters"),
    ({"text": "beep\x07"}, "control characters"),
    ({"text": "hi", "kind": "shout"}, "'kind' must be"),
    ({"text": "hi", "to": []}, "'to' must be a list"),
    ({"text": "hi", "to": "bob"}, "'to' must be a list"),
    ({"text": "hi", "to": ["alice"]}, "someone other than yourself"),
    ({"text": "hi", "to": ["outsider"]}, "'outsider' is not a member"),
    ({"text": "hi", "visibility": "secret"}, "name who hears it in 'to'"),
    ({"text": "hi", "kind": "ic"}, "needs 'character'"),
    ({"text": "hi", "character": 1}, "Only an in-character message"),
])
def test_bad_messages_are_clear_400s_and_store_nothing(table, action, message):
    before = table.campaign.events.count()
    res = send(table, table.alice, {"type": "post_message", **action})
    assert res.status == 400 and message in res.json()["error"]["message"], res.json()
    assert table.campaign.events.count() == before


def test_messages_have_their_own_rate_limit(table, settings):
    settings.RATE_LIMIT_MESSAGES_PER_MINUTE = 2
    from django.core.cache import cache

    cache.clear()
    assert [send(table, table.bob, {"type": "post_message", "text": f"spam {i}"}).status for i in range(3)] == [
        201, 201, 429]
    assert table.campaign.events.filter(type="message_posted").count() == 2
    # Rolls are not messages: the table keeps playing.
    assert send(table, table.bob, {"type": "roll", "notation": "1d6"}, [4]).status == 201


def test_a_whisper_in_the_api_answer_and_csv_for_the_sender(table):
    res = client_for(table.alice).post(f"/api/campaigns/{SLUG}/commands", content_type="application/json",
                                       data=json.dumps({"id": "w-1", "action": {"type": "post_message",
                                                                                "text": SECRET, "to": ["bob"]}}))
    assert res.status_code == 201 and res.json()["payload"]["text"] == SECRET
    csv = b"".join(client_for(table.alice).get(f"/api/campaigns/{SLUG}/export.csv").streaming_content).decode()
    assert f"whispered to bob (ooc): “{SECRET}”" in csv


@pytest.mark.parametrize("name", ["Evil\u202eeman", "a\t=1+1", "Two\nlines", "Left\u2066isolate", "bell\x07"])
def test_a_name_with_control_or_text_direction_characters_is_refused_and_stores_nothing(table, name):
    """Chat refuses these and so must names: else a
    character could be named to read as another on the table, the audit and the exports."""
    before = table.campaign.events.count()
    res = send(table, table.alice, {"type": "create_character", "name": name, "sheet": get_system("tote").example_sheet})
    assert res.status == 400 and "control characters" in res.json()["error"]["message"], res.json()
    assert table.campaign.events.count() == before


@pytest.mark.parametrize("name", ["Ayasha", "Zoë", "مهر\u200cنوش", "👩\u200d🚀 Astra"])
def test_a_name_in_any_script_with_its_joiners_is_taken(table, name):
    res = send(table, table.alice, {"type": "create_character", "name": name, "sheet": get_system("tote").example_sheet})
    assert res.status == 201 and res.json()["payload"]["name"] == name, res.json()


@pytest.mark.parametrize("text", ["👨\u200d👩\u200d👧 family night", "❤\ufe0f", "Quoi\u00a0?", "مهر\u200cنوش",
                                  "two\nlines\tand a tab"])
def test_a_message_with_emoji_joiners_and_no_break_spaces_is_posted_as_written(table, text):
    """A play-test's find: chat refused a family emoji (its zero-width joiners) and a French
    keyboard's no-break space as "control characters"; names took them."""
    res = send(table, table.alice, {"type": "post_message", "text": text})
    assert res.status == 201 and res.json()["payload"]["text"] == text, res.json()


@pytest.mark.parametrize("text", ["Evil\u202eeman", "Left\u2066isolate", "mark\u200fhere", "\x1b[31mred"])
def test_a_message_with_text_direction_marks_is_refused_and_stores_nothing(table, text):
    before = table.campaign.events.count()
    res = send(table, table.alice, {"type": "post_message", "text": text})
    assert res.status == 400 and "control characters" in res.json()["error"]["message"], res.json()
    assert table.campaign.events.count() == before


def test_the_gm_cannot_speak_in_character_as_a_hidden_npc(table):
    """An evening's play-test: the GM said a line "as" the hidden NPC Secret Assassin and the public
    message carried its name and id to every player and spectator, while a public roll for the
    same NPC is kept for the GM (docs/hidden-information.md). Speaking as it to the table is refused
    until the GM shows it; a whisper as it reaches only those the GM names; a name-only NPC may speak
    (its name is already known)."""
    from campaign.models import Character

    made = table.command(table.gm, {"type": "create_character", "npc": True, "name": "Secret Assassin",
                                    "shown": "hidden", "sheet": get_system("tote").example_sheet})
    npc = Character.objects.get(pk=made.events[0].character_id)
    before = Event.objects.count()
    said = send(table, table.gm, {"type": "post_message", "kind": "ic", "character": npc.id,
                                  "text": "you will not see me"})
    assert said.status == 422, said.json()
    assert "show" in said.json()["error"]["message"]
    assert Event.objects.count() == before
    whispered = send(table, table.gm, {"type": "post_message", "kind": "ic", "character": npc.id,
                                       "text": "only you hear me", "to": ["alice"]})
    assert whispered.status == 201, whispered.json()
    assert seen(table.alice, whispered.json()["seq"])["payload"]["character_name"] == "Secret Assassin"
    for user in (table.bob, table.watcher):
        assert "Secret Assassin" not in everything_received(user)
    table.command(table.gm, {"type": "show_npc", "character": npc.id, "shown": "name"})
    said = send(table, table.gm, {"type": "post_message", "kind": "ic", "character": npc.id, "text": "Boo."})
    assert said.status == 201
    assert seen(table.alice, said.json()["seq"])["payload"]["character_name"] == "Secret Assassin"
