"""Exports: JSON Lines and CSV of a campaign or a session, as each member may see
them, streamed a page at a time; and the operator's full ``export_log``."""

from __future__ import annotations

import csv
import io
import json

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import transaction
from django.http import StreamingHttpResponse
from django.test import AsyncClient, Client

from campaign import eventlog, exports
from campaign.audit import LogFilter, log_page
from campaign.eventlog import serialize_event
from campaign.models import ApiToken, Event
from campaign.visibility import as_stored
from tests.campaign.test_audit import MARK, alice_tested_in_secret, client_for as login, play

pytestmark = pytest.mark.django_db

ROLES = ["gm", "alice", "bob", "watcher"]
# Who sees the dice of the two 7d13 rolls in session 2: alice's secret one and the GM's GM-only one.
SEES_SECRET = {"gm", "alice"}
SEES_GM_ONLY = {"gm"}




def body_of(response) -> str:
    assert isinstance(response, StreamingHttpResponse)
    return b"".join(response.streaming_content).decode("utf-8")


def jsonl(response) -> list[dict]:
    return [json.loads(line) for line in body_of(response).splitlines()]


def export_url(table, kind="jsonl", query=""):
    return f"/api/campaigns/{table.campaign.slug}/export.{kind}{query}"


# --- visibility for every role -------------------------------------------------------------------

@pytest.mark.parametrize("who", ROLES)
def test_each_members_jsonl_export_holds_exactly_what_they_may_see(played, who):
    res = login(getattr(played, who)).get(export_url(played))
    assert res.status_code == 200 and res["Content-Type"].startswith("application/x-ndjson")
    assert 'filename="torn-road.jsonl"' in res["Content-Disposition"]
    events = jsonl(res)
    assert [e["seq"] for e in events] == list(range(1, played.campaign.last_seq + 1))
    by_seq = {e["seq"]: e for e in events}
    secret, gm_only = by_seq[played.secret_seq], by_seq[played.gm_seq]
    assert (secret["payload"].get("notation") == MARK) == (who in SEES_SECRET)
    assert (gm_only["payload"].get("notation") == MARK) == (who in SEES_GM_ONLY)
    for hidden in (e for e in events if e.get("hidden")):
        assert set(hidden["payload"]) == {"hidden", "commitment"}  # no dice_log, no nonce, nothing
    leaked = MARK in json.dumps([e for e in events if e["type"] != "roll_revealed"])
    assert leaked == (who in SEES_SECRET)
    assert by_seq[played.revealed_seq]["payload"]["notation"] == "2d10"  # revealed: public for everyone
    assert by_seq[played.voided_seq]["voided"] is True


@pytest.mark.parametrize("who", ROLES)
def test_each_members_csv_export_holds_exactly_what_they_may_see(played, who):
    res = login(getattr(played, who)).get(export_url(played, "csv"))
    assert res.status_code == 200 and res["Content-Type"].startswith("text/csv")
    rows = list(csv.DictReader(io.StringIO(body_of(res))))
    assert list(rows[0]) == exports.CSV_COLUMNS
    assert [int(r["seq"]) for r in rows] == list(range(1, played.campaign.last_seq + 1))
    by_seq = {int(r["seq"]): r for r in rows}
    for seq, visible in ((played.secret_seq, who in SEES_SECRET), (played.gm_seq, who in SEES_GM_ONLY)):
        row = by_seq[seq]
        assert (row["hidden"] == "true") != visible
        assert (MARK in row["payload"]) == visible and (row["dice"] != "") == visible
        assert (MARK in row["summary"]) == visible
        # Sealed, the row says what its stub says: something was done, not that it was a roll.
        assert visible or row["summary"] == "something done in secret (sealed: not for you)"
    assert by_seq[played.voided_seq]["voided"] == "true"
    roll = next(r for r in rows if r["type"] == "roll" and r["hidden"] == "false" and r["session"] == "2")
    assert roll["dice"].startswith("d6:") and roll["summary"].startswith("rolled 3d6+1 = ")


def test_outsiders_and_strangers_get_nothing(played):
    for kind in ("jsonl", "csv"):
        assert login(played.outsider).get(export_url(played, kind)).status_code == 404
        assert login(played.gm).get(f"/api/campaigns/nowhere/export.{kind}").status_code == 404
        anonymous = Client().get(export_url(played, kind))
        assert anonymous.status_code == 401 and anonymous.json()["error"]["code"] == "unauthenticated"
        bad = Client().get(export_url(played, kind), HTTP_AUTHORIZATION="Bearer nope")
        assert bad.status_code == 401
        assert Client().post(export_url(played, kind)).status_code == 405


def test_bearer_tokens_work_and_keep_the_members_view(played):
    key = ApiToken.objects.create(user=played.bob).key
    res = Client().get(export_url(played), HTTP_AUTHORIZATION=f"Bearer {key}")
    assert res.status_code == 200
    assert MARK not in body_of(res).replace('"roll_revealed"', "")


# --- sessions ---------------------------------------------------------------------------------------

def test_a_sessions_export_holds_only_that_session(played):
    gm = login(played.gm)
    res = gm.get(export_url(played, query="?session=2"))
    assert 'filename="torn-road-session-2.jsonl"' in res["Content-Disposition"]
    events = jsonl(res)
    want = list(Event.objects.filter(campaign=played.campaign, session=2).order_by("seq").values_list("seq", flat=True))
    assert [e["seq"] for e in events] == want and all(e["session"] == 2 for e in events)
    assert events[0]["type"] == "session_started" and events[-1]["type"] == "session_ended"
    rows = list(csv.DictReader(io.StringIO(body_of(gm.get(export_url(played, "csv", "?session=1"))))))
    assert {r["session"] for r in rows} == {"1"}
    for query, status in (("?session=3", 404), ("?session=0", 400), ("?session=x", 400), ("?session=-1", 400),
                          ("?session=%C2%B2", 400)):
        assert gm.get(export_url(played, query=query)).status_code == status, query


def test_the_header_line_is_optional_and_describes_the_campaign(played):
    events = jsonl(login(played.alice).get(export_url(played, query="?header=1")))
    head = events[0]
    assert exports.is_header(head) and "seq" not in head
    assert head["format"] == "talekeeper-export" and head["visibility"] == "member" and head["viewer"] == "alice"
    assert head["campaign"]["slug"] == "torn-road" and "invite_code" not in head["campaign"]
    assert "dice_seeds" not in head and all(set(u) == {"id", "username"} for u in head["users"])
    assert {c["name"] for c in head["characters"]} == {"Hero", "Rival"}
    assert sorted(m["username"] for m in head["members"]) == ["alice", "bob", "gm", "watcher"]
    assert [e["seq"] for e in events[1:]] == list(range(1, played.campaign.last_seq + 1))


# --- streaming ----------------------------------------------------------------------------------------

def test_exports_read_the_log_a_page_at_a_time(played, monkeypatch):
    calls = []
    real = exports.events_after

    def spy(campaign_id, after, limit):
        calls.append((after, limit))
        return real(campaign_id, after, limit)

    monkeypatch.setattr(exports, "events_after", spy)
    monkeypatch.setattr(exports, "PAGE", 4)
    res = login(played.gm).get(export_url(played))
    assert res.streaming and not calls  # nothing is read before the body is
    events = jsonl(res)
    assert [e["seq"] for e in events] == list(range(1, played.campaign.last_seq + 1))
    assert all(limit == 4 for _, limit in calls) and len(calls) >= played.campaign.last_seq // 4


def test_an_export_stops_at_the_head_it_started_with(played):
    res = login(played.gm).get(export_url(played))
    head = played.campaign.last_seq
    played.command(played.alice, {"type": "roll", "notation": "1d4"})  # appended while the export runs
    assert jsonl(res)[-1]["seq"] == head


@pytest.mark.django_db(transaction=True)
async def test_under_asgi_the_export_streams_through_an_async_iterator(transactional_table):
    from asgiref.sync import sync_to_async

    table = transactional_table
    await sync_to_async(play)(table)
    key = await sync_to_async(lambda: ApiToken.objects.create(user=table.bob).key)()
    res = await AsyncClient().get(export_url(table), headers={"Authorization": f"Bearer {key}"})
    assert res.status_code == 200 and res.is_async
    chunks = [chunk async for chunk in res.streaming_content]
    assert len(chunks) >= 1
    lines = b"".join(chunks).decode().splitlines()
    assert [json.loads(line)["seq"] for line in lines] == list(range(1, table.campaign.last_seq + 1))
    assert MARK not in b"".join(chunks).decode().replace("roll_revealed", "")
    from django.db import connections

    await sync_to_async(connections.close_all)()  # the chunks were read in this worker thread


# --- CSV details -------------------------------------------------------------------------------------

def csv_by_seq(table, who) -> dict[int, dict]:
    return {int(r["seq"]): r for r in csv.DictReader(io.StringIO(body_of(login(who).get(export_url(table, "csv")))))}


def test_a_csv_row_alice_reads_besides_the_gm_says_so(table_for):
    """Stored ``gm`` naming its readers (campaign/visibility/readers.py): her action on her own secret roll, and the
    GM's decision on top of it. "gm" alone told the GM and Alice that only the GM reads them."""
    table, hero = alice_tested_in_secret(table_for, target=11)  # short of it: Resolve to spend
    spent = table.command(table.alice, {"type": "spend_resolve", "character": hero.id, "totem": "Bear"}).events[0]
    granted = table.command(table.gm, {"type": "grant_resolve", "character": hero.id}).events[0]
    assert [(e.visibility, e.payload["shared_with"]) for e in (spent, granted)] == [
        ("gm", [{"user_id": table.alice.pk, "username": "alice"}])] * 2
    for who in (table.gm, table.alice):
        rows = csv_by_seq(table, who)
        assert [rows[e.seq]["visibility"] for e in (spent, granted)] == ["gm (alice)"] * 2, who
    rows = csv_by_seq(table, table.bob)  # sealed for Bob: the stub names nobody, a GM-only event to him
    assert [(rows[e.seq]["visibility"], rows[e.seq]["hidden"]) for e in (spent, granted)] == [("gm", "true")] * 2

def test_csv_cells_that_look_like_formulas_are_defused():
    data = {"seq": 1, "created_at": "2026-01-01T00:00:00.000000+00:00", "type": "roll", "visibility": "public",
            "actor": "=HYPERLINK(\"x\")", "actor_id": 1, "character": None, "character_name": "+evil", "session": None,
            "scene": None, "payload": {"notation": "1d6", "total": -1, "dice_log": [[6, 1]]}, "prev_hash": "0", "hash": "1"}
    row = dict(zip(exports.CSV_COLUMNS, exports.csv_row(data)))
    assert row["actor"] == "'=HYPERLINK(\"x\")" and row["character_name"] == "'+evil"
    assert row["payload"].startswith("{") and row["dice"] == "d6:1"


def test_a_csv_void_quotes_what_it_voided_only_to_its_readers(played):
    """A void's summary quotes the voided event's line (campaign/audit.py ``void_line``), read as the
    row's reader may see that event: a public void of a roll the GM keeps (stored so before voids took
    their event's readers) names nothing of it to Bob."""
    gm, alice, bob = played.gm, played.alice, played.bob
    quoted = played.command(gm, {"type": "void", "seq": played.secret_seq, "reason": "misclick"}).events[0]
    with transaction.atomic():  # the older, public void, written straight to the log
        campaign = eventlog.lock_campaign(played.campaign.id)
        legacy = eventlog.append(campaign, [eventlog.Draft("event_voided", {"seq": played.gm_seq, "type": "sealed",
                                                                  "reason": "too loud"})], actor=gm)[0]
    secret_line = csv_by_seq(played, gm)[played.secret_seq]["summary"]
    assert secret_line.startswith(f"rolled {MARK} = ")
    for who in (gm, alice):
        assert csv_by_seq(played, who)[quoted.seq]["summary"] == f"voided #{played.secret_seq} ({secret_line}), reason: misclick"
    rows = csv_by_seq(played, bob)
    assert rows[quoted.seq]["hidden"] == "true" and MARK not in json.dumps(rows)
    assert rows[legacy.seq]["summary"] == f"voided #{played.gm_seq} (sealed event), reason: too loud"
    assert csv_by_seq(played, gm)[legacy.seq]["summary"].startswith(f"voided #{played.gm_seq} (rolled {MARK} = ")
    # The audit page's words, the rule system's own included ("earned 4 XP", not "points awarded: points 4").
    page = log_page(played.campaign, LogFilter(), after=played.voided_seq - 1, size=2).events
    assert [csv_by_seq(played, gm)[e["seq"]]["summary"] for e in page] == [e["summary"] for e in page]


def _append(table, type_, payload, version=1, visibility="public"):
    """An event no server command writes (as an imported log may hold it), straight to the log."""
    with transaction.atomic():
        campaign = eventlog.lock_campaign(table.campaign.id)
        drafts = [eventlog.Draft(type_, payload, version, None, visibility)]
        event = eventlog.append(campaign, drafts, actor=table.gm)[0]
    table.campaign.refresh_from_db()
    return event


@pytest.mark.parametrize("seq, said", [(True, "true"), ("3", "3"), (-5, "-5"), (10**30, "a huge number"), (None, "?")])
def test_a_csv_void_naming_no_event_quotes_nothing(played, seq, said):
    """``seq: true`` is no seq (check_seq refuses it): it quoted event #1, the campaign's creation."""
    void = _append(played, "event_voided", {"seq": seq, "type": "roll", "reason": "x"})
    for who in (played.gm, played.bob):
        assert csv_by_seq(played, who)[void.seq]["summary"] == f"voided #{said} (roll event), reason: x"


def test_a_csv_row_of_a_rule_event_newer_than_the_code_reads_plainly(played):
    """An imported log may hold a rule event of a version this code does not know (import_log folds only
    character events): its row says its type, where every member's CSV stopped at it, cut short."""
    newer = _append(played, "skill_tested", {"skill": "Strike", "total": 3}, version=99)
    for who in (played.gm, played.bob):
        assert csv_by_seq(played, who)[newer.seq]["summary"].startswith("skill tested")


# --- the operator's export_log ------------------------------------------------------------------------

def run(*args) -> str:
    out = io.StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


def test_export_log_output_is_unchanged_events_only_by_default(played):
    lines = run("export_log", played.campaign.slug).splitlines()
    expected = []
    after = 0
    while True:  # exactly what export_log always wrote: events_after pages as stored, keys sorted
        page, _ = eventlog.events_after(played.campaign.id, after, 1000)
        expected += [json.dumps(as_stored(d), sort_keys=True, ensure_ascii=False) for d in page]
        if len(page) < 1000:
            break
        after = page[-1]["seq"]
    assert lines == expected
    assert MARK in "\n".join(lines)  # the operator's export is full: hidden dice included


def test_export_log_header_and_session(played):
    lines = run("export_log", played.campaign.slug, "--header", "--session", "2").splitlines()
    head = json.loads(lines[0])
    assert exports.is_header(head) and head["scope"] == "session" and head["session"] == 2
    assert head["visibility"] == "full" and head["campaign"]["invite_code"] == played.campaign.invite_code
    assert [s["session"] for s in head["dice_seeds"]] == [1, 2]
    assert {u["username"] for u in head["users"]} == {"gm", "alice", "bob", "watcher"}
    seqs = [json.loads(line)["seq"] for line in lines[1:]]
    assert seqs == list(Event.objects.filter(campaign=played.campaign, session=2).order_by("seq")
                        .values_list("seq", flat=True))
    first = Event.objects.select_related("actor", "character").get(campaign=played.campaign, seq=seqs[0])
    assert json.loads(lines[1]) == serialize_event(first)
    with pytest.raises(CommandError, match="no session 7"):
        run("export_log", played.campaign.slug, "--session", "7")
    with pytest.raises(CommandError, match="No campaign"):
        run("export_log", "nowhere")


def test_a_players_header_does_not_date_a_name_only_npc(table):
    """The GM made an NPC the players see by name only: its making is sealed to them, so their
    header must not give the moment it was made (that finds the sealed event in their export)."""
    from tests.campaign.test_evening_tools import make_npc

    npc = make_npc(table, name="Masked Stranger", shown="name")
    mine = jsonl(login(table.alice).get(export_url(table, query="?header=1")))[0]
    (row,) = [c for c in mine["characters"] if c["id"] == npc.id]
    assert row["name"] == "Masked Stranger" and row["created_at"] is None
    gms = jsonl(login(table.gm).get(export_url(table, query="?header=1")))[0]
    assert [c["created_at"] for c in gms["characters"] if c["id"] == npc.id] != [None]
