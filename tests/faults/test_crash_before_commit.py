"""A process dying between rolling the dice and committing leaves no trace.

The crash happens in a real separate process (``os._exit``: no cleanup, no
rollback sent, the connection just drops) while it holds the campaign's lock;
the database must keep no half-written event, the chain must verify, and the
next command, even with the same id, must work.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from django.db import connection

from campaign.eventlog import verify_chain
from campaign.models import Command, Event
from tests import servers

from .crash_command import CRASH

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.postgres]


def crash(where: str, client_id: str, notation: str = "6d6") -> str:
    # The command may wait for its first pooled connection as long as the run waits for it: on a busy
    # machine opening one took longer than the pool's 3 s, and an outage is not what is checked here.
    env = {**os.environ, "DATABASE_URL": servers.test_database_url(), "LOG_LEVEL": "WARNING",
           "DB_POOL_TIMEOUT": "50"}
    env.pop("REDIS_URL", None)
    done = subprocess.run([sys.executable, "-m", "tests.faults.crash_command", where, client_id, notation],
                          cwd=servers.ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == CRASH, (done.returncode, done.stdout, done.stderr[-2000:])
    return done.stdout


@pytest.mark.parametrize("where", ["dice", "before_commit"])
def test_a_crash_between_rolling_and_storing_leaves_no_event(transactional_table, require_postgres, where):
    table = transactional_table
    campaign = table.campaign
    table.command(table.bob, {"type": "roll", "notation": "1d6"})
    campaign.refresh_from_db()
    head, head_hash = campaign.last_seq, campaign.head_hash
    events_before = list(Event.objects.filter(campaign=campaign).order_by("seq").values_list("seq", "hash"))

    said = crash(where, "doomed-roll")
    assert ("dying after 2 dice" if where == "dice" else f"dying with seqs [{head + 1}]") in said

    campaign.refresh_from_db()
    assert (campaign.last_seq, campaign.head_hash) == (head, head_hash)
    assert list(Event.objects.filter(campaign=campaign).order_by("seq").values_list("seq", "hash")) == events_before
    assert not Command.objects.filter(client_id="doomed-roll").exists()
    report = verify_chain(campaign)
    assert report.ok and report.count == head, report

    # The dead process's lock is gone with its connection: the next command runs at once,
    # and the client's retry of the same id rolls now, for the first time, as seq head + 1.
    with connection.cursor() as cursor:
        cursor.execute("SET lock_timeout = '5s'")
    try:
        retried = table.command(table.alice, {"type": "roll", "notation": "6d6"}, client_id="doomed-roll")
        later = table.command(table.bob, {"type": "roll", "notation": "2d6"})
    finally:
        with connection.cursor() as cursor:
            cursor.execute("RESET lock_timeout")
    assert not retried.replayed and retried.events[0].seq == head + 1
    assert len(retried.events[0].payload["terms"][0]["dice"]) == 6
    assert later.events[0].seq == head + 2
    campaign.refresh_from_db()
    report = verify_chain(campaign)
    assert report.ok and report.count == head + 2, report
    assert Event.objects.filter(campaign=campaign, command__client_id="doomed-roll").count() == 1
