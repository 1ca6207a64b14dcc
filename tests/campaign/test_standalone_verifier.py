"""tools/talekeeper_verify.py, run as a member would run it: its own process, no site-packages,
no Talekeeper code, on an export downloaded through the API plus receipts and the server's key."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from django.test import Client

from tests.campaign import host
from tests.campaign.served import client_for

VERIFIER = Path(__file__).resolve().parents[2] / "tools" / "talekeeper_verify.py"


def download(table, user, tmp_path, name="export.jsonl") -> str:
    res = client_for(user).get(f"/api/campaigns/{table.campaign.slug}/export.jsonl?header=1")
    assert res.status_code == 200
    path = tmp_path / name
    path.write_bytes(b"".join(res.streaming_content))
    return str(path)


def keep_receipt(table, user, tmp_path, name="receipt.json") -> str:
    res = client_for(user).post(f"/api/campaigns/{table.campaign.slug}/checkpoints")
    assert res.status_code == 201
    path = tmp_path / name
    path.write_text(json.dumps(res.json()))
    return str(path)


def key_file(tmp_path) -> str:
    path = tmp_path / "key.json"
    path.write_text(Client().get("/api/key").content.decode())
    return str(path)


def run(export: str, *args: str) -> subprocess.CompletedProcess:
    # -I -S: no environment, no site-packages: the standard library is all it gets.
    return subprocess.run([sys.executable, "-I", "-S", str(VERIFIER), export, *args], capture_output=True,
                          text=True, timeout=120)


def an_evening(table):
    """A finished session with public, secret and GM-only rolls, one of them revealed."""
    table.command(table.gm, {"type": "start_session"})
    table.command(table.alice, {"type": "roll", "notation": "3d6+1"})
    table.secret = table.command(table.alice, {"type": "roll", "notation": "2d10", "visibility": "secret"}).events[0]
    table.gm_roll = table.command(table.gm, {"type": "roll", "notation": "1d20", "visibility": "gm"}).events[0]
    # Alice's blind roll: its nonce is drawn (docs/fair-dice.md, section 4), which the GM's check accepts.
    table.blind = table.command(table.alice, {"type": "roll", "notation": "1d12", "visibility": "gm"}).events[0]
    table.revealed = table.command(table.gm, {"type": "roll", "notation": "2d8", "visibility": "gm"}).events[0]
    table.command(table.gm, {"type": "reveal", "seq": table.revealed.seq})
    table.public = table.command(table.bob, {"type": "roll", "notation": "4d6"}).events[0]
    table.command(table.gm, {"type": "end_session"})


def test_a_players_export_of_a_finished_session_verifies(table, tmp_path):
    an_evening(table)
    receipt = keep_receipt(table, table.bob, tmp_path)
    export = download(table, table.bob, tmp_path)
    sealed = [json.loads(line) for line in open(export) if '"sealed"' in line]
    assert {e["seq"] for e in sealed} == {table.secret.seq, table.gm_roll.seq, table.blind.seq}  # bob sees none...
    result = run(export, "--receipt", receipt, "--key-file", key_file(tmp_path))
    assert result.returncode == 0, result.stdout + result.stderr
    table.campaign.refresh_from_db()
    assert result.stdout.splitlines()[-1].startswith(f"OK {table.campaign.last_seq} events")
    assert "1 reveal(s)" in result.stdout  # ...but checks their links, and the revealed one's body


def test_seeds_of_any_allowed_text_verify(table_for, tmp_path, monkeypatch):
    """Seeds follow the one text rule (docs/fair-dice.md): a no-break space, an emoji family and a
    variation selector in a seed hash alike here and on the server (format 2 and format 1), and a
    v1 session's mix over them gives the dice the old server rolled."""
    from campaign import log
    from campaign.fairdice import verify_session
    from tests.campaign.test_fairdice import TEXT_SEEDS, write_v1_session

    monkeypatch.setattr(log, "CURRENT_FORMAT", log.FORMAT_1)  # the campaign too, as the old server made it
    table = table_for("tote")
    write_v1_session(table, monkeypatch, player_seed=TEXT_SEEDS[1])  # session 1: format 1, scheme v1
    table.command(table.gm, {"type": "start_session"})
    for seed in TEXT_SEEDS:
        table.command(table.bob, {"type": "add_seed", "seed": seed})
        table.command(table.alice, {"type": "roll", "notation": "2d6"})
    table.command(table.gm, {"type": "end_session"})
    assert verify_session(table.campaign, 1).ok and verify_session(table.campaign, 2).ok
    export = download(table, table.bob, tmp_path)
    assert sum('"seed_added"' in line for line in open(export, encoding="utf-8")) == 1 + len(TEXT_SEEDS)
    result = run(export)
    assert result.returncode == 0, result.stdout + result.stderr
    table.campaign.refresh_from_db()
    # v1: 3d6 public and 3d6 revealed; v2: three 2d6.
    assert result.stdout.splitlines()[-1].startswith(f"OK {table.campaign.last_seq} events, 12 dice in 2 finished")


def test_the_gms_export_checks_every_hidden_roll_too(table, tmp_path):
    an_evening(table)
    result = run(download(table, table.gm, tmp_path), "--key-file", key_file(tmp_path))
    assert result.returncode == 0, result.stdout + result.stderr


def test_a_die_changed_and_rehashed_by_the_host_is_named(table, tmp_path):
    an_evening(table)
    receipt = keep_receipt(table, table.bob, tmp_path)
    roll = table.public
    sides, face = roll.payload["dice_log"][0]
    host.edit_payload(table.campaign, roll.seq, {**roll.payload,
                                                 "dice_log": [[sides, face % sides + 1], *roll.payload["dice_log"][1:]]})
    result = run(download(table, table.bob, tmp_path), "--receipt", receipt, "--key-file", key_file(tmp_path))
    assert result.returncode == 1
    assert f"BAD seq {roll.seq}: die 1 (d{sides})" in result.stdout
    assert f"BAD seq {json.load(open(receipt))['seq']}: the event's hash differs from the receipt's" in result.stdout


def test_an_export_edited_by_hand_is_named(table, tmp_path):
    an_evening(table)
    export = Path(download(table, table.bob, tmp_path))
    lines = export.read_text().splitlines()
    for i, line in enumerate(lines):
        data = json.loads(line)
        if data.get("seq") == table.public.seq:
            data["payload"]["total"] += 1
            lines[i] = json.dumps(data)
    export.write_text("\n".join(lines) + "\n")
    result = run(str(export))
    assert result.returncode == 1
    assert result.stdout.startswith(f"BAD seq {table.public.seq}: its body_digest is not the digest of its body")


def test_a_forged_reveal_in_the_export_is_named(table, tmp_path):
    an_evening(table)
    export = Path(download(table, table.bob, tmp_path))
    lines = export.read_text().splitlines()
    reveal_seq = None
    for i, line in enumerate(lines):
        data = json.loads(line)
        if data.get("type") == "roll_revealed":
            data["payload"]["body"]["payload"]["total"] += 100
            lines[i], reveal_seq = json.dumps(data), data["seq"]
    export.write_text("\n".join(lines) + "\n")
    result = run(str(export))
    assert result.returncode == 1
    assert f"BAD seq {reveal_seq}: its body_digest" in result.stdout  # the reveal's own link breaks first...
    assert f"BAD seq {reveal_seq}: the revealed body does not match #{table.revealed.seq}" in result.stdout


def test_a_file_that_is_not_an_export_is_a_clear_error(tmp_path):
    path = tmp_path / "notes.jsonl"
    path.write_text('{"seq": 1, "type": "roll"}\n')
    result = run(str(path), "--campaign-id", "1")
    assert result.returncode == 2 and result.stdout.startswith("BAD export: line 1 is not an event")
    assert not result.stderr  # no traceback


def test_a_session_started_again_with_a_new_commitment_is_named(table, tmp_path):
    """A host's server that starts a running session again, with a new commitment, once it has seen
    the dice it wants to change: the verifier took the last start of a session number as its only
    one and checked the dice from there on, so the dice before it (aimed at will) were never checked."""
    from campaign.fairdice import derive_face
    from campaign.models import DiceSeed, Event

    table.command(table.gm, {"type": "start_session"})
    aimed = table.command(table.alice, {"type": "roll", "notation": "1d20"}).events[0]
    table.command(table.gm, {"type": "end_session"})
    table.command(table.gm, {"type": "start_session"})
    later = table.command(table.bob, {"type": "roll", "notation": "1d20"}).events[0]
    table.command(table.gm, {"type": "end_session"})
    seed = DiceSeed.objects.get(campaign=table.campaign, session=2).seed
    # Session 1 was never ended; session 2 was session 1 started again, with dice to match.
    first_end = Event.objects.get(campaign=table.campaign, type="session_ended", session=1)
    host.delete_and_renumber(table.campaign, first_end.seq)
    face = (aimed.payload["dice_log"][0][1] % 20) + 1
    host.edit_row(table.campaign, aimed.seq, {**aimed.payload, "dice_log": [[20, face]], "total": face},
                  session=1, scene=None)
    for event in Event.objects.filter(campaign=table.campaign, session=2).order_by("seq"):
        payload = {**event.payload, "session": 1} if "session" in event.payload else dict(event.payload)
        if event.pk == later.pk:
            again = derive_face(seed, table.campaign.id, 1, event.actor_id, payload["command_id"], 0, 20)
            payload.update(dice_log=[[20, again]], total=again)
        host.edit_row(table.campaign, event.seq, payload, session=1, scene=event.scene)
    result = run(download(table, table.bob, tmp_path))
    assert result.returncode == 1, result.stdout
    assert f"BAD seq {aimed.seq + 1}" in result.stdout or f"BAD seq {aimed.seq}" in result.stdout, result.stdout


@pytest.mark.parametrize("sealed", ["session_started", "session_ended"])
def test_a_session_whose_start_or_end_the_host_sealed_is_named(table, tmp_path, sealed):
    """A host's server aims Alice's die and stores the session's start (or its end) for the GM alone: a
    member reads it sealed, so the verifier found no start (or no end) of that session, and checked none
    of its dice, and said OK."""
    from campaign.models import Event

    table.command(table.gm, {"type": "start_session"})
    aimed = table.command(table.alice, {"type": "roll", "notation": "1d20"}).events[0]
    table.command(table.gm, {"type": "end_session"})
    table.command(table.bob, {"type": "roll", "notation": "1d6"})  # the log goes on after the session
    face = aimed.payload["dice_log"][0][1] % 20 + 1
    host.edit_payload(table.campaign, aimed.seq, {**aimed.payload, "dice_log": [[20, face]], "total": face})
    frame = Event.objects.get(campaign=table.campaign, type=sealed).seq
    host.seal(table.campaign, frame)
    result = run(download(table, table.bob, tmp_path))
    assert result.returncode == 1, result.stdout
    assert f"BAD seq {frame}: session 1" in result.stdout, result.stdout


def sealed_stub(event: dict) -> dict:
    """``event`` as a member who may not read it receives it (docs/fair-dice.md, section 4)."""
    keys = ("seq", "format", "actor", "actor_id", "session", "scene", "visibility", "created_at", "prev_hash", "hash")
    return {**{k: event[k] for k in keys}, "hidden": True, "type": "sealed", "version": 1, "character": None,
            "character_name": None, "body_digest": event["body_digest"],
            "payload": {"hidden": True, "commitment": event["body_digest"]}}


def test_a_public_event_served_sealed_is_named(table, tmp_path):
    """A host's server that aims Bob's public roll can serve it sealed in the exports (and the events API
    the verification page reads) while the table shows it: its hash checks through its body digest, so
    the verifier counted it among the events sealed from this member and checked none of its dice. No
    member may be kept from a public event."""
    an_evening(table)
    export = Path(download(table, table.alice, tmp_path))
    lines = [json.loads(line) for line in export.read_text().splitlines()]
    lines = [sealed_stub(e) if e.get("seq") == table.public.seq else e for e in lines]
    export.write_text("".join(json.dumps(e) + "\n" for e in lines))
    result = run(str(export))
    assert result.returncode == 1, result.stdout
    assert f"BAD seq {table.public.seq}: a public event served sealed" in result.stdout


def test_a_new_session_started_under_the_old_dice_scheme_is_named(table, tmp_path):
    """Scheme v1 keyed a die on its seq and on seeds anyone could add, so a host could aim it (filler events
    first); it is verified for the logs that have it, not trusted. A host's server that started a new
    session as v1 rolled dice of its choosing that the verifier checked, as v1, and passed (the
    verification page did not even look: "v1, left to verify_dice"). v1 sessions predate hash format 2:
    a format-2 event never starts one, and a log's format never goes back to 1."""
    from campaign.fairdice import SCHEME_V1, derive_face_v1, player_mix
    from campaign.models import DiceSeed

    start = table.command(table.gm, {"type": "start_session"}).events[0]
    roll = table.command(table.alice, {"type": "roll", "notation": "1d20"}).events[0]
    table.command(table.gm, {"type": "end_session"})
    seed = DiceSeed.objects.get(campaign=table.campaign, session=1).seed
    host.edit_payload(table.campaign, start.seq, {**start.payload, "dice_scheme": SCHEME_V1})
    face = derive_face_v1(seed, table.campaign.id, 1, roll.seq, 0, 20, player_mix([]))  # the seq the host picked
    payload = {k: v for k, v in roll.payload.items() if k not in ("dice_scheme", "command_id", "action")}
    host.edit_payload(table.campaign, roll.seq, {**payload, "dice_log": [[20, face]], "total": face})
    result = run(download(table, table.bob, tmp_path))
    assert result.returncode == 1, result.stdout
    assert f"BAD seq {start.seq}: session 1 starts under dice scheme v1" in result.stdout


def test_an_old_log_of_scheme_v1_in_format_1_grown_in_format_2_still_verifies(table_for, tmp_path, monkeypatch):
    from campaign import log
    from tests.campaign.test_fairdice import play_a_session, write_v1_session

    monkeypatch.setattr(log, "CURRENT_FORMAT", log.FORMAT_1)  # the campaign too, as the old server made it
    table = table_for("tote")
    write_v1_session(table, monkeypatch)
    play_a_session(table)
    result = run(download(table, table.gm, tmp_path))
    assert result.returncode == 0, result.stdout
    assert " in 2 finished session(s)" in result.stdout


def test_a_format_1_event_after_format_2_is_named(table, tmp_path):
    """The same session started under v1, its start hashed in format 1 as the old sessions' were: a log's
    format never goes back (and a sealed format-1 event is one a member can't even rehash)."""
    from campaign.fairdice import SCHEME_V1

    start = table.command(table.gm, {"type": "start_session"}).events[0]
    host.edit_payload(table.campaign, start.seq, {**start.payload, "dice_scheme": SCHEME_V1})
    host.set_format(table.campaign, start.seq, 1)
    result = run(download(table, table.bob, tmp_path))
    assert result.returncode == 1, result.stdout
    assert f"BAD seq {start.seq}: hash format 1 after format 2" in result.stdout


def test_a_session_stamped_as_a_float_is_read_as_its_number(table, tmp_path):
    """JCS writes 1.0 as 1, so an export may say "session": 1.0 and every hash still holds: the verifier
    took such a stamp for no session's, and so missed that session's start sealed from this member."""
    from campaign.models import Event

    table.command(table.gm, {"type": "start_session"})
    table.command(table.alice, {"type": "roll", "notation": "1d20"})
    table.command(table.gm, {"type": "end_session"})
    start = Event.objects.get(campaign=table.campaign, type="session_started").seq
    host.seal(table.campaign, start)
    export = Path(download(table, table.bob, tmp_path))
    lines = [json.loads(line) for line in export.read_text().splitlines()]
    for line in lines:
        if isinstance(line.get("session"), int):
            line["session"] = float(line["session"])
    export.write_text("".join(json.dumps(e) + "\n" for e in lines))
    result = run(str(export))
    assert result.returncode == 1, result.stdout
    assert f"BAD seq {start}: session 1's start" in result.stdout


def test_a_command_id_stored_twice_is_named(table, tmp_path):
    """The same id rolls the same dice, and a member's id is used once (the Command table's constraint).
    A host's server that stored Alice's later test under the id of her earlier fumble got the fumble's
    dice again, each matching the seed: the verifier checked each die and passed both."""
    table.command(table.gm, {"type": "start_session"})
    fumble = table.command(table.alice, {"type": "roll", "notation": "1d20"}).events[0]
    later = table.command(table.alice, {"type": "roll", "notation": "1d20"}).events[0]
    table.command(table.gm, {"type": "end_session"})
    host.edit_payload(table.campaign, later.seq, {**later.payload, "command_id": fumble.payload["command_id"],
                                                  "dice_log": fumble.payload["dice_log"],
                                                  "total": fumble.payload["total"]})
    result = run(download(table, table.bob, tmp_path))
    assert result.returncode == 1, result.stdout
    assert f"BAD seq {later.seq}: command id {fumble.payload['command_id']} of this member was used before, " \
           f"in #{fumble.seq}" in result.stdout
