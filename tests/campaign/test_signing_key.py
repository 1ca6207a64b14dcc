"""The server's signing key (campaign/signing.py): made by one command only, required at startup and
by `check --deploy`, rotated with the retired key kept in `/api/key` so older receipts still verify."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError, SystemCheckError
from django.test import Client

from campaign import signing
from tests.campaign.test_checkpoints import an_evening, ask_for_receipt, refused, verify_log, write
from tests.campaign.test_standalone_verifier import download, run

# Does not depend on the database engine (the key file and its commands): the SQLite pass leaves it out.
pytestmark = pytest.mark.one_database

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def key_at(tmp_path, monkeypatch):
    """``SIGNING_KEY_PATH`` pointing at a file of this test's (not yet made)."""
    path = tmp_path / "keys" / "signing.key"
    path.parent.mkdir()
    monkeypatch.setenv("SIGNING_KEY_PATH", str(path))
    return path


def test_a_missing_key_is_refused_by_name_and_never_made_by_a_reader(key_at, table, tmp_path):
    an_evening(table)
    with pytest.raises(signing.MissingKey, match="manage.py create_signing_key"):
        signing.signing_key()
    # A read-only command asked to check a receipt says why it can't, and makes no key.
    assert "create_signing_key" in refused(table, write(tmp_path, {"campaign": "torn-road", "seq": 1, "hash": "0" * 64,
                                                                   "created_at": "x", "signature": "AA=="}))
    assert not key_at.exists() and list(key_at.parent.iterdir()) == []


def test_check_deploy_fails_without_the_key_naming_the_command(key_at, db):
    with pytest.raises(SystemCheckError) as caught:
        call_command("check", "--deploy", "--fail-level", "ERROR")
    assert "talekeeper.E001" in str(caught.value) and "manage.py create_signing_key" in str(caught.value)
    signing.create_key(key_at)
    errors = io.StringIO()
    call_command("check", "--deploy", "--fail-level", "ERROR", stdout=errors)  # warnings, no error
    assert "talekeeper.E001" not in errors.getvalue()


def test_daphne_will_not_start_without_the_key(key_at):
    env = {**os.environ, "SIGNING_KEY_PATH": str(key_at)}
    done = subprocess.run([sys.executable, "-m", "daphne", "-b", "127.0.0.1", "-p", "0", "campaign.asgi:application"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 1
    assert "can't start" in done.stderr and "manage.py create_signing_key" in done.stderr
    assert not key_at.exists()


def test_create_signing_key_makes_it_owner_only_once_and_never_replaces_it(key_at, db):
    out = io.StringIO()
    call_command("create_signing_key", stdout=out)
    assert key_at.stat().st_mode & 0o777 == 0o600 and signing.public_key_b64() in out.getvalue()
    first = key_at.read_bytes()
    with pytest.raises(CommandError, match="already at .* rotate_signing_key"):
        call_command("create_signing_key")
    call_command("create_signing_key", "--exist-ok")
    assert key_at.read_bytes() == first
    [listed] = Client().get("/api/key").json()["keys"]
    assert listed["public_key"] == signing.public_key_b64() and listed["valid_until"] is None


def test_a_rotation_retires_the_key_and_receipts_from_before_it_still_verify(key_at, table, tmp_path):
    signing.create_key(key_at)
    an_evening(table)
    before = ask_for_receipt(table, table.alice)
    old = Client().get("/api/key").json()
    call_command("rotate_signing_key", stdout=io.StringIO())
    table.command(table.alice, {"type": "roll", "notation": "2d6"})
    after = ask_for_receipt(table, table.alice)

    answer = Client().get("/api/key").json()
    retired, current = answer["keys"]
    assert retired["public_key"] == old["public_key"] != current["public_key"] == answer["public_key"]
    assert retired["valid_until"] == current["valid_from"] and current["valid_until"] is None
    assert before["created_at"] < retired["valid_until"] <= after["created_at"]
    assert verify_log(table, write(tmp_path, [before, after])).startswith("OK")

    # The standalone verifier reads the same answer (and the one-key answer of a server before rotation).
    export = download(table, table.alice, tmp_path)
    keys = tmp_path / "key.json"
    keys.write_text(json.dumps(answer))
    result = run(export, "--receipt", write(tmp_path, [before, after], "both.json"), "--key-file", str(keys))
    assert result.returncode == 0, result.stdout
    keys.write_text(json.dumps({"algorithm": "ed25519", "public_key": old["public_key"]}))
    assert run(export, "--receipt", write(tmp_path, before, "before.json"), "--key-file", str(keys)).returncode == 0
    result = run(export, "--receipt", write(tmp_path, after, "after.json"), "--key-file", str(keys))
    assert result.returncode == 1 and "signature is not the server key's" in result.stdout


def test_a_retired_key_vouches_for_nothing_signed_after_it_retired(key_at, table, tmp_path):
    """A leaked retired key can't make a receipt the checks accept: its validity ended."""
    import base64

    from campaign.checkpoints import message

    signing.create_key(key_at)
    an_evening(table)
    retired_key = signing.signing_key()
    call_command("rotate_signing_key", stdout=io.StringIO())
    receipt = ask_for_receipt(table, table.bob)  # signed now, by the new key
    forged = {**receipt, "signature": base64.b64encode(retired_key.sign(message(receipt))).decode("ascii")}
    assert "the receipt's signature is not this server's key" in refused(table, write(tmp_path, forged))


def test_receipts_verify_where_only_the_public_keys_are(key_at, table, tmp_path):
    signing.create_key(key_at)
    an_evening(table)
    receipt = write(tmp_path, ask_for_receipt(table, table.alice))
    key_at.unlink()  # a host that checks a restored backup holds the list of public keys, not the key
    assert verify_log(table, receipt).startswith("OK")


def test_every_process_signs_with_the_rotated_key_without_a_restart(key_at, db):
    signing.create_key(key_at)
    first = signing.public_key_b64()  # this process has read the key
    old, new = signing.rotate_key()  # as another process's `rotate_signing_key` would
    assert old == first and signing.public_key_b64() == new != first
