"""Shared plumbing for the benchmarks: configuration, the bench database,
server processes, statistics and a description of the machine.

Everything here talks to 127.0.0.1 only, and every process it starts is
tracked and terminated (on normal exit, on an exception, on SIGINT/SIGTERM).
"""

from __future__ import annotations

import atexit
import contextlib
import os
import platform
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from urllib.parse import urlparse, urlunparse

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "bench"
RESULTS = BENCH / "results"

DEFAULT_DATABASE_URL = "postgres://postgres@127.0.0.1:5432/talekeeper_bench"
REDIS_SERVER = "redis-server"
SECRET_KEY = "talekeeper-bench-secret-key-not-for-production-0123456789"
LOOPBACK = {"127.0.0.1", "localhost", "::1"}


def require_loopback(url: str, what: str) -> None:
    host = urlparse(url).hostname
    if host not in LOOPBACK:
        raise SystemExit(f"{what} must point at 127.0.0.1 (the benchmarks never leave this machine): {url}")


def base_env(database_url: str, redis_url: str | None, **extra: str) -> dict[str, str]:
    """The environment of every Talekeeper process the bench starts (and of itself)."""
    env = {
        **os.environ,
        "DATABASE_URL": database_url,
        "DEBUG": "0",
        "SECRET_KEY": SECRET_KEY,
        "SECURE_COOKIES": "0",  # plain http on loopback: no https redirect, secure cookies or HSTS
        "SECURE_SSL_REDIRECT": "0",
        "SECURE_HSTS_SECONDS": "0",
        "ALLOWED_HOSTS": "127.0.0.1,localhost,testserver",
        "LOG_LEVEL": "WARNING",
        "DJANGO_SETTINGS_MODULE": "campaign.settings",
        "PYTHONPATH": str(ROOT),
        **extra,
    }
    env.pop("REDIS_URL", None)
    if redis_url:
        env["REDIS_URL"] = redis_url
    return env


# --- the bench database ---------------------------------------------------------

def ensure_database(database_url: str, fresh: bool = False) -> None:
    """Create the bench database if missing (drop it first with ``fresh``); never any other."""
    import psycopg

    parsed = urlparse(database_url)
    name = parsed.path.lstrip("/")
    if not name or name in {"postgres", "template0", "template1", "talekeeper", "test_talekeeper", "test"} \
            or "bench" not in name:
        raise SystemExit(f"refusing to use database {name!r}: the bench database's name must contain 'bench'")
    admin = urlunparse(parsed._replace(path="/postgres"))
    with psycopg.connect(admin, autocommit=True, connect_timeout=10) as conn:
        exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone()
        if exists and fresh:
            conn.execute(f'DROP DATABASE "{name}" WITH (FORCE)')
            exists = None
        if not exists:
            conn.execute(f'CREATE DATABASE "{name}"')


def analyze(database_url: str) -> float:
    """``ANALYZE`` the bench database (planner statistics), and return how long it took.

    The machine's PostgreSQL runs with ``autovacuum = off``: a database the bench just filled
    (100k-event logs, hundreds of tables) otherwise has no statistics at all, and the planner's
    guesses made the live scenarios' PostgreSQL cost 10x more per roll (run b810c38 in
    docs/performance.md). A production server runs autovacuum, which keeps them."""
    import psycopg

    t0 = time.perf_counter()
    with psycopg.connect(database_url, autocommit=True, connect_timeout=10) as conn:
        conn.execute("ANALYZE")
    return round(time.perf_counter() - t0, 2)


def migrate(env: dict[str, str]) -> None:
    """The database's tables, and what a server needs to start: the signing key (this checkout's, or
    ``SIGNING_KEY_PATH``'s, kept if there) and the collected static files (``STATIC_ROOT``)."""
    for command in (["create_signing_key", "--exist-ok"], ["collectstatic", "--noinput", "-v", "0"]):
        subprocess.run([sys.executable, "manage.py", *command], cwd=ROOT, env=env, check=True, timeout=300)
    subprocess.run([sys.executable, "manage.py", "migrate", "--noinput", "-v", "0"], cwd=ROOT, env=env,
                   check=True, timeout=300)


def setup_django(env: dict[str, str]) -> None:
    """Configure this process as a Talekeeper process with the bench settings."""
    os.environ.update(env)
    if "REDIS_URL" not in env:
        os.environ.pop("REDIS_URL", None)
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    import django

    django.setup()


# --- server processes -----------------------------------------------------------

_PROCS: list[subprocess.Popen] = []
REDIS_PIDS: list[int] = []  # the private redis-server of this run (for its CPU), if the bench started one


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_port(port: int, proc: subprocess.Popen, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server on port {port} exited with {proc.returncode}")
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=0.2):
            return
        time.sleep(0.1)
    raise RuntimeError(f"server on port {port} did not start within {timeout}s")


def stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)
    if proc in _PROCS:
        _PROCS.remove(proc)


def stop_all() -> None:
    for proc in list(_PROCS):
        with contextlib.suppress(Exception):
            stop(proc)


def _on_signal(signum, frame):
    stop_all()
    raise SystemExit(128 + signum)


atexit.register(stop_all)
signal.signal(signal.SIGTERM, _on_signal)


@contextlib.contextmanager
def daphnes(app: str, count: int, env: dict[str, str], log_dir: Path, label: str):
    """Start ``count`` daphne processes serving ``app`` on spare loopback ports; yield their ports."""
    log_dir.mkdir(parents=True, exist_ok=True)
    procs, ports, logs = [], [], []
    try:
        for i in range(count):
            port = free_port()
            log = open(log_dir / f"{label}-{i}.log", "wb")
            logs.append(log)
            proc = subprocess.Popen(
                [sys.executable, "-m", "daphne", "-b", "127.0.0.1", "-p", str(port), app],
                cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
            )
            _PROCS.append(proc)
            procs.append(proc)
            ports.append(port)
        for port, proc in zip(ports, procs):
            wait_for_port(port, proc)
        yield ports, procs
    finally:
        for proc in procs:
            stop(proc)
        for log in logs:
            log.close()


@contextlib.contextmanager
def own_redis(log_dir: Path):
    """A private redis-server on a spare loopback port (no persistence); yield its URL.

    The machine's shared Redis on 6379 is also used by other people's test runs, which
    wipe it (FLUSHDB/FLUSHALL between tests): group memberships vanish mid-run and the
    numbers become meaningless. A server of our own is immune, and always stopped.
    """
    import shutil

    binary = shutil.which(REDIS_SERVER)
    if binary is None:
        raise SystemExit("redis-server is not installed: install it, or pass --redis-url redis://127.0.0.1:PORT/N")
    log_dir.mkdir(parents=True, exist_ok=True)
    port = free_port()
    log = open(log_dir / "redis.log", "wb")
    proc = subprocess.Popen(
        [binary, "--bind", "127.0.0.1", "--port", str(port), "--save", "", "--appendonly", "no",
         "--daemonize", "no", "--protected-mode", "yes", "--maxclients", "10000"],
        stdout=log, stderr=subprocess.STDOUT,
    )
    _PROCS.append(proc)
    REDIS_PIDS.append(proc.pid)
    try:
        wait_for_port(port, proc)
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        REDIS_PIDS.remove(proc.pid)
        stop(proc)
        log.close()


# --- statistics -----------------------------------------------------------------

@contextlib.contextmanager
def commit_watch(database_url: str, every_s: float = 0.02):
    """A bare durable commit (a one-row INSERT, autocommit, fsync'd like a command's) every
    ``every_s`` while the block runs; yields the list their durations go to.

    The disk's own tail in the same window: a machine whose WAL flush stalls for 100-800 ms now
    and then (docs/performance.md, "Where the time goes") stalls every command's ack with
    it, which the relay, with no database, never pays. The commits go to a database of their own
    in the same cluster (the same WAL, the same disk), so the CPU counted for the bench database's
    backends (``load._service_cpu``) leaves them out."""
    import psycopg

    parsed = urlparse(database_url)
    watch_url = urlunparse(parsed._replace(path=parsed.path.rstrip("/") + "_commit_watch"))
    ensure_database(watch_url)
    stop, times = threading.Event(), []

    def watch():
        with psycopg.connect(watch_url, autocommit=True, connect_timeout=10) as conn:
            conn.execute("CREATE TABLE IF NOT EXISTS bench_commit_watch (id bigserial PRIMARY KEY)")
            while not stop.wait(every_s):
                t = time.perf_counter()
                conn.execute("INSERT INTO bench_commit_watch DEFAULT VALUES")
                times.append(time.perf_counter() - t)

    thread = threading.Thread(target=watch, name="commit-watch", daemon=True)
    thread.start()
    try:
        yield times
    finally:
        stop.set()
        thread.join(timeout=15)


def commits_summary(times: list[float], slow_ms: float = 50.0) -> dict:
    """:func:`summary_ms` of a commit watch, and how many took longer than ``slow_ms``."""
    return {**summary_ms(times), f"over_{slow_ms:g}ms": sum(1 for t in times if t * 1000 > slow_ms)}


def percentile(sorted_values: list[float], q: float) -> float | None:
    """Nearest-rank percentile of an already sorted list (q in 0..100)."""
    if not sorted_values:
        return None
    k = max(0, min(len(sorted_values) - 1, int(round(q / 100 * len(sorted_values) + 0.5)) - 1))
    return sorted_values[k]


def cpu_seconds(pid: int) -> float | None:
    """utime + stime of a process (Linux), in seconds."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return None


def summary_ms(values_s: list[float]) -> dict:
    """p50/p95/p99/max/mean of durations given in seconds, in milliseconds."""
    values = sorted(v * 1000 for v in values_s)
    if not values:
        return {"n": 0, "p50": None, "p95": None, "p99": None, "max": None, "mean": None}
    return {
        "n": len(values),
        "p50": round(percentile(values, 50), 3),
        "p95": round(percentile(values, 95), 3),
        "p99": round(percentile(values, 99), 3),
        "max": round(values[-1], 3),
        "mean": round(sum(values) / len(values), 3),
    }


def ratio(a, b, digits: int = 2):
    if a is None or b in (None, 0):
        return None
    return round(a / b, digits)


# --- the machine ----------------------------------------------------------------

def _first_line(cmd: list[str]) -> str | None:
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=10).stdout.strip()
        return out.splitlines()[0] if out else None
    except (OSError, subprocess.SubprocessError):
        return None


def machine_busy_pct(seconds: float) -> float | None:
    """How busy all cores were over the next ``seconds`` (every process, not only ours)."""
    def jiffies():
        with open("/proc/stat") as f:
            values = [int(x) for x in f.readline().split()[1:]]
        idle = values[3] + (values[4] if len(values) > 4 else 0)
        return sum(values) - idle, sum(values)

    try:
        b0, t0 = jiffies()
        time.sleep(seconds)
        b1, t1 = jiffies()
        return round(100 * (b1 - b0) / (t1 - t0), 1) if t1 > t0 else None
    except (OSError, ValueError, IndexError):
        return None


def machine_info(database_url: str, redis_url: str | None) -> dict:
    cpu = None
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    info = {
        "nproc": os.cpu_count(),
        "nproc_cmd": _first_line(["nproc"]),
        "cpu_model": cpu,
        "load_average": [round(x, 2) for x in os.getloadavg()],
        "python": platform.python_version(),
        "platform": platform.platform(),
    }
    with contextlib.suppress(OSError):
        mem = Path("/proc/meminfo").read_text().splitlines()[0]
        info["mem_total"] = mem.split(":", 1)[1].strip()
    try:
        import psycopg

        with psycopg.connect(database_url, connect_timeout=5) as conn:
            info["postgresql"] = conn.execute("SHOW server_version").fetchone()[0]
    except Exception as e:  # noqa: BLE001 (reported, not fatal)
        info["postgresql"] = f"unknown ({e!r})"
    if redis_url:
        try:
            import redis

            client = redis.Redis.from_url(redis_url, socket_timeout=5)
            info["redis"] = client.info("server").get("redis_version")
            client.close()
        except Exception as e:  # noqa: BLE001
            info["redis"] = f"unknown ({e!r})"
    import django
    import channels
    import channels_redis
    import daphne
    import websockets

    info["versions"] = {
        "django": django.__version__, "channels": channels.__version__, "channels_redis": channels_redis.__version__,
        "daphne": daphne.__version__, "websockets": websockets.__version__,
    }
    return info
