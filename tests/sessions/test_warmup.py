"""A process warms up before it accepts a connection (sessions/warmup.py)."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest

from sessions import warmup
from sessions.db import workers

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.postgres
def test_a_warm_process_has_a_connection_open_for_each_socket_thread(transactional_db, require_postgres):
    from django.db import connection

    if getattr(connection, "pool", None) is None:
        pytest.fail("the PostgreSQL test database runs without the pool the servers use")
    took = warmup.warm()
    assert set(took) == {"imports", "connections", "templates", "urls"}
    assert connection.pool.get_stats()["pool_size"] >= workers() > 1


def test_a_warm_process_has_imported_the_modules_a_rare_path_imports():
    """In a fresh interpreter: the schema's module (imported by one view and one command) is loaded by
    the warm-up, not by the first request that needs it; the entry points are left alone."""
    script = ("import django, sys; django.setup(); from sessions.warmup import _import_everything; "
              "before = 'campaign.openapi' in sys.modules; _import_everything(); "
              "print(before, 'campaign.openapi' in sys.modules, 'campaign.asgi' in sys.modules)")
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "campaign.settings", "DEBUG": "1"}
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert done.stdout.split() == ["False", "True", "False"], done.stderr


def test_a_failed_step_is_logged_and_the_process_starts_anyway(db, monkeypatch, caplog):
    def unreachable():
        raise OSError("connection refused")

    monkeypatch.setattr(warmup, "_open_connections", unreachable)
    with caplog.at_level(logging.WARNING, logger="sessions.warmup"):
        took = warmup.warm()
    assert "connections" in took and "warm-up step connections failed: OSError('connection refused')" in caplog.text


@pytest.mark.django_db(transaction=True)
def test_daphne_warms_the_process_up_before_it_listens(tmp_path):
    """campaign/asgi.py runs the warm-up in daphne's own process, before the port opens: by the time
    a connection is accepted, the warm-up's line is already written."""
    from tests.servers import DAPHNE, free_port, server_environment, wait_for_port

    port, log = free_port(), tmp_path / "daphne.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen([*DAPHNE, str(port), "campaign.asgi:application"], cwd=ROOT,
                                env=server_environment(LOG_LEVEL="INFO"), stdout=out, stderr=subprocess.STDOUT)
    try:
        wait_for_port(port, proc)
        written = log.read_text(errors="replace")
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    assert "warmed up in" in written and "warm-up step" not in written, written[-3000:]
