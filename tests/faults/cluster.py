"""A private PostgreSQL cluster for fault tests: initdb into a temporary directory, a spare
loopback port, stopped and started at will (``pg_ctl stop -m immediate`` is a crash), and
always removed at the end. The machine's shared PostgreSQL is never touched.

PostgreSQL refuses to run as root, so as root the cluster runs as the ``postgres`` user
(``runuser``). One cluster serves a whole test session: the schema is migrated and the
personas seeded once into a template database (``tests/faults/seed.py``), and each test gets
its own copy (``CREATE DATABASE ... TEMPLATE``, a file copy: no migration per test).
"""

from __future__ import annotations

import contextlib
import glob
import itertools
import json
import os
import pwd
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from tests.conftest import missing_service
from tests.servers import ROOT, free_port

TEMPLATE = "tk_faults_template"


def _binaries() -> Path | None:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(Path(p).parts[-3]))
    return Path(found[-1]).parent if found else None


class PostgresCluster:
    def __init__(self):
        self.bin = _binaries()
        if self.bin is None:
            missing_service("PostgreSQL's initdb and pg_ctl (/usr/lib/postgresql/*/bin)")
        self.port = free_port()
        self.dir = Path(tempfile.mkdtemp(prefix="tk-faults-pg-"))
        self.data = self.dir / "data"
        self.log = self.dir / "postgres.log"
        self.user = None  # run as ourselves unless we are root
        if os.geteuid() == 0:
            try:
                self.user = pwd.getpwnam("postgres")
            except KeyError:
                missing_service("a 'postgres' user to run a private PostgreSQL as (not root)")
            os.chown(self.dir, self.user.pw_uid, self.user.pw_gid)
        self.tokens: dict[str, str] = {}
        self._copies = itertools.count(1)

    def as_owner(self, *args: str, timeout: float = 60, check: bool = True) -> subprocess.CompletedProcess:
        """A command run as the cluster's user (``postgres`` when we are root), in its directory."""
        command = [str(a) for a in args]
        if self.user is not None:
            command = ["runuser", "-u", self.user.pw_name, "--", *command]
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, cwd=self.dir)
        if check and done.returncode != 0:
            raise RuntimeError(f"{' '.join(command)} failed ({done.returncode}): {done.stdout}{done.stderr}"
                               f"{self.log_text()[-2000:]}")
        return done

    def init(self) -> None:
        self.as_owner(self.bin / "initdb", "-D", self.data, "-U", "postgres", "--auth=trust", "--no-sync",
                  "--no-instructions", "-E", "UTF8", "--locale=C.UTF-8")

    def configure(self, **settings: str) -> None:
        """Lines added to ``postgresql.conf`` (a later line wins), read at the next start."""
        with open(self.data / "postgresql.conf", "a") as conf:
            conf.writelines(f"{name} = {value}\n" for name, value in settings.items())

    def start(self) -> None:
        # No fsync: the cluster is thrown away and the machine never crashes under it. But
        # synchronous_commit stays on: a commit is written to the WAL before it is
        # acknowledged, so an immediate stop (a crash of PostgreSQL) loses no committed event.
        options = (f"-p {self.port} -c listen_addresses=127.0.0.1 -k {self.dir} -c fsync=off "
                   "-c full_page_writes=off -c max_connections=60")
        self.as_owner(self.bin / "pg_ctl", "-D", self.data, "-l", self.log, "-o", options, "-w", "-t", "30", "start")

    def stop(self, mode: str = "immediate") -> None:
        """``immediate``: every backend dies at once, no checkpoint (a crash, as clients see it)."""
        self.as_owner(self.bin / "pg_ctl", "-D", self.data, "-m", mode, "-w", "-t", "30", "stop", check=False)

    def running(self) -> bool:
        return self.as_owner(self.bin / "pg_ctl", "-D", self.data, "status", check=False).returncode == 0

    def ensure_running(self) -> None:
        if not self.running():
            self.start()

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.stop()
        shutil.rmtree(self.dir, ignore_errors=True)

    def url(self, database: str) -> str:
        return f"postgres://postgres@127.0.0.1:{self.port}/{database}?sslmode=disable"

    def log_text(self) -> str:
        with contextlib.suppress(OSError):
            return self.log.read_text(errors="replace")
        return ""

    # --- databases -----------------------------------------------------------------

    def sql(self, database: str, query: str, params=()) -> list[tuple]:
        import psycopg

        with psycopg.connect(self.url(database), autocommit=True, connect_timeout=5) as conn:
            cursor = conn.execute(query, params)
            return cursor.fetchall() if cursor.description else []

    def seed_template(self) -> None:
        """Migrate and seed the template once; remember the personas' API tokens."""
        self.sql("postgres", f"CREATE DATABASE {TEMPLATE}")
        env = {**os.environ, "DATABASE_URL": self.url(TEMPLATE), "LOG_LEVEL": "WARNING", "DB_POOL_MAX": "0"}
        env.pop("REDIS_URL", None)
        done = subprocess.run([sys.executable, "-m", "tests.faults.seed"], cwd=ROOT, env=env,
                              capture_output=True, text=True, timeout=180)
        if done.returncode != 0:
            raise RuntimeError(f"seeding the template failed: {done.stdout[-2000:]}{done.stderr[-3000:]}")
        self.tokens = json.loads(done.stdout.strip().splitlines()[-1])

    def fresh_database(self) -> str:
        """A new database copied from the seeded template; returns its name."""
        name = f"tk_faults_{next(self._copies)}"
        # FILE_COPY checkpoints after the copy. The default (WAL_LOG) logs the copied sequence
        # pages with their cached values still unlogged, so after a crash (``stop()``) the
        # sequences went back and the next insert hit a duplicate id.
        self.sql("postgres", f"CREATE DATABASE {name} TEMPLATE {TEMPLATE} STRATEGY FILE_COPY")
        return name
