"""The backup and restore procedure of docs/operations.md, run as written: `pg_dump` of a live
campaign, `pg_restore` into a fresh database, and the log, the dice and a member's receipt verified
there by the operator's commands, in their own processes. And what an older backup means for a
receipt: the missing seqs named, not "rewritten"."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import psycopg
import pytest
from django.db import connection

from tests.campaign.served import client_for
from tests.campaign.test_standalone_verifier import an_evening
from tests import servers

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]
ROOT = Path(__file__).resolve().parents[2]


def run(*command: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(list(command), cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)


def keep_receipt(table, tmp_path, name: str) -> tuple[dict, str]:
    res = client_for(table.alice).post(f"/api/campaigns/{table.campaign.slug}/checkpoints")
    assert res.status_code in (200, 201)  # 200: the one already signed at this head (a session's end signs one)
    path = tmp_path / name
    path.write_text(json.dumps(res.json()))
    return res.json(), str(path)


@pytest.fixture
def fresh_database(require_postgres):
    """An empty database beside the test database, dropped afterwards: where the dump goes back."""
    name = f"{connection.settings_dict['NAME']}_restored"
    admin = servers.test_database_url().rsplit("/", 1)[0] + "/postgres"
    with psycopg.connect(admin, autocommit=True) as db:
        db.execute(f'DROP DATABASE IF EXISTS "{name}"')
        db.execute(f'CREATE DATABASE "{name}"')
    yield servers.test_database_url().rsplit("/", 1)[0] + f"/{name}"
    with psycopg.connect(admin, autocommit=True) as db:
        db.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def test_a_dump_restored_into_a_fresh_database_verifies_and_names_what_an_older_one_lost(
        transactional_table, tmp_path, fresh_database):
    table = transactional_table
    an_evening(table)  # a finished session: seed revealed, a checkpoint signed at its end
    kept, kept_path = keep_receipt(table, tmp_path, "kept.json")
    dump = tmp_path / "talekeeper.dump"
    done = run("pg_dump", "--format=custom", "--no-owner", f"--file={dump}", f"--dbname={servers.test_database_url()}")
    assert done.returncode == 0, done.stderr
    # The table plays on after the backup; a member keeps a receipt of it.
    table.command(table.gm, {"type": "start_session"})
    table.command(table.alice, {"type": "roll", "notation": "2d6"})
    table.command(table.bob, {"type": "roll", "notation": "1d20"})
    later, later_path = keep_receipt(table, tmp_path, "later.json")

    done = run("pg_restore", "--no-owner", "--exit-on-error", f"--dbname={fresh_database}", str(dump))
    assert done.returncode == 0, done.stderr
    env = {**os.environ, "DATABASE_URL": fresh_database, "DB_POOL_MAX": "0"}
    slug = table.campaign.slug
    manage = [sys.executable, "manage.py"]
    done = run(*manage, "migrate", "--check", env=env)
    assert done.returncode == 0, done.stdout + done.stderr  # nothing left to apply
    done = run(*manage, "verify_log", slug, "--receipt", kept_path, env=env)
    assert done.returncode == 0 and done.stdout.startswith(f"OK {kept['seq']} events, extending 1 receipt"), \
        done.stdout + done.stderr
    done = run(*manage, "verify_dice", slug, "--session", "1", env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    done = run(*manage, "rebuild_projections", "--campaign", slug, "--check", env=env)
    assert done.returncode == 0, done.stdout + done.stderr

    # The later receipt names exactly what the older backup lost.
    done = run(*manage, "verify_log", slug, "--receipt", later_path, env=env)
    assert done.returncode == 1
    assert (f"BAD seq {later['seq']}: the log ends before the receipt's seq {later['seq']}: "
            f"events {kept['seq'] + 1}-{later['seq']} missing (restored from a backup older than the receipt"
            in done.stderr), done.stderr
