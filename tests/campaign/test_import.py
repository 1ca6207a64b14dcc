"""import_log: a played campaign of every system, exported, loaded into an empty
database, verifies and folds into the same projections; refusals are clear."""

from __future__ import annotations

import io
import json

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection

from campaign.eventlog import verify_chain
from campaign.models import Campaign, Character, CharacterProjection, CharacterSnapshot, DiceSeed, Event, Membership
from tests.campaign.test_audit import play
from tests.contract.test_systems import EVENINGS

User = get_user_model()


def run(*args, stdin=None) -> str:
    out = io.StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


def snapshot() -> dict:
    """Everything the import must reproduce, keyed by the ids the chain covers."""
    return {
        # The outsider belongs to no campaign, so no export names them.
        "users": sorted(User.objects.exclude(username="outsider").values_list("id", "username", "email", "is_active",
                                                                                "date_joined")),
        "campaigns": sorted(Campaign.objects.values_list("id", "slug", "name", "system", "created_at", "invite_code",
                                                         "last_seq", "head_hash", "session_count", "current_session",
                                                         "scene_count", "current_scene")),
        "members": sorted(Membership.objects.values_list("campaign_id", "user_id", "role", "joined_at")),
        "characters": sorted(Character.objects.values_list("id", "campaign_id", "owner_id", "name", "created_at")),
        "projections": {p.character_id: (p.state, p.last_seq) for p in CharacterProjection.objects.all()},
        "seeds": sorted(DiceSeed.objects.values_list("campaign_id", "session", "seed", "created_at")),
    }


def export(slug: str, tmp_path) -> tuple[str, str]:
    path = tmp_path / f"{slug}.jsonl"
    text = run("export_log", slug, "--header")
    path.write_text(text, encoding="utf-8")
    return str(path), text


def wipe():
    """Empty the database the way tests and operators do (flush lifts the event triggers on SQLite)."""
    if connection.vendor == "postgresql":
        # Inside the test's transaction: run the deferred foreign-key checks now, so TRUNCATE may go ahead.
        with connection.cursor() as cursor:
            cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
    call_command("flush", interactive=False, verbosity=0)
    assert not Event.objects.exists() and not User.objects.exists()


def events_only(text: str) -> list[str]:
    return text.splitlines()[1:]


@pytest.mark.parametrize("system", sorted(EVENINGS))
def test_export_flush_import_gives_back_the_same_campaign(table_for, system, tmp_path):
    table = play(table_for(system), system)
    table.command(table.gm, {"type": "start_session"})  # a session still running: its seed is secret
    table.command(table.alice, {"type": "roll", "notation": "2d6", "character": table.hero.id})
    slug = table.campaign.slug
    table.campaign.refresh_from_db()
    running = (table.campaign.id, table.campaign.current_session)
    before = snapshot()
    path, text = export(slug, tmp_path)

    wipe()
    out = run("import_log", path)
    assert f"Imported campaign '{slug}'" in out and "Chain OK" in out

    assert run("verify_log", slug).strip().startswith(f"OK {before['campaigns'][0][6]} events, not signed")
    assert run("rebuild_projections", "--check").strip() == "OK projections match the log"
    assert all(s[2] not in text for s in before["seeds"] if s[:2] == running)  # #9: the running seed stays secret
    before["seeds"] = [s for s in before["seeds"] if s[:2] != running]
    assert snapshot() == before  # ids, stream head, projections, finished sessions' seeds: all as they were
    again = run("export_log", slug, "--header")
    assert events_only(again) == events_only(text)  # every event byte for byte
    assert all(not u.has_usable_password() for u in User.objects.all())

    # The imported campaign plays on: new rows get fresh ids, the chain and the running session continue.
    newcomer = User.objects.create_user("newcomer", password="pw-newcomer-123456")
    assert newcomer.pk > max(u[0] for u in before["users"])
    table.campaign = Campaign.objects.get(slug=slug)
    table.command(table.gm, {"type": "add_member", "username": "newcomer", "role": "player"})
    roll = table.command(table.alice, {"type": "roll", "notation": "1d6"}).events[0]
    assert roll.payload["verifiable"] is False  # its session's seed did not travel with the export
    table.command(table.gm, {"type": "end_session"})
    campaign = Campaign.objects.get(slug=slug)
    assert verify_chain(campaign).ok
    from campaign.fairdice import verify_session

    assert verify_session(campaign, campaign.session_count - 1).ok  # a finished session's seed came back
    report = verify_session(campaign, campaign.session_count)
    assert "seed was not kept" in report.summary()


def test_import_refuses_a_database_that_is_not_empty(played_export):
    path, _ = played_export
    with pytest.raises(CommandError, match="The database is not empty"):
        run("import_log", path)


@pytest.fixture
def played_export(table, tmp_path):
    play(table)
    return export(table.campaign.slug, tmp_path)


def rewrite(path, lines):
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")


def test_import_refuses_a_changed_event_and_names_it(played_export):
    path, text = played_export
    lines = text.splitlines()
    event = json.loads(lines[9])
    event["payload"]["sneaky"] = True
    lines[9] = json.dumps(event)
    rewrite(path, lines)
    wipe()
    with pytest.raises(CommandError, match=f"Event {event['seq']}'s hash does not match"):
        run("import_log", path)
    assert not Campaign.objects.exists() and not User.objects.exists()  # one transaction: nothing stays


def test_import_refuses_missing_events_and_files_without_a_header(played_export, tmp_path):
    path, text = played_export
    lines = text.splitlines()
    rewrite(path, lines[:5] + lines[6:])
    wipe()
    with pytest.raises(CommandError, match="Event 5 is missing"):
        run("import_log", path)
    rewrite(path, lines[1:])
    with pytest.raises(CommandError, match="no header line"):
        run("import_log", path)
    rewrite(path, [])
    with pytest.raises(CommandError, match="empty"):
        run("import_log", path)
    with pytest.raises(CommandError, match="Can't read"):
        run("import_log", str(tmp_path / "nothing-here.jsonl"))


def test_import_refuses_a_players_export_and_a_session_export(table, tmp_path):
    from django.test import Client

    play(table)
    client = Client()
    client.force_login(table.bob)
    res = client.get(f"/api/campaigns/{table.campaign.slug}/export.jsonl?header=1")
    players = tmp_path / "bob.jsonl"
    players.write_bytes(b"".join(res.streaming_content))
    session = tmp_path / "session.jsonl"
    session.write_text(run("export_log", table.campaign.slug, "--header", "--session", "2"), encoding="utf-8")
    wipe()
    with pytest.raises(CommandError, match="is sealed"):
        run("import_log", str(players))
    with pytest.raises(CommandError, match="holds only session 2"):
        run("import_log", str(session))


# --- forged and hostile files (the hardening suite fuzzes many more) --------------------------------

def rechain(header: dict, events: list[dict]) -> list[str]:
    """What a forger does: recompute every hash after changing events, so every link holds again."""
    from campaign.eventlog import event_hash

    prev = "0" * 64
    for event in events:
        fields = {"campaign": header["campaign"]["id"], "seq": event["seq"], "type": event["type"],
                  "version": event["version"], "payload": event["payload"], "actor": event["actor_id"],
                  "character": event["character"], "session": event["session"], "scene": event["scene"],
                  "visibility": event["visibility"], "created_at": event["created_at"]}
        event["prev_hash"], event["hash"] = prev, event_hash(prev, fields, event.get("format", 1))
        prev = event["hash"]
    header["head"] = {"seq": events[-1]["seq"], "hash": prev}
    return [json.dumps(header)] + [json.dumps(e) for e in events]


def test_import_refuses_a_recomputed_forged_chain_that_does_not_extend_the_known_head(played_export):
    path, text = played_export
    lines = text.splitlines()
    header, events = json.loads(lines[0]), [json.loads(line) for line in lines[1:]]
    known = f"{header['head']['seq']}:{header['head']['hash']}"
    forged = next(e for e in events if e["type"] == "roll")
    forged["payload"]["total"] = forged["payload"]["total"] + 1  # a better roll, every hash after it recomputed
    rewrite(path, rechain(header, events))
    wipe()
    with pytest.raises(CommandError, match="does not extend the head you know"):
        run("import_log", path, "--expect-head", known)
    assert not Campaign.objects.exists()
    with pytest.raises(CommandError, match="--expect-head must be SEQ:HASH"):
        run("import_log", path, "--expect-head", "twelve")


def test_import_with_the_known_head_loads_the_genuine_file(played_export):
    path, text = played_export
    header = json.loads(text.splitlines()[0])
    wipe()
    out = run("import_log", path, "--expect-head", f"{header['head']['seq']}:{header['head']['hash']}")
    assert "Chain OK" in out


@pytest.mark.parametrize("change, message", [
    (lambda h, e: h["members"][0].update(role="superadmin"), "a member's role must be one of"),
    (lambda h, e: e[3].update(visibility="nobody"), "'visibility' must be one of"),
    (lambda h, e: h["users"][0].update(username="<b>gm</b>"), "Enter a valid username"),
    (lambda h, e: h["dice_seeds"][0].update(seed="not hex at all"), "a dice seed must be 64 lowercase hex"),
    (lambda h, e: h["dice_seeds"][0].update(seed="ab" * 16), "a dice seed must be 64 lowercase hex"),
    (lambda h, e: h["campaign"].update(system="chess"), "the campaign's system must be one of"),
    (lambda h, e: h["users"].append(dict(h["users"][0])), "listed twice"),
    # Names pass the live server's one rule (campaign/actions/checks.py check_name).
    (lambda h, e: h["characters"][0].update(name="Ayasha\u202egnp.exe"), "A character name can't contain"),
    (lambda h, e: h["campaign"].update(name="The\nRoad"), "A campaign name can't contain"),
    (lambda h, e: h["characters"][0].update(name=" Ayasha"), "A character name must not start or end with spaces"),
], ids=["superadmin", "visibility-nobody", "html-username", "non-hex-seed", "short-seed", "unknown-system",
        "duplicate-user", "bidi-character-name", "newline-campaign-name", "padded-character-name"])
def test_import_refuses_values_no_server_writes(played_export, change, message):
    path, text = played_export
    lines = text.splitlines()
    header, events = json.loads(lines[0]), [json.loads(line) for line in lines[1:]]
    change(header, events)
    rewrite(path, rechain(header, events))
    wipe()
    with pytest.raises(CommandError, match=message):
        run("import_log", path)
    assert not Campaign.objects.exists() and not User.objects.exists()


# --- through the log's one record path ----------------------------------------------------------------

def test_import_folds_like_the_live_log_in_any_batch_size(played_export, settings):
    """The import records through campaign.eventlog.record, a few events at a time: the stream's counters,
    the projections and their snapshots come out as the live appends left them, with the void
    of an award (and the award after it) falling inside one batch."""
    settings.PROJECTION_SNAPSHOT_EVERY = 4  # batches of 4 events, and a snapshot block as long
    path, _ = played_export
    before = snapshot()
    wipe()
    run("import_log", path)
    assert snapshot() == before
    assert CharacterSnapshot.objects.filter(character__campaign__slug="torn-road").count() >= 2
    assert run("rebuild_projections", "--check").strip() == "OK projections match the log"


def test_import_refuses_session_stamps_the_log_s_own_sessions_do_not_give(played_export):
    """The record path stamps sessions and scenes from the log's own start and end events; a file
    whose events say otherwise is refused even with every hash recomputed."""
    path, text = played_export
    lines = text.splitlines()
    header, events = json.loads(lines[0]), [json.loads(line) for line in lines[1:]]
    stamped = next(e for e in events if e["session"] is not None and e["type"] == "roll")
    stamped["session"] += 1
    rewrite(path, rechain(header, events))
    wipe()
    with pytest.raises(CommandError, match=f"Event {stamped['seq']} says session {stamped['session']}"):
        run("import_log", path)
    assert not Campaign.objects.exists()


def test_import_into_a_database_never_migrated_says_so_in_one_line(played_export, tmp_path):
    """A host who forgets ``migrate`` gets one line naming it, not a traceback of a missing table."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    path, _ = played_export
    env = {**os.environ, "DATABASE_URL": f"sqlite:///{tmp_path / 'new.sqlite3'}", "DEBUG": "1"}
    done = subprocess.run([sys.executable, "manage.py", "import_log", str(path)], cwd=Path(__file__).parents[2],
                          env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 1
    assert done.stderr.strip() == ("CommandError: The database is not migrated: run `manage.py migrate` first. "
                                   "Nothing was imported."), done.stderr
