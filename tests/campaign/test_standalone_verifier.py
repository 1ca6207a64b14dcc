"""tools/talekeeper_verify.py, run as a member would run it: its own process, no site-packages,
no Talekeeper code, on an export downloaded through the API plus receipts and the server's key."""

from __future__ import annotations

import base64
import copy
import hashlib
import json
import subprocess
import sys
from pathlib import Path

import pytest
from django.test import Client

from campaign.models import Event
from tests.campaign import host
from tests.campaign.served import client_for

# Does not depend on the database engine (the verifier reads an export file, whichever database wrote it): the
# SQLite pass leaves it out.
pytestmark = pytest.mark.one_database

VERIFIER = Path(__file__).resolve().parents[2] / "tools" / "talekeeper_verify.py"


def download(table, user, tmp_path, name="export.jsonl") -> str:
    res = client_for(user).get(f"/api/campaigns/{table.campaign.slug}/export.jsonl?header=1")
    assert res.status_code == 200
    path = tmp_path / name
    path.write_bytes(b"".join(res.streaming_content))
    return str(path)


def keep_receipt(table, user, tmp_path, name="receipt.json") -> str:
    res = client_for(user).post(f"/api/campaigns/{table.campaign.slug}/checkpoints")
    assert res.status_code in (200, 201)  # 200: the one already signed at this head
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
    from campaign.eventlog import FORMAT_1, store
    from campaign.fairdice import verify_session
    from tests.campaign.test_fairdice import TEXT_SEEDS, write_v1_session

    monkeypatch.setattr(store, "CURRENT_FORMAT", FORMAT_1)  # the campaign too, as the old server made it
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
    assert f"BAD seq {json.load(open(receipt))['seq']}: the event's hash differs from your receipt's" in result.stdout


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
    first_bad = next(line for line in result.stdout.splitlines() if line.startswith("BAD"))
    assert first_bad == f"BAD seq {table.public.seq}: its body_digest is not the digest of its body"


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
    from campaign.eventlog import FORMAT_1, store
    from tests.campaign.test_fairdice import play_a_session, write_v1_session

    monkeypatch.setattr(store, "CURRENT_FORMAT", FORMAT_1)  # the campaign too, as the old server made it
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


# --- the tool in this process: signed logs written from the spec (tests/campaign/signed_log.py) -------

def tool():
    import importlib.util

    spec = importlib.util.spec_from_file_location("talekeeper_verify", VERIFIER)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def verdict(capsys, path: str, *args: str) -> tuple[int, str]:
    status = tool().main([path, *args])
    return status, capsys.readouterr().out


def an_evening_signed():
    from tests.campaign.signed_log import SignedLog

    log = SignedLog()
    log.start_session()
    log.roll("alice", "1d20+2")
    log.roll("bob", "3d6")
    log.end_session()
    return log


def test_a_signed_log_verifies_and_says_from_where(tmp_path, capsys):
    log = an_evening_signed()
    status, out = verdict(capsys, log.export(tmp_path / "e.jsonl"))
    assert status == 0, out
    assert out.splitlines()[-1].endswith("signed from #1") and ", 2 command(s) replayed by the rules" in out


def test_an_old_log_says_which_guarantees_it_lacks(table, tmp_path):
    an_evening(table)
    result = run(download(table, table.bob, tmp_path))
    assert result.returncode == 0, result.stdout
    assert "note: not signed: " in result.stdout and "in a member's name" in result.stdout
    assert result.stdout.splitlines()[-1].endswith(", not signed")


def signed_attack(name: str, log) -> int:
    """One dishonest host's edit of ``log``; returns the seq every verifier must name."""
    from tests.campaign.signed_log import USERS, public_key

    alice = next(e for e in log.events if e["type"] == "roll" and e["actor"] == "alice")
    payload = alice["payload"]
    if name == "forged unsigned command":
        # The host writes a roll in Alice's name: it can't sign it.
        forged = copy.deepcopy(alice)
        for key in ("command_id", "action", "signature"):
            forged["payload"].pop(key)
        log.insert(alice["seq"] + 1, forged)
        return alice["seq"] + 1
    if name == "action changed under a valid signature":
        # A key the table leaves out when it is zero: same dice, another outcome.
        payload["action"]["modifier"] = 20
    elif name == "ground id marked not verifiable":
        payload["command_id"] = "f" * 32
        payload["verifiable"] = False
    elif name == "signature replayed into another session":
        # Her retry, pending when the session ended, stored in the next one (its seed ground for her id).
        moved = copy.deepcopy(alice)
        log.events.remove(alice)
        log.start_session()
        moved["session"] = log.session
        log.events.append(moved)
        log.end_session()
        log.rechain()
        return moved["seq"]
    elif name == "signature replayed into another campaign":
        payload["signature"] = log.signature("alice", payload["command_id"], payload["action"], session=alice["session"],
                                             campaign_id=log.campaign_id + 1)
    elif name == "signed by another member's key":
        payload["signature"] = log.signature("alice", payload["command_id"], payload["action"], key_of="bob",
                                             session=1)
    elif name == "key added without its own signature":
        # The host registers a key of its own for Alice, signed by a key it holds, and signs with it.
        rogue = copy.deepcopy(log.at(3))
        host_key = public_key("host")
        rogue["payload"] = {"key": host_key, "label": "phone", "command_id": "0" * 32,
                            "action": {"type": "add_member_key", "key": host_key, "label": "phone"}}
        rogue["payload"]["signature"] = log.signature("alice", "0" * 32, rogue["payload"]["action"], key_of="gm",
                                                      session=None)
        rogue["actor"], rogue["actor_id"] = "alice", USERS["alice"]
        at = alice["seq"] - 1
        log.insert(at, rogue)  # before the session starts
        return at
    elif name == "command id used twice":
        bob = next(e for e in log.events if e["type"] == "roll" and e["actor"] == "bob")
        twice = copy.deepcopy(alice)
        log.insert(bob["seq"] + 1, twice)
        return bob["seq"] + 1
    elif name == "signed by a revoked key":
        # Alice revoked her laptop's key from her phone; the host signs nothing, but replays an old
        # signature of the laptop's: stored after the revocation, it is named.
        log.register("alice", "phone", key_name="alice-phone")
        revoked = log.revoke("alice", "alice", by_key="alice-phone")
        log.start_session()
        later = log.roll("alice", "1d20+2")
        assert revoked["seq"] < later["seq"]
        return later["seq"]
    elif name == "filled overwrites the action":
        payload["filled"] = {"notation": "1d20+20"}
    elif name == "a later session under the old scheme":
        log.start_session()
        log.at(len(log.events))["payload"]["dice_scheme"] = "talekeeper-hmac-sha256-v2"
        log.rechain()
        return len(log.events)
    elif name == "later event of another member's command":
        bob = next(e for e in log.events if e["type"] == "roll" and e["actor"] == "bob")
        bob["payload"] = {"command_of": alice["seq"], **{k: v for k, v in bob["payload"].items()
                                                          if k not in ("command_id", "action", "signature")}}
        log.rechain()
        return bob["seq"]
    else:
        raise AssertionError(name)
    log.rechain()
    return alice["seq"]


SIGNED_ATTACKS = {
    "forged unsigned command": "not signed: a member's event with no signed command behind it",
    "action changed under a valid signature": "its signature does not verify over the action stored",
    "ground id marked not verifiable": "its signature does not verify over the action stored",
    "signature replayed into another session": "signed for session 1 (commitment",
    "signature replayed into another campaign": "its signature does not verify over the action stored",
    "signed by another member's key": "signed by another member's key",
    "signed by a revoked key": "signed by a key revoked at #",
    "key added without its own signature": "a key registered without its own signature",
    "command id used twice": "of this member was used before",
    "filled overwrites the action": "its 'filled' numbers overwrite keys of the signed action",
    "a later session under the old scheme": "a log never goes back",
    "later event of another member's command": "by another member or in another session",
}


@pytest.mark.parametrize("attack", sorted(SIGNED_ATTACKS))
def test_a_dishonest_hosts_edit_of_a_signed_log_is_named(tmp_path, capsys, attack):
    """Each edit a host could make to a signed log, every hash recomputed after it: the verifier names
    the event and why (before signed commands, it checked none of this)."""
    log = an_evening_signed()
    seq = signed_attack(attack, log)
    status, out = verdict(capsys, log.export(tmp_path / "e.jsonl"))
    assert status == 1, out
    assert f"BAD seq {seq}: " in out and SIGNED_ATTACKS[attack] in out, out


# --- Ed25519, as the verifier checks receipts and members' signatures without `cryptography` -----------

# RFC 8032, section 7.1: TEST 1, 2 and 3 (secret key, public key, message, signature; hex).
RFC8032 = [
    ("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60",
     "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a", "",
     "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b"),
    ("4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb",
     "3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c", "72",
     "92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da085ac1e43e15996e458f3613d0f11d8c387b2eaeb4302aeeb00d291612bb0c00"),
    ("c5aa8df43f9f837bedb7442f31dcb7b166d38535076f094b85ce3a2e0b4458f7",
     "fc51cd8e6218a1a38da47ed00230f0580816ed13ba3303ac5deb911548908025", "af82",
     "6291d657deec24024827e69c3abe01a30ce548a284743a445e3680d7db5ac3ac18ff9b538d16f290ae67f760984dc6594a7c15e9716ed28dc027beceea1ec40a"),
]


@pytest.mark.parametrize("secret, public, message, signature", RFC8032)
def test_ed25519_verifies_the_rfc_8032_vectors_and_nothing_else(secret, public, message, signature):
    verify = tool().ed25519_verify
    public, message, signature = bytes.fromhex(public), bytes.fromhex(message), bytes.fromhex(signature)
    assert verify(public, message, signature)
    assert not verify(public, message + b"!", signature)
    assert not verify(public, message, signature[:63] + bytes([signature[63] ^ 1]))
    assert not verify(public, message, signature[:32] + (int.from_bytes(signature[32:], "little") +
                                                         2**252 + 27742317777372353535851937790883648493).to_bytes(32, "little"))


def test_ed25519_agrees_with_cryptography():
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    verify = tool().ed25519_verify
    for n in range(12):
        key = Ed25519PrivateKey.from_private_bytes(bytes([n]) * 32)
        public = key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
        message = json.dumps({"n": n, "text": "ünïcode"}).encode() * n
        signature = key.sign(message)
        assert verify(public, message, signature)
        other = Ed25519PrivateKey.from_private_bytes(bytes([n + 100]) * 32).sign(message)
        assert not verify(public, message, other)


# --- receipts in either shape, restores, retired keys, anchors --------------------------------

def checkpoints_list(table, user, tmp_path) -> str:
    """``GET .../checkpoints`` saved as it came: ``{"checkpoints": [...]}``."""
    res = client_for(user).get(f"/api/campaigns/{table.campaign.slug}/checkpoints")
    assert res.status_code == 200 and res.json()["checkpoints"]
    path = tmp_path / "checkpoints.json"
    path.write_text(res.content.decode())
    return str(path)


def test_the_checkpoints_list_saved_as_a_file_verifies(table, tmp_path):
    """Saved from the table's list, the receipts file was read as one checkpoint without a signature:
    the verifier called the server's own checkpoints a forgery."""
    an_evening(table)  # its end signs a checkpoint
    keep_receipt(table, table.bob, tmp_path)
    listed = checkpoints_list(table, table.bob, tmp_path)
    bare = tmp_path / "bare.json"
    bare.write_text(json.dumps(json.load(open(listed))["checkpoints"]))
    result = run(download(table, table.bob, tmp_path), "--receipt", listed, "--receipt", str(bare),
                 "--key-file", key_file(tmp_path))
    assert result.returncode == 0, result.stdout
    assert f"{2 * len(json.load(open(listed))['checkpoints'])} receipt(s)" in result.stdout


def test_a_restore_that_lost_receipted_events_is_named_as_such(table, tmp_path):
    an_evening(table)
    table.command(table.alice, {"type": "roll", "notation": "1d6"})
    receipt = keep_receipt(table, table.bob, tmp_path)
    covered = json.load(open(receipt))["seq"]
    host.truncate(table.campaign, covered - 3)  # the database restored from a backup three events older
    result = run(download(table, table.bob, tmp_path), "--receipt", receipt, "--key-file", key_file(tmp_path))
    assert result.returncode == 1
    # One verdict, the restore, named as such: not a rewrite, not a forged signature.
    assert [line for line in result.stdout.splitlines() if line.startswith("BAD")] == [
        f"BAD seq {covered}: the log ends at #{covered - 3} but your receipt covers #{covered}: events "
        f"{covered - 2}..{covered} are missing, as after a restore from an older backup"]


def test_a_receipt_signed_by_a_retired_key_verifies_while_the_key_list_covers_it(table, tmp_path):
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    from campaign.checkpoints import message

    an_evening(table)
    table.campaign.refresh_from_db()
    retired = Ed25519PrivateKey.from_private_bytes(b"\x07" * 32)
    receipt = {"campaign": table.campaign.slug, "seq": table.campaign.last_seq, "hash": table.campaign.head_hash,
               "created_at": "2026-01-10T20:00:00.000000+00:00"}
    receipt["signature"] = base64.b64encode(retired.sign(message(receipt))).decode()
    (tmp_path / "old.json").write_text(json.dumps(receipt))
    current = json.loads(Client().get("/api/key").content)["public_key"]
    raw = retired.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    rotated = "2026-02-01T00:00:00.000000+00:00"

    def keys(valid_until):
        listed = {"algorithm": "ed25519", "public_key": current,
                  "keys": [{"public_key": base64.b64encode(raw).decode(), "valid_from": None, "valid_until": valid_until},
                           {"public_key": current, "valid_from": valid_until, "valid_until": None}]}
        path = tmp_path / "keys.json"
        path.write_text(json.dumps(listed))
        return str(path)

    export = download(table, table.bob, tmp_path)
    result = run(export, "--receipt", str(tmp_path / "old.json"), "--key-file", keys(rotated))
    assert result.returncode == 0, result.stdout
    # Signed after the key retired: a leaked retired key vouches for nothing new.
    result = run(export, "--receipt", str(tmp_path / "old.json"), "--key-file", keys("2026-01-01T00:00:00.000000+00:00"))
    assert result.returncode == 1 and "signed by a server key that was not valid at its time" in result.stdout
    result = run(export, "--receipt", str(tmp_path / "old.json"), "--key-file", key_file(tmp_path))
    assert result.returncode == 1 and "none of the keys given signs it" in result.stdout


def test_anchor_lines_pasted_from_a_chat_check_against_the_log(table, tmp_path):
    an_evening(table)
    table.campaign.refresh_from_db()
    seq, digest, slug = table.campaign.last_seq, table.campaign.head_hash, table.campaign.slug
    line = tool().anchor_line(slug, seq, digest)
    assert line == f"Talekeeper {slug} #{seq} " + " ".join(digest[i:i + 4] for i in range(0, 24, 4))
    export = download(table, table.bob, tmp_path)
    pasted = f"  `talekeeper  {slug} #{seq}\t{digest[:24].upper()}` "  # as a chat app may give it back
    result = run(export, "--anchor", line, "--anchor", pasted)
    assert result.returncode == 0 and "2 anchor(s)" in result.stdout, result.stdout
    other = tool().anchor_line("another-table", seq, digest)
    result = run(export, "--anchor", other)
    assert result.returncode == 1 and f"this anchor is for campaign 'another-table', not '{slug}'" in result.stdout
    result = run(export, "--anchor", f"Talekeeper {slug} #{seq} 1234")
    assert result.returncode == 2 and result.stdout.startswith("BAD input: not an anchor line") and not result.stderr
    table.command(table.alice, {"type": "roll", "notation": "1d6"})
    host.edit_payload(table.campaign, seq - 1, {**Event.objects.get(campaign=table.campaign, seq=seq - 1).payload,
                                                 "rewritten": True})
    result = run(download(table, table.bob, tmp_path), "--anchor", line)
    assert result.returncode == 1 and f"BAD seq {seq}: the event's hash differs from the anchor's: the log was " \
                                      f"rewritten up to #{seq}" in result.stdout
    host.truncate(table.campaign, seq - 2)
    result = run(download(table, table.bob, tmp_path), "--anchor", line)
    assert f"the log ends at #{seq - 2} but the anchor covers #{seq}" in result.stdout


# --- the rules, replayed on a member's export ---------------------------------------------------

def play_the_evening(table_for, system):
    """The contract's evening of ``system`` with the server's own dice (some steps may be refused)."""
    from campaign.actions import ActionError
    from rules import get_system
    from tests.contract.test_systems import EVENINGS

    table = table_for(system)
    rules = get_system(system)
    table.hero = table.create_character(table.alice, "Hero", rules.example_sheet)
    for who, action in EVENINGS[system]:
        if action["type"] in rules.actions:
            action = {**action, "character": table.hero.id}
        try:
            table.command(getattr(table, who), action)
        except ActionError:
            pass  # the server's dice may make a later step impossible (no points to spend, ...)
    return table


def edit_an_outcome(table):
    """The host changes a stored outcome of a rules command and keeps its dice (every hash recomputed)."""
    rolled = [e for e in Event.objects.filter(campaign=table.campaign, session=1).order_by("-visibility", "seq")
              if e.payload.get("dice_log") and e.type not in ("roll", "bundle")]  # a public one first
    target = rolled[0]
    key = next(k for k in ("total", "successes", "outcome", "result", "success") if k in target.payload)
    value = target.payload[key]
    edited = not value if isinstance(value, bool) else (value + 1 if isinstance(value, int) else f"{value}!")
    host.edit_payload(table.campaign, target.seq, {**target.payload, key: edited})
    return target.seq


@pytest.mark.parametrize("system", ["tote", "wyrm", "tale", "mdt"])
def test_every_systems_evening_replays_and_an_edited_outcome_is_named(table_for, tmp_path, system):
    """The verifier replays the rules: a stored outcome the rules would not make from its dice, which
    every die still matching the seed let through (only verify_dice, on the host's database, replayed)."""
    table = play_the_evening(table_for, system)
    for user in (table.gm, table.alice, table.bob):
        result = run(download(table, user, tmp_path))
        assert result.returncode == 0, (user.username, result.stdout)
        replayed = int(result.stdout.splitlines()[-1].split(" command(s) replayed")[0].rsplit(" ", 1)[1])
        assert replayed >= (2 if user == table.gm else 0), result.stdout  # the GM reads every command
    seq = edit_an_outcome(table)
    result = run(download(table, table.gm, tmp_path))
    assert result.returncode == 1, result.stdout
    assert f"BAD seq {seq}: its outcome is not what the rules decide with these dice" in result.stdout


def test_a_shown_die_that_is_not_in_the_dice_log_is_named(table, tmp_path):
    """The table draws ``dice[].face``; the seed checks ``dice_log``. A host's server that shows a 6
    the log does not hold (and totals it) passed every die check."""
    an_evening(table)
    roll = table.public
    payload = json.loads(json.dumps(roll.payload))
    term = payload["terms"][0]
    shown = term["dice"][0]["face"]
    fake = 7 if shown != 7 else 8  # a face no d6 has: not in the log
    term["dice"][0]["face"] = fake
    term["value"] += fake - shown
    payload["total"] += fake - shown
    host.edit_payload(table.campaign, roll.seq, payload)
    result = run(download(table, table.alice, tmp_path))
    assert result.returncode == 1, result.stdout
    assert f"BAD seq {roll.seq}: shows a {fake} (term 1) that is not among its dice_log's faces" in result.stdout


# --- the built file, as a member runs it ------------------------------------------------------

def build(tmp_path, name="talekeeper-verify.pyz") -> Path:
    from campaign import verifier

    verifier.archive.cache_clear()  # built again from the sources, as `make verifier` does
    verifier.build(tmp_path / name)
    return tmp_path / name


def test_the_built_verifier_is_reproducible_and_holds_the_rules(tmp_path):
    import zipfile

    first, second = build(tmp_path, "a.pyz"), build(tmp_path, "b.pyz")
    assert first.read_bytes() == second.read_bytes()
    served = Client().get("/talekeeper-verify.pyz")  # what the server offers is the same file
    assert served.status_code == 200 and served.content == first.read_bytes()
    assert served["X-Content-SHA256"] == hashlib.sha256(first.read_bytes()).hexdigest()
    names = zipfile.ZipFile(first).namelist()
    assert names == sorted(names) and "__main__.py" in names and "rules/replay.py" in names
    assert not any("__pycache__" in n or n.endswith(".pyc") for n in names)


def test_end_to_end_a_real_campaigns_export_through_the_built_file(table_for, tmp_path):
    """From a real server campaign to the verdict: the .pyz run with ``python3 -I`` (and no site) in
    its own process, on the export and receipts a member downloaded; then on the same log after the
    host changed an outcome and kept the dice."""
    pyz = build(tmp_path)
    table = play_the_evening(table_for, "wyrm")
    receipt = keep_receipt(table, table.bob, tmp_path)

    def verify(*args):
        return subprocess.run([sys.executable, "-I", "-S", str(pyz), *args], capture_output=True, text=True,
                              timeout=120, cwd=tmp_path)

    result = verify(download(table, table.bob, tmp_path), "--receipt", receipt, "--key-file", key_file(tmp_path))
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.splitlines()[-1].startswith("OK ") and "replayed by the rules" in result.stdout
    seq = edit_an_outcome(table)
    result = verify(download(table, table.bob, tmp_path), "--receipt", receipt, "--key-file", key_file(tmp_path))
    assert result.returncode == 1, result.stdout + result.stderr
    assert f"BAD seq {seq}: its outcome is not what the rules decide" in result.stdout


def test_a_fights_round_replays_from_what_it_read(table_for, tmp_path):
    """A fight's round is decided from what the server read (``filled``) and the action, no sheet: the
    verifier replays it as verify_dice does, and names a round whose outcome was changed."""
    from tests.campaign.test_fights import tale_two_against_one

    table, ana, ben, bandit = tale_two_against_one(table_for)
    table.command(table.gm, {"type": "start_session"})
    table.command(table.gm, {"type": "start_fight", "sides": [{"character": ana.id, "team": "heroes"},
                                                              {"character": ben.id, "team": "heroes"},
                                                              {"character": bandit.id, "team": "bandits"}]})
    table.command(table.gm, {"type": "choose_in_fight", "character": bandit.id, "attack": {str(ben.id): 2},
                             "defence": 2})
    table.command(table.alice, {"type": "choose_in_fight", "character": ana.id, "attack": {str(bandit.id): 2},
                                "defence": 1})
    round_ = table.command(table.bob, {"type": "choose_in_fight", "character": ben.id,
                                       "attack": {str(bandit.id): 2}, "defence": 2}).events[0]
    table.command(table.gm, {"type": "end_session"})
    for user in (table.gm, table.alice):
        result = run(download(table, user, tmp_path))
        assert result.returncode == 0, (user.username, result.stdout)
    assert round_.payload.get("dice_log"), round_.payload
    rolled = json.loads(json.dumps(round_.payload))
    key = next(k for k in ("entries", "outcome", "result", "round") if k in rolled)
    rolled[key] = {"changed": True}
    host.edit_payload(table.campaign, round_.seq, rolled)
    result = run(download(table, table.gm, tmp_path))
    assert result.returncode == 1
    assert f"BAD seq {round_.seq}: its outcome is not what the rules decide" in result.stdout


def test_after_an_event_sealed_from_her_a_difference_is_a_note_and_the_gms_export_names_it(table_for, tmp_path):
    """A player's replay runs on the sheets she can see: once an event sealed from her comes first, the
    state the server decided on may hold it, so a difference is hers to note, not to call BAD; the GM,
    who reads everything, gets BAD."""
    from rules import get_system

    table = table_for("tote")
    hero = table.create_character(table.alice, "Hero", get_system("tote").example_sheet)
    table.command(table.gm, {"type": "start_session"})
    sealed = table.command(table.gm, {"type": "roll", "notation": "1d20", "visibility": "gm"}).events[0].seq
    target = table.command(table.alice, {"type": "skill_test", "character": hero.id, "skill": "Strike",
                                         "target": 10}).events[0]
    table.command(table.gm, {"type": "end_session"})
    payload = json.loads(json.dumps(target.payload))
    key = next(k for k in ("total", "successes", "outcome", "result", "success") if k in payload)
    payload[key] = not payload[key] if isinstance(payload[key], bool) else (
        payload[key] + 1 if isinstance(payload[key], int) else f"{payload[key]}!")
    host.edit_payload(table.campaign, target.seq, payload)
    result = run(download(table, table.bob, tmp_path))
    assert result.returncode == 0, result.stdout
    assert (f"note: seq {target.seq}: its outcome is not what the rules decide with these dice on the sheet as you "
            f"can see it; events sealed from you (from #{sealed}) came before it") in result.stdout
    result = run(download(table, table.gm, tmp_path))
    assert result.returncode == 1 and f"BAD seq {target.seq}: its outcome is not what the rules decide" in result.stdout


def test_an_export_saved_as_one_json_document_verifies(tmp_path, capsys):
    """``talekeeper-verify.pyz export.json``: the events as one JSON list (the header first, or none
    and --campaign-id), or as the events API pages them, verify as the JSON Lines file does."""
    log = an_evening_signed()
    lines = [json.loads(line) for line in open(log.export(tmp_path / "e.jsonl"))]
    (tmp_path / "list.json").write_text(json.dumps(lines, indent=1))
    (tmp_path / "page.json").write_text(json.dumps({"events": lines[1:], "head": None}))
    assert verdict(capsys, str(tmp_path / "list.json"))[0] == 0
    status, out = verdict(capsys, str(tmp_path / "page.json"), "--campaign-id", str(log.campaign_id))
    assert status == 0, out
