"""An upgrade on a running system, as docs/operations.md ("Upgrades") says to do it: `manage.py
migrate --plan`, then `manage.py migrate` while a daphne serves the table, the release bringing an
index on the event table.

The index is built ``CONCURRENTLY`` (campaign/migration_operations.py): while the build waits for
a transaction that is writing to the log, commands keep being stored. A plain ``CREATE INDEX``
would queue its SHARE lock behind that transaction, and every append behind the SHARE lock, until
each command gave up as ``table_busy``.

The release's migration is the test's own: the project's migrations are copied into a temporary
package with one more beside them, and the real ``manage.py migrate`` runs them
(``MIGRATION_MODULES``). The PostgreSQL cluster and redis-server are the test's own
(tests/faults/conftest.py).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time

import psycopg
import pytest

from tests.servers import ROOT

from .helpers import get_head, post_command

pytestmark = [pytest.mark.slow]

HANG = 60  # seconds any one step may take before the test fails (a bound on a hang, never what is checked)
INDEX = "campaign_event_upgrade_probe"
RELEASE_MIGRATION = '''from django.db import migrations, models

from campaign.migration_operations import AddIndexOnline


class Migration(migrations.Migration):
    atomic = False
    dependencies = [("campaign", "{last}")]
    operations = [AddIndexOnline("event", models.Index(fields=["campaign", "type", "seq"], name="{index}"))]
'''


def release(tmp_path) -> dict[str, str]:
    """The environment of `manage.py` run from a release whose one new migration adds ``INDEX``."""
    package = tmp_path / "release" / "release_migrations"
    shutil.copytree(ROOT / "campaign" / "migrations", package, ignore=shutil.ignore_patterns("__pycache__"))
    last = max(p.stem for p in package.glob("[0-9][0-9][0-9][0-9]_*.py"))
    number = int(last[:4]) + 1
    (package / f"{number:04d}_upgrade_probe.py").write_text(RELEASE_MIGRATION.format(last=last, index=INDEX))
    (tmp_path / "release" / "release_settings.py").write_text(
        "from campaign.settings import *  # noqa: F403\n"
        "MIGRATION_MODULES = {'campaign': 'release_migrations'}\n")
    return {"DJANGO_SETTINGS_MODULE": "release_settings",
            "PYTHONPATH": os.pathsep.join([str(tmp_path / "release"), str(ROOT)])}


def manage(env: dict, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=HANG)


def building(own_db) -> list[tuple]:
    """The migration's CREATE INDEX, while it waits for a lock."""
    return own_db.sql("SELECT wait_event FROM pg_stat_activity WHERE query ILIKE %s AND wait_event_type = 'Lock'",
                      (f"%CREATE INDEX%{INDEX}%",))


def test_migrate_while_the_table_plays_builds_the_event_index_without_stopping_appends(
        own_db, own_daphnes, tmp_path):
    (server,) = own_daphnes(1, DB_LOCK_TIMEOUT="2")  # a command blocked by the build would give up in 2 s
    alice = own_db.tokens["alice"]
    head = get_head(server.base, alice)
    env = {**os.environ, **release(tmp_path), "DATABASE_URL": own_db.url, "DB_POOL_MAX": "0",
           "LOG_LEVEL": "WARNING", "DB_LOCK_TIMEOUT": str(HANG)}
    env.pop("REDIS_URL", None)

    done = manage(env, "migrate", "--plan")
    assert done.returncode == 0 and INDEX in done.stdout, done.stdout + done.stderr

    with psycopg.connect(own_db.url) as writer:
        # A transaction writing to the log, as every command's is for a moment; held open here so the
        # build is seen waiting for it.
        writer.execute("LOCK TABLE campaign_event IN ROW EXCLUSIVE MODE")
        migrate = subprocess.Popen([sys.executable, "manage.py", "migrate", "--noinput"], cwd=ROOT, env=env,
                                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        try:
            deadline = time.monotonic() + HANG
            while not building(own_db):
                assert migrate.poll() is None, migrate.communicate()[0]
                assert time.monotonic() < deadline, "the migration's CREATE INDEX never started"
                time.sleep(0.05)  # polling a condition, bounded by HANG

            status, answer = post_command(server.base, alice, "during-the-build", timeout=HANG)
            assert status == 201 and answer["seq"] == head + 1, (status, answer)
            assert building(own_db), "the build must still be waiting when the command is stored"
            writer.rollback()
            output, _ = migrate.communicate(timeout=HANG)
        finally:
            if migrate.poll() is None:
                migrate.kill()
                migrate.wait()
    assert migrate.returncode == 0, output

    assert own_db.sql(f"SELECT indisvalid FROM pg_index WHERE indexrelid = '{INDEX}'::regclass") == [(True,)]
    done = manage(env, "migrate", "--check")
    assert done.returncode == 0, done.stdout + done.stderr  # nothing left to apply
    status, answer = post_command(server.base, alice, "after-the-build", timeout=HANG)
    assert status == 201 and answer["seq"] == head + 2, (status, answer)
    assert [seq for seq, _ in own_db.events()] == list(range(1, head + 3))
    assert "Traceback" not in server.log_text()
