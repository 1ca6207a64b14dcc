"""The HTTP API: commands (201/200/409/4xx), paging the log, auth, state as of a seq."""

from __future__ import annotations

import json

import pytest
from django.test import Client

from campaign import dice as dice_module
from campaign.fairdice import CommandDice, RecordingDice
from campaign.models import ApiToken, Event
from rules import ScriptedDice


def post(client, slug, body, **headers):
    return client.post(f"/api/campaigns/{slug}/commands", data=json.dumps(body) if not isinstance(body, (bytes, str)) else body,
                       content_type="application/json", **headers)


@pytest.fixture
def alice_client(table):
    client = Client()
    client.force_login(table.alice)
    return client


@pytest.fixture
def bearer(table):
    def make(user):
        return {"HTTP_AUTHORIZATION": f"Bearer {ApiToken.objects.create(user=user).key}"}
    return make


def test_roll_answers_201_with_the_event(table, alice_client, monkeypatch):
    monkeypatch.setattr(dice_module, "dice_for",
                        lambda c, actor_id, command_id, seed=None: CommandDice(RecordingDice(ScriptedDice([4, 5])), None))
    res = post(alice_client, "torn-road", {"id": "r1", "action": {"type": "roll", "notation": "2d6"}})
    assert res.status_code == 201, res.content
    body = res.json()
    for key in ("seq", "type", "payload", "actor", "character", "session", "created_at", "prev_hash", "hash"):
        assert key in body
    assert body["type"] == "roll" and body["actor"] == "alice" and body["payload"]["total"] == 9
    assert body["seq"] == Event.objects.get(campaign=table.campaign, type="roll").seq


def test_repeated_id_answers_200_with_the_original(table, alice_client):
    first = post(alice_client, "torn-road", {"id": "r1", "action": {"type": "roll", "notation": "3d6"}})
    again = post(alice_client, "torn-road", {"id": "r1", "action": {"type": "roll", "notation": "3d6"}})
    assert (first.status_code, again.status_code) == (201, 200)
    assert again.json()["payload"] == first.json()["payload"]
    assert again.json()["seq"] == first.json()["seq"]


def test_repeated_id_with_another_body_is_409(table, alice_client):
    post(alice_client, "torn-road", {"id": "r1", "action": {"type": "roll", "notation": "3d6"}})
    res = post(alice_client, "torn-road", {"id": "r1", "action": {"type": "roll", "notation": "1d6"}})
    assert res.status_code == 409 and res.json()["error"]["code"] == "conflict"


@pytest.mark.parametrize("body, status, code", [
    (b"{not json", 400, "bad_json"),
    (b"\xff\xfe", 400, "bad_json"),
    ([1, 2], 400, "invalid"),
    ({"action": {"type": "roll", "notation": "1d6"}}, 400, "bad_id"),
    ({"id": "", "action": {"type": "roll"}}, 400, "bad_id"),
    ({"id": "a", "action": "roll"}, 400, "invalid"),
    ({"id": "a", "action": {"type": "roll", "notation": "1d6+"}}, 400, "bad_notation"),
    ({"id": "a", "action": {"type": "teleport"}}, 400, "unknown_action"),
    ({"id": "a", "action": {"type": "roll", "notation": "1d6", "visibility": "everyone"}}, 400, "invalid"),
    ({"id": "a", "action": {"type": "start_session"}}, 403, "forbidden"),
])
def test_bad_commands_get_a_clear_error_and_store_nothing(table, alice_client, body, status, code):
    head = Event.objects.filter(campaign=table.campaign).count()
    res = post(alice_client, "torn-road", body)
    assert res.status_code == status, res.content
    error = res.json()["error"]
    assert error["code"] == code and len(error["message"]) > 10
    assert Event.objects.filter(campaign=table.campaign).count() == head


def test_outsider_and_absent_campaign_look_the_same(table):
    client = Client()
    client.force_login(table.outsider)
    real = post(client, "torn-road", {"id": "a", "action": {"type": "roll", "notation": "1d6"}})
    absent = post(client, "no-such", {"id": "a", "action": {"type": "roll", "notation": "1d6"}})
    assert real.status_code == absent.status_code == 404
    assert real.json() == absent.json()
    assert client.get("/api/campaigns/torn-road/events").json() == client.get("/api/campaigns/no-such/events").json()


def test_anonymous_gets_401(table):
    res = Client().get("/api/campaigns/torn-road/events")
    assert res.status_code == 401 and res.json()["error"]["code"] == "unauthenticated"


def test_spectator_cannot_roll(table):
    client = Client()
    client.force_login(table.watcher)
    res = post(client, "torn-road", {"id": "a", "action": {"type": "roll", "notation": "1d6"}})
    assert res.status_code == 403


def test_bearer_token_works_without_csrf(table, bearer):
    client = Client(enforce_csrf_checks=True)
    res = post(client, "torn-road", {"id": "b1", "action": {"type": "roll", "notation": "1d6"}}, **bearer(table.bob))
    assert res.status_code == 201 and res.json()["actor"] == "bob"


def test_bad_bearer_token_is_401(table):
    res = Client().get("/api/campaigns/torn-road/events", HTTP_AUTHORIZATION="Bearer nope")
    assert res.status_code == 401


def test_session_auth_needs_csrf(table):
    client = Client(enforce_csrf_checks=True)
    client.force_login(table.alice)
    res = post(client, "torn-road", {"id": "c1", "action": {"type": "roll", "notation": "1d6"}})
    assert res.status_code == 403 and res.json()["error"]["code"] == "csrf"


def test_events_pages_through_the_log(table, alice_client):
    for i in range(7):
        table.command(table.alice, {"type": "roll", "notation": "1d6"})
    head = table.campaign.__class__.objects.get(pk=table.campaign.pk).last_seq
    seen, after = [], 0
    while True:
        page = alice_client.get(f"/api/campaigns/torn-road/events?after={after}&limit=3").json()
        seen += [e["seq"] for e in page["events"]]
        if not page["has_more"]:
            break
        after = page["next_after"]
    assert seen == list(range(1, head + 1))


@pytest.mark.parametrize("query", ["after=-1", "after=x", "limit=0", "limit=100000", "after=" + "9" * 40])
def test_events_rejects_bad_paging(table, alice_client, query):
    res = alice_client.get(f"/api/campaigns/torn-road/events?{query}")
    assert res.status_code == 400 and "message" in res.json()["error"]


@pytest.mark.parametrize("dl", ["", "  ", None, "nine", 61, "absent"])
def test_a_wyrm_check_without_a_usable_dl_is_a_clear_400_and_stores_nothing(table_for, dl):
    """The rules set no default DL (the GM sets it): an empty or missing one is refused in words."""
    from rules import get_system

    table = table_for("wyrm")
    hero = table.create_character(table.alice, "Brannoc", get_system("wyrm").example_sheet)
    client = Client()
    client.force_login(table.alice)
    head = table.campaign.events.count()
    action = {"type": "check", "character": hero.id, "attribute": "warrior"} | ({} if dl == "absent" else {"dl": dl})
    res = post(client, "torn-road", {"id": "c1", "action": action})
    assert res.status_code == 400, res.content
    assert "dl" in res.json()["error"]["message"]
    assert table.campaign.events.count() == head
