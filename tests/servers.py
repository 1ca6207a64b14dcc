"""Real server processes for tests: daphne on spare loopback ports.

Each process is started with the test database and the given channel layer,
waited for, and always stopped (it also dies with the test run).
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

from django.db import connection

ROOT = Path(__file__).resolve().parent.parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_database_url() -> str:
    """A DATABASE_URL naming the database this test run uses."""
    s = connection.settings_dict
    if connection.vendor == "sqlite":
        return f"sqlite:///{s['NAME']}"
    host = s.get("HOST") or "127.0.0.1"
    port = s.get("PORT") or 5432
    return f"postgres://{s.get('USER') or 'postgres'}@{host}:{port}/{s['NAME']}"


def wait_for_port(port: int, proc: subprocess.Popen, timeout: float = 120.0) -> None:
    """Wait until the server listens. The limit only guards against a hang: daphne took over 20 s
    to start on a 2-core machine at load 14, so it is generous, never a measure of speed."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server on port {port} exited with {proc.returncode}")
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=0.2):
            return
        time.sleep(0.1)
    raise RuntimeError(f"server on port {port} did not start within {timeout}s")


# The servers' key: a test makes a session they read with it (tests/browser/conftest.py).
SERVER_SECRET_KEY = "test-secret-key-for-servers"

DAPHNE = [sys.executable, "-m", "daphne", "-b", "127.0.0.1", "-p"]  # + the port, the application


def server_environment(database_url: str | None = None, redis_url: str | None = None, **env) -> dict[str, str]:
    """The environment of a test server: this run's database (or ``database_url``), plain http
    on loopback, warnings only, a small database pool, and the channel layer of ``redis_url`` (none: in
    memory); the app's settings with the suite's fast password hasher (tests/server_settings.py)."""
    environment = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "tests.server_settings",
        "DATABASE_URL": database_url or test_database_url(),
        "DEBUG": "0",
        "SECRET_KEY": SERVER_SECRET_KEY,
        "SECURE_COOKIES": "0",  # plain http on loopback
        "SECURE_SSL_REDIRECT": "0",
        "SECURE_HSTS_SECONDS": "0",
        "ALLOWED_HOSTS": "127.0.0.1,localhost",
        "LOG_LEVEL": "WARNING",
        "PYTHONUNBUFFERED": "1",  # its log is read while it runs
        # Half the app's pool each (a table or two of test seats needs no more, even slowed by a loaded
        # machine): the run's servers, workers and fault tests share one PostgreSQL and its 100
        # connections, and a pool keeps what it opened for minutes.
        "DB_POOL_MAX": "10",
        "DB_SOCKET_THREADS": "8",
        **env,
    }
    environment.pop("REDIS_URL", None)
    if redis_url:
        environment["REDIS_URL"] = redis_url
    return environment


@contextlib.contextmanager
def daphne(port: int | None = None, redis_url: str | None = None, **env):
    """Run ``daphne campaign.asgi:application`` on 127.0.0.1; yield its base URL."""
    port = port or free_port()
    proc = subprocess.Popen([*DAPHNE, str(port), "campaign.asgi:application"], cwd=ROOT,
                            env=server_environment(redis_url=redis_url, **env),
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        wait_for_port(port, proc)
        yield f"127.0.0.1:{port}"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
