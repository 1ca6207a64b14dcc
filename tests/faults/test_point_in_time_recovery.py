"""Point-in-time recovery as docs/operations.md ("Point-in-time recovery") says to set it up and run
it: WAL archived by ``archive_command``, a base backup by ``pg_basebackup -Ft -z -X fetch``, play
going on after it, the host lost; the base backup unpacked into an empty data directory, the
archive replayed by ``restore_command``, then the operator's checks. A member's receipt taken
after the base backup verifies on the recovered database: every event committed before the loss
is back, which the base backup alone does not hold.

The PostgreSQL clusters (the lost one and the recovered one) are the test's own, on spare ports
(tests/faults/cluster.py); the daphne uses the in-memory channel layer.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
import urllib.request

import pytest

from tests.servers import ROOT, server_environment

from .cluster import PostgresCluster
from .helpers import SLUG, Daphne, get_head, post_command

pytestmark = [pytest.mark.slow]

HANG = 120  # seconds any one step may take before the test fails (a bound on a hang, never what is checked)


def receipt(base: str, token: str) -> dict:
    request = urllib.request.Request(f"http://{base}/api/campaigns/{SLUG}/checkpoints", data=b"{}", method="POST",
                                     headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=HANG) as response:
        return json.loads(response.read())


def manage(database_url: str, *args: str) -> subprocess.CompletedProcess:
    env = server_environment(database_url, None, DB_POOL_MAX="0")
    return subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=HANG)


def archived(cluster: PostgresCluster, segment: str) -> bool:
    ((last, failed),) = cluster.sql("postgres", "SELECT last_archived_wal, failed_count FROM pg_stat_archiver")
    assert failed == 0, cluster.log_text()[-2000:]
    return last is not None and last >= segment  # segment names sort in WAL order on one timeline


def test_a_lost_database_comes_back_from_its_base_backup_and_wal_archive_with_every_event(tmp_path):
    primary, recovered, server = PostgresCluster(), PostgresCluster(), None
    try:
        primary.init()
        archive, base = primary.dir / "archive", primary.dir / "base"
        primary.as_owner("mkdir", archive, base)  # as the cluster's user, who writes them
        primary.configure(wal_level="replica", archive_mode="on",
                          archive_command=f"'test ! -f {archive}/%f && cp %p {archive}/%f'")
        primary.start()
        primary.seed_template()
        database = primary.fresh_database()
        alice = primary.tokens["alice"]
        server = Daphne(tmp_path, None, database_url=primary.url(database))
        server.start()
        head = get_head(server.base, alice)

        primary.as_owner(primary.bin / "pg_basebackup", "-D", base, "-Ft", "-z", "-X", "fetch",
                     "-d", primary.url("postgres"), timeout=HANG)
        for n in range(3):  # play goes on after the base backup; a member keeps a receipt of it
            status, answer = post_command(server.base, alice, f"after-the-base-backup-{n}", timeout=HANG)
            assert status == 201 and answer["seq"] == head + 1 + n, (status, answer)
        kept = receipt(server.base, alice)
        assert kept["seq"] == head + 3, kept
        kept_path = tmp_path / "receipt.json"
        kept_path.write_text(json.dumps(kept))

        # What archive_timeout does on a quiet server: the segment holding those commits is archived.
        ((segment,),) = primary.sql("postgres", "SELECT pg_walfile_name(pg_switch_wal())")
        deadline = time.monotonic() + HANG
        while not archived(primary, segment):
            assert time.monotonic() < deadline, f"{segment} was never archived"
            time.sleep(0.1)  # polling a condition, bounded by HANG
        server.kill()
        primary.stop()  # the host is lost: only the base backup and the archive are left

        recovered.as_owner("mkdir", "-m", "700", recovered.data)
        recovered.as_owner("tar", "-xzf", base / "base.tar.gz", "-C", recovered.data)
        recovered.configure(archive_mode="off", restore_command=f"'cp {archive}/%f %p'")
        recovered.as_owner("touch", recovered.data / "recovery.signal")
        recovered.start()  # returns once the archive is replayed and the server accepts connections

        url = recovered.url(database)
        assert recovered.sql(database, "SELECT max(seq) FROM campaign_event") == [(head + 3,)]
        done = manage(url, "migrate", "--check")
        assert done.returncode == 0, done.stdout + done.stderr
        done = manage(url, "verify_log", SLUG, "--receipt", str(kept_path))
        assert done.returncode == 0 and done.stdout.startswith(f"OK {head + 3} events, extending 1 receipt"), \
            done.stdout + done.stderr
        done = manage(url, "rebuild_projections", "--campaign", SLUG, "--check")
        assert done.returncode == 0, done.stdout + done.stderr
        assert "redo done" in recovered.log_text() or "archive recovery complete" in recovered.log_text()
    finally:
        if server is not None:
            server.kill()
        primary.close()
        recovered.close()
