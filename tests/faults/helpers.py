"""Real processes for fault tests: a private redis-server, restartable daphnes,
HTTP commands with bearer tokens, and a reconnecting WebSocket client that
checks the log it is sent has no gap and no duplicate.

Everything here is bounded in time: processes are always stopped (killed if
they do not stop), waits have deadlines, and sockets have timeouts.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import shutil
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

from tests.conftest import missing_service
from tests.servers import DAPHNE, ROOT, free_port, server_environment, wait_for_port

SLUG = "torn-road"

try:  # Linux: children get SIGKILL if the test run dies, so no server outlives it
    import ctypes

    _libc = ctypes.CDLL(None, use_errno=True)
    _PR_SET_PDEATHSIG = 1

    def _die_with_parent() -> None:
        _libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
except (OSError, AttributeError):  # pragma: no cover - not Linux
    _die_with_parent = None


# --- processes --------------------------------------------------------------------

def _stop(proc: subprocess.Popen | None, sig=signal.SIGTERM, timeout: float = 10.0) -> None:
    if proc is None or proc.poll() is not None:
        return
    proc.send_signal(sig)
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


class RedisServer:
    """Our own ``redis-server`` on a spare loopback port (never the shared one)."""

    def __init__(self, workdir: Path, port: int | None = None):
        self.binary = shutil.which("redis-server")
        if self.binary is None:
            missing_service("redis-server (the binary, to start a private Redis)")
        self.port = port or free_port()
        self.workdir = workdir
        self.proc: subprocess.Popen | None = None
        self.starts = 0

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        assert self.proc is None or self.proc.poll() is not None, "already running"
        self.starts += 1
        out = open(self.workdir / f"redis-{self.port}-{self.starts}.log", "wb")
        self.proc = subprocess.Popen(
            [self.binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
             "--daemonize", "no", "--dir", str(self.workdir)],
            stdout=out, stderr=subprocess.STDOUT, preexec_fn=_die_with_parent,
        )
        out.close()
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"redis-server on {self.port} exited with {self.proc.returncode}")
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", self.port), 0.2) as s:
                s.sendall(b"PING\r\n")
                if s.recv(16).startswith(b"+PONG"):
                    return
            time.sleep(0.05)
        raise RuntimeError(f"redis-server on {self.port} did not answer PING")

    def stop(self) -> None:
        """Stop it abruptly (SIGKILL): nothing is saved, every connection drops."""
        _stop(self.proc, signal.SIGKILL)

    def freeze(self) -> None:
        """SIGSTOP: connections stay open but nothing answers (a hung or unreachable Redis)."""
        self.proc.send_signal(signal.SIGSTOP)

    def thaw(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGCONT)

    def close(self) -> None:
        self.thaw()
        _stop(self.proc)


class Daphne:
    """``daphne campaign.asgi:application`` on a fixed port, killable and restartable."""

    def __init__(self, workdir: Path, redis_url: str | None, port: int | None = None,
                 database_url: str | None = None, **env):
        self.port = port or free_port()
        self.database_url = database_url  # None: the test run's database
        self.workdir = workdir
        self.redis_url = redis_url
        self.env = env
        self.proc: subprocess.Popen | None = None
        self.starts = 0
        self.logs: list[Path] = []

    @property
    def base(self) -> str:
        return f"127.0.0.1:{self.port}"

    def start(self) -> None:
        assert self.proc is None or self.proc.poll() is not None, "already running"
        self.starts += 1
        log = self.workdir / f"daphne-{self.port}-{self.starts}.log"
        self.logs.append(log)
        out = open(log, "wb")  # a file, not a pipe nobody reads: a full pipe would block the server
        self.proc = subprocess.Popen(
            [*DAPHNE, str(self.port), "campaign.asgi:application"], cwd=ROOT,
            env=server_environment(self.database_url, self.redis_url, **self.env),
            stdout=out, stderr=subprocess.STDOUT, preexec_fn=_die_with_parent,
        )
        out.close()
        wait_for_port(self.port, self.proc)

    def kill(self) -> None:
        """SIGKILL: no cleanup, no group_discard, open sockets just die."""
        _stop(self.proc, signal.SIGKILL)

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def close(self) -> None:
        _stop(self.proc)

    def log_text(self) -> str:
        return "\n".join(p.read_text(errors="replace") for p in self.logs if p.exists())


# --- HTTP ---------------------------------------------------------------------------

class _NoRedirects(urllib.request.HTTPRedirectHandler):
    """A redirect (to https, say) is an answer to report, not to follow."""

    def redirect_request(self, *args, **kwargs):
        return None


_opener = urllib.request.build_opener(_NoRedirects)


def _json(raw: bytes) -> dict:
    try:
        return json.loads(raw or b"{}")
    except ValueError:
        return {"raw": raw[:200].decode("utf-8", "replace")}


def post_command(base: str, token: str, client_id: str, action: dict | None = None, timeout: float = 10):
    """POST a command; returns (status, json). Network errors propagate."""
    action = action or {"type": "roll", "notation": "3d6"}
    request = urllib.request.Request(
        f"http://{base}/api/campaigns/{SLUG}/commands",
        data=json.dumps({"id": client_id, "action": action}).encode(),
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
        method="POST",
    )
    try:
        with _opener.open(request, timeout=timeout) as response:
            return response.status, _json(response.read())
    except urllib.error.HTTPError as e:
        return e.code, _json(e.read())


def get_head(base: str, token: str, timeout: float = 5) -> int:
    request = urllib.request.Request(
        f"http://{base}/api/campaigns/{SLUG}/events?after=0&limit=1", headers={"Authorization": f"Bearer {token}"}
    )
    with _opener.open(request, timeout=timeout) as response:
        return json.loads(response.read())["head"]


# --- the reconnecting client --------------------------------------------------------

class TableClient:
    """A table socket that reconnects with ``?after=<last seq seen>`` and backoff.

    It records, rather than raises, anything that breaks the protocol's promise
    (an event that is not ``last + 1``, an error frame, a refused connect), so a
    test can assert on ``problems`` at the end and say exactly what happened.
    """

    def __init__(self, name: str, token: str, bases, max_backoff: float = 0.5):
        self.name = name
        self.token = token
        self.bases = list(bases) if not isinstance(bases, str) else [bases]
        self.max_backoff = max_backoff
        self.events: list[dict] = []
        self.problems: list[str] = []
        self.connect_failures: list[str] = []
        self.closes: list[str] = []
        self.opened = 0
        self.readies = 0
        self.heartbeats = 0
        self.present: list[str] | None = None  # usernames in the last presence frame
        self.connected = False
        self._task: asyncio.Task | None = None
        self._waiters: list[asyncio.Future] = []  # wait_until's, woken by any change here

    def _changed(self) -> None:
        for waiter in self._waiters:
            if not waiter.done():
                waiter.set_result(None)
        self._waiters.clear()

    @property
    def last(self) -> int:
        return self.events[-1]["seq"] if self.events else 0

    def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name=f"client-{self.name}")

    async def stop(self) -> None:
        if self._task:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    async def _run(self) -> None:
        import websockets

        backoff, attempt = 0.05, 0
        while True:
            base = self.bases[attempt % len(self.bases)]
            attempt += 1
            url = f"ws://{base}/ws/campaigns/{SLUG}/table/?after={self.last}"
            try:
                async with websockets.connect(
                    url, additional_headers={"Authorization": f"Bearer {self.token}"},
                    open_timeout=5, close_timeout=1, ping_interval=None,
                ) as ws:
                    self.opened += 1
                    self._changed()
                    reason = await self._read(ws)
                    if reason:
                        self.closes.append(reason)
                    else:
                        self.closes.append(f"closed {ws.close_code} {ws.close_reason!r}")
                    if self.connected:
                        backoff = 0.05
            except asyncio.CancelledError:
                raise
            except Exception as e:  # refused, reset, handshake timeout: try again later
                self.connect_failures.append(f"{type(e).__name__}: {e}"[:200])
            finally:
                self.connected = False
                self._changed()
            await asyncio.sleep(backoff)
            backoff = min(backoff * 2, self.max_backoff)

    async def _read(self, ws) -> str | None:
        """Read frames until the socket closes; return a reason if we chose to leave."""
        import websockets

        try:
            async for raw in ws:
                frame = json.loads(raw)
                kind = frame.get("type")
                if kind == "event":
                    seq = frame["event"]["seq"]
                    if seq == self.last + 1:
                        self.events.append(frame["event"])
                    elif seq <= self.last:
                        self.problems.append(f"duplicate: seq {seq} after {self.last}")
                    else:
                        self.problems.append(f"gap: seq {seq} after {self.last}")
                        return f"left after gap at {seq}"  # the protocol says: reconnect with after=last
                elif kind == "ready":
                    self.readies += 1
                    self.connected = True
                    if frame["seq"] != self.last:
                        self.problems.append(f"ready says {frame['seq']} but the last event sent was {self.last}")
                elif kind == "heartbeat":
                    self.heartbeats += 1
                    if frame["seq"] > self.last:
                        # The server catches up before each heartbeat, so this should not happen.
                        self.problems.append(f"heartbeat {frame['seq']} ahead of last event {self.last}")
                        return f"left after stale heartbeat {frame['seq']}"
                elif kind == "error":
                    self.problems.append(f"error frame: {frame}")
                elif kind == "presence":
                    self.present = sorted(m["username"] for m in frame["members"])
                # pong, ack...: not about the log
                self._changed()
        except websockets.ConnectionClosed:
            pass
        return None


async def wait_until(predicate, timeout: float, what: str, *, clients=(), poll: float | None = None) -> None:
    """Wait until ``predicate()`` holds; fail after ``timeout`` seconds (a guard against a hang,
    never a measure of speed, so generous).

    ``predicate`` is checked again whenever one of ``clients`` hears a frame, connects or
    drops: nearly everything these tests wait for is something a socket hears. What no socket
    hears (a line in a server's log, a thread's answers) is checked every ``poll`` seconds."""
    assert clients or poll, "name the clients that will hear it, or poll for what none hears"
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not predicate():
        left = deadline - loop.time()
        if left <= 0:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        news = loop.create_future()
        for client in clients:
            client._waiters.append(news)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(news, min(left, poll) if poll else left)


def describe(client: TableClient) -> str:
    return (f"{client.name}: last={client.last} opened={client.opened} readies={client.readies} "
            f"problems={client.problems[:5]} closes={client.closes[-5:]} "
            f"connect_failures={len(client.connect_failures)} {client.connect_failures[-2:]}")


def assert_exactly_the_log(clients, campaign) -> list:
    """Every client saw exactly the stored log: seqs 1..N, same hashes, nothing twice."""
    from campaign.eventlog import verify_chain
    from campaign.models import Event

    campaign.refresh_from_db()
    stored = list(Event.objects.filter(campaign=campaign).order_by("seq").values_list("seq", "hash"))
    assert [s for s, _ in stored] == list(range(1, campaign.last_seq + 1))
    report = verify_chain(campaign)
    assert report.ok, report
    for client in clients:
        assert not client.problems, describe(client)
        assert [(e["seq"], e["hash"]) for e in client.events] == stored, describe(client)
    return stored
