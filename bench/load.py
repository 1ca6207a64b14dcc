"""The load generator: real WebSocket clients, tables of them, players rolling.

Pure asyncio and ``websockets``; no Django in here, so the same code drives
Talekeeper (``match="seq"``: an ack names the seq of the stored event, and
every client of the table must receive an ``event`` frame with that seq) and
the bare relay (``match="id"``: the relay echoes the command id in its event).

Open loop: each table's players roll at exponentially spaced times (a Poisson
process at ``rate_per_table``), whether or not earlier rolls were answered, so
a slow server shows up as latency instead of hiding in a slower send rate.
Latency of a roll to a client = when that client's socket delivered the event
frame minus when the roller's frame was handed to its socket (or, over HTTP,
when the request was started). Both ends are in this process, on one clock.

Every loop is bounded in count and time, and everything is closed at the end.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import time
from collections import Counter
from dataclasses import dataclass, field
from urllib.parse import urlparse

import websockets

from .common import cpu_seconds, summary_ms

perf = time.perf_counter


@dataclass
class ClientSpec:
    table: int
    ws_url: str
    token: str | None = None
    roller: bool = True
    command_url: str | None = None  # POST target for via="http"
    actions: list | None = None  # the rule actions this roller picks from (None: a plain ``notation`` roll)
    sheet_url: str | None = None  # ``.../api/campaigns/<slug>/characters/``: the browser's sheet fetches
    signer: object | None = None  # bench.signing.Signer: signs each command, as a member's client does (None: unsigned)


@dataclass
class LoadConfig:
    rate_per_table: float = 1.0  # rolls per second per table, all its players together
    duration: float = 20.0  # seconds of rolling, warm-up included
    warmup: float = 2.0  # the first seconds of rolling are not measured
    drain: float = 10.0  # at most this long to wait for the last events after rolling stops
    via: str = "ws"  # "ws" (command frames) or "http" (POST with the bearer token)
    notation: str = "2d6"
    connect_concurrency: int = 25
    connect_timeout: float = 60.0
    max_commands_per_table: int = 5000
    seed: int = 1
    run_id: str = "bench"
    follow_ups: bool = False  # fetch sheets as static/talekeeper/table.js does after an event without them
    pg_database: str | None = None  # count PostgreSQL CPU of this database's backends (and the auxiliaries)
    redis_pids: tuple = ()  # the Redis the servers use (empty: every redis-server on the machine)


@dataclass
class Conn:
    spec: ClientSpec
    ws: object = None
    recv: dict = field(default_factory=dict)  # key (seq or command id) -> perf time
    last_seq: int | None = None
    connect_s: float | None = None
    event_bytes: int = 0
    events: int = 0
    refresh: dict = field(default_factory=dict)  # character id -> pending sheet fetch task (debounced)
    fetch_failed: bool = False  # a sheet fetch failed for good (refused, or retries used up): the page shows a stale sheet


@dataclass
class Sent:
    table: int
    t0: float
    measured: bool


class State:
    def __init__(self):
        self.sent: dict[str, Sent] = {}
        self.acks: dict[str, tuple[float, object]] = {}  # command id -> (perf time, seq)
        self.errors: Counter = Counter()
        self.error_examples: list[str] = []
        self.stopping = False
        self.sheets_pushed = 0  # event frames that carried the sheets they changed
        self.follow_ups: list[float] = []  # durations of the sheet fetches the browser would make
        self.follow_up_tasks: set = set()
        self.follow_up_enabled = False
        self.sheet_retries: Counter = Counter()  # sheet fetches tried again after a refusal, by what refused them

    def refusals(self) -> int:
        """Commands answered with an error (or never sent): they will get no ack."""
        return sum(n for k, n in self.errors.items() if k.startswith(("error_frame:", "http_", "send_failed")))

    def error(self, kind: str, example: str | None = None) -> None:
        self.errors[kind] += 1
        if example and len(self.error_examples) < 10:
            self.error_examples.append(f"{kind}: {example[:200]}")


_PG_AUX = ("checkpointer", "background writer", "walwriter", "autovacuum", "logical replication", "stats", "archiver")


def _service_cpu(pg_database: str | None = None, redis_pids=()) -> dict[str, float]:
    """CPU seconds used so far by PostgreSQL and Redis, from ``/proc/<pid>/stat`` of each process.

    With ``pg_database``: the backends of that database (``postgres: <user> <db> ...`` in their
    command line; the pool keeps them for a server's lifetime) and PostgreSQL's own auxiliary
    processes (WAL writer, checkpointer, ...), not other people's backends on this shared server.
    Without it: every PostgreSQL process, plus backends that exited (the postmaster's reaped
    children). ``redis_pids``: the bench's own ``redis-server`` (else every Redis on the machine).
    """
    tick = os.sysconf("SC_CLK_TCK")
    total = {"postgres": 0.0, "redis": 0.0, "by_pid": {}}
    redis_pids = {str(p) for p in redis_pids}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                raw = f.read()
        except OSError:
            continue
        name = raw[raw.find("(") + 1:raw.rfind(")")]
        fields = raw.rsplit(")", 1)[1].split()
        kind = "postgres" if name.startswith(("postgres", "postmaster")) else "redis" if name.startswith("redis") else None
        if kind is None or (kind == "redis" and redis_pids and entry not in redis_pids):
            continue
        if kind == "postgres" and pg_database:
            try:
                with open(f"/proc/{entry}/cmdline", "rb") as f:
                    cmd = f.read().replace(b"\0", b" ").decode("utf-8", "replace")
            except OSError:
                continue
            # "postgres: [cluster: ]<user> <database> <client> <state>" (the cluster name when it has one)
            words = cmd.split()
            if len(words) > 1 and words[1].endswith(":"):
                del words[1]
            ours = len(words) >= 3 and words[0] == "postgres:" and words[2] == pg_database
            if not ours and not any(aux in cmd for aux in _PG_AUX):
                continue
        used = (int(fields[11]) + int(fields[12])) / tick
        total[kind] += used
        total["by_pid"][entry] = (kind, used)
        if kind == "postgres" and not pg_database and fields[1] == "1":  # the postmaster (its parent is init)
            total[kind] += (int(fields[13]) + int(fields[14])) / tick
    return total


def _service_delta(before: dict, after: dict, kind: str) -> float:
    """CPU seconds of ``kind`` between two :func:`_service_cpu` readings: per process, so one that exited
    meanwhile (a backend of the previous server, closed by its pool) does not count negative; one that
    started meanwhile counts from zero."""
    return sum(used - (before["by_pid"].get(pid, (kind, 0.0))[1] if before["by_pid"].get(pid, (kind,))[0] == kind else 0.0)
               for pid, (k, used) in after["by_pid"].items() if k == kind)


def rss_mb(pid: int) -> dict:
    """Resident set size now and at its peak (VmRSS, VmHWM) of one process, in MB."""
    out = {}
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(("VmRSS:", "VmHWM:")):
                    out[line.split(":")[0]] = round(int(line.split()[1]) / 1024, 1)
    except (OSError, ValueError, IndexError):
        pass
    return {"rss_mb": out.get("VmRSS"), "peak_rss_mb": out.get("VmHWM")}


def _machine_jiffies() -> tuple[int, int] | None:
    """(busy, total) jiffies of the whole machine since boot, from /proc/stat."""
    try:
        with open("/proc/stat") as f:
            values = [int(x) for x in f.readline().split()[1:]]
        idle = values[3] + (values[4] if len(values) > 4 else 0)
        return sum(values) - idle, sum(values)
    except (OSError, ValueError, IndexError):
        return None


def _action(conn: Conn, rng: random.Random, notation: str) -> dict:
    if conn.spec.actions:
        return rng.choice(conn.spec.actions)
    return {"type": "roll", "notation": notation}


SHEET_RETRIES = 6  # as static/talekeeper/table.js (SHEET_RETRIES)


def sheet_retry_pause(attempt: int, retry_after: str | None, rng=random) -> float:
    """How long table.js waits before trying a refused sheet fetch again (``retryRefresh``): Retry-After
    (seconds, at most 5) or 1 s, times the attempt, spread by a factor of 0.5 to 1.5."""
    try:
        base = min(float(retry_after or 1) or 1, 5)
    except ValueError:
        base = 1
    return base * (attempt + 1) * (0.5 + rng.random())


def _schedule_sheet_fetch(conn: Conn, st: State, character: int) -> None:
    """What table.js does for an event without pushed sheets: ``GET .../characters/<id>``, 30 ms debounced;
    a fetch refused with 503 or 429, or one that found no server, is tried again after a jittered pause
    (:func:`sheet_retry_pause`), at most ``SHEET_RETRIES`` times; a newer event of the character replaces
    a fetch still waiting or retrying."""
    old = conn.refresh.get(character)
    if old is not None and not old.done():
        old.cancel()

    async def fetch():
        await asyncio.sleep(0.03)
        for attempt in range(SHEET_RETRIES + 1):
            t0 = perf()
            retry_after = None
            try:
                status, raw, headers = await _http_with_headers("GET", f"{conn.spec.sheet_url}{character}",
                                                                conn.spec.token, b"", 30.0)
            except Exception as e:  # noqa: BLE001
                status, raw = None, repr(e).encode()
            else:
                if status == 200:
                    st.follow_ups.append(perf() - t0)
                    return
                retry_after = headers.get("retry-after")
            kind = "sheet_fetch_failed" if status is None else f"sheet_http_{status}"
            if status not in (None, 503, 429) or attempt == SHEET_RETRIES:
                conn.fetch_failed = True
                st.error(kind, raw.decode("utf-8", "replace"))
                return
            st.sheet_retries[kind] += 1  # not an error: the page tries again, and so do we
            await asyncio.sleep(sheet_retry_pause(attempt, retry_after))

    task = asyncio.create_task(fetch())
    conn.refresh[character] = task
    st.follow_up_tasks.add(task)
    task.add_done_callback(st.follow_up_tasks.discard)


async def _reader(conn: Conn, st: State, match: str, ready: asyncio.Event) -> None:
    try:
        async for raw in conn.ws:
            t = perf()
            try:
                frame = json.loads(raw)
                kind = frame.get("type")
            except (ValueError, AttributeError):
                st.error("bad_frame", str(raw)[:200])
                continue
            if kind == "event":
                ev = frame["event"]
                seq = ev.get("seq")
                key = ev.get("id") if match == "id" else seq
                if key in conn.recv:
                    st.error("duplicate_event", f"table {conn.spec.table} key {key}")
                conn.recv[key] = t
                conn.events += 1
                conn.event_bytes += len(raw)
                if match == "seq" and ready.is_set() and conn.last_seq is not None and seq != conn.last_seq + 1:
                    st.error("seq_gap", f"table {conn.spec.table}: {conn.last_seq} -> {seq}")
                conn.last_seq = seq
                if isinstance(frame.get("sheets"), list):
                    st.sheets_pushed += 1
                elif st.follow_up_enabled and ev.get("character") and conn.spec.sheet_url:
                    _schedule_sheet_fetch(conn, st, ev["character"])
            elif kind == "ack":
                st.acks[frame.get("id")] = (t, frame.get("seq"))
            elif kind == "ready":
                if match == "seq":
                    conn.last_seq = frame.get("seq")
                ready.set()
            elif kind == "error":
                st.error("error_frame:" + str(frame.get("code")), json.dumps(frame))
            # heartbeat, pong: nothing to do
    except websockets.ConnectionClosed as e:
        if not st.stopping:
            st.error("closed_early", repr(e))
    except asyncio.CancelledError:
        raise
    except Exception as e:  # noqa: BLE001 (counted, never hides a hang: everything is bounded)
        st.error("reader_failed", repr(e))


async def _connect(conn: Conn, st: State, match: str, sem: asyncio.Semaphore, cfg: LoadConfig,
                   readers: list) -> None:
    async with sem:
        headers = {"Authorization": f"Bearer {conn.spec.token}"} if conn.spec.token else None
        t0 = perf()
        try:
            conn.ws = await websockets.connect(
                conn.spec.ws_url, additional_headers=headers, open_timeout=cfg.connect_timeout,
                ping_interval=None, close_timeout=2, max_size=2**20,
            )
        except Exception as e:  # noqa: BLE001
            st.error("connect_failed", repr(e))
            return
        ready = asyncio.Event()
        readers.append(asyncio.create_task(_reader(conn, st, match, ready)))
        try:
            await asyncio.wait_for(ready.wait(), cfg.connect_timeout)
        except asyncio.TimeoutError:
            st.error("no_ready_frame", conn.spec.ws_url)
            return
        conn.connect_s = perf() - t0


async def _http_post(url: str, token: str | None, body: bytes, timeout: float) -> tuple[int, bytes]:
    return await _http("POST", url, token, body, timeout)


async def _http(method: str, url: str, token: str | None, body: bytes, timeout: float) -> tuple[int, bytes]:
    status, body, _ = await _http_with_headers(method, url, token, body, timeout)
    return status, body


async def _http_with_headers(method: str, url: str, token: str | None, body: bytes,
                             timeout: float) -> tuple[int, bytes, dict[str, str]]:
    """One request over a fresh loopback connection (Connection: close); a minimal HTTP/1.1 client.
    Returns the status, the body and the headers (names in lower case)."""
    u = urlparse(url)
    reader, writer = await asyncio.wait_for(asyncio.open_connection(u.hostname, u.port), timeout)
    try:
        head = (f"{method} {u.path} HTTP/1.1\r\nHost: {u.hostname}:{u.port}\r\nContent-Type: application/json\r\n"
                f"Content-Length: {len(body)}\r\nConnection: close\r\n")
        if token:
            head += f"Authorization: Bearer {token}\r\n"
        writer.write(head.encode("latin1") + b"\r\n" + body)
        await writer.drain()
        data = await asyncio.wait_for(reader.read(1 << 20), timeout)
        while not reader.at_eof() and len(data) < (1 << 20):
            more = await asyncio.wait_for(reader.read(1 << 20), timeout)
            if not more:
                break
            data += more
    finally:
        writer.close()
    status = int(data.split(b" ", 2)[1])
    top, _, rest = data.partition(b"\r\n\r\n")
    headers = {}
    for line in top.split(b"\r\n")[1:]:
        name, _, value = line.decode("latin1").partition(":")
        headers[name.strip().lower()] = value.strip()
    return status, rest, headers


def _envelope(signer, cid: str, action: dict) -> dict:
    """The command as the client sends it: signed by its member's key where the campaign's members sign."""
    return signer.envelope(cid, action) if signer is not None else {"id": cid, "action": action}


async def _post_command(conn: Conn, st: State, cid: str, cfg: LoadConfig, action: dict) -> None:
    body = json.dumps(_envelope(conn.spec.signer, cid, action)).encode()
    try:
        status, raw = await _http_post(conn.spec.command_url, conn.spec.token, body, 30.0)
    except Exception as e:  # noqa: BLE001
        st.error("http_failed", repr(e))
        return
    t = perf()
    if status not in (200, 201):
        st.error(f"http_{status}", raw.decode("utf-8", "replace"))
        return
    st.acks[cid] = (t, json.loads(raw)["seq"])


async def _drive_table(table: int, conns: list[Conn], st: State, cfg: LoadConfig, start: float,
                       http_tasks: set) -> None:
    rng = random.Random(cfg.seed * 1_000_003 + table)
    rollers = [c for c in conns if c.spec.roller and c.ws is not None]
    if not rollers or cfg.rate_per_table <= 0:  # rate 0: sockets stay idle (heartbeats only)
        return
    end = start + cfg.duration
    at = start + rng.expovariate(cfg.rate_per_table)
    n = 0
    while at < end and n < cfg.max_commands_per_table:
        delay = at - perf()
        if delay > 0:
            await asyncio.sleep(delay)
        conn = rng.choice(rollers)
        cid = f"{cfg.run_id}-t{table}-{n}"
        measured = at >= start + cfg.warmup
        action = _action(conn, rng, cfg.notation)
        if cfg.via == "http":
            st.sent[cid] = Sent(table, perf(), measured)
            task = asyncio.create_task(_post_command(conn, st, cid, cfg, action))
            http_tasks.add(task)
            task.add_done_callback(http_tasks.discard)
        else:
            frame = json.dumps({"type": "command", **_envelope(conn.spec.signer, cid, action)})
            st.sent[cid] = Sent(table, perf(), measured)
            try:
                await conn.ws.send(frame)
            except websockets.ConnectionClosed as e:
                st.error("send_failed", repr(e))
        n += 1
        at += rng.expovariate(cfg.rate_per_table)


def _pending(st: State, by_table: dict[int, list[Conn]], match: str) -> int:
    missing = 0
    for cid, (_, seq) in st.acks.items():
        sent = st.sent.get(cid)
        if sent is None:
            continue
        key = cid if match == "id" else seq
        missing += sum(1 for c in by_table[sent.table] if c.ws is not None and key not in c.recv)
    return missing


async def run_load(specs: list[ClientSpec], cfg: LoadConfig, match: str, pids: list[int] = ()) -> dict:
    """One round: connect every client, roll for ``cfg.duration`` seconds, drain, close.

    Returns the raw measurements of the round; :func:`summarize` turns one or
    more rounds (e.g. alternating with the relay) into the reported numbers.
    """
    budget = cfg.connect_timeout * 2 + cfg.duration + cfg.drain + 30
    return await asyncio.wait_for(_run(specs, cfg, match, list(pids)), budget)


async def _run(specs: list[ClientSpec], cfg: LoadConfig, match: str, pids: list[int]) -> dict:
    st = State()
    st.follow_up_enabled = cfg.follow_ups
    conns = [Conn(spec) for spec in specs]
    by_table: dict[int, list[Conn]] = {}
    for c in conns:
        by_table.setdefault(c.spec.table, []).append(c)
    readers: list[asyncio.Task] = []
    http_tasks: set[asyncio.Task] = set()
    sem = asyncio.Semaphore(cfg.connect_concurrency)
    t_connect = perf()
    cpu: dict = {}
    try:
        await asyncio.gather(*[_connect(c, st, match, sem, cfg, readers) for c in conns])
        connect_wall = perf() - t_connect
        await asyncio.sleep(0.5)  # let the last group_add settle everywhere
        start = perf() + 0.2

        async def sample_cpu():
            await asyncio.sleep(max(0.0, start + cfg.warmup - perf()))
            before = {pid: cpu_seconds(pid) for pid in pids}
            mine_before = sum(os.times()[:2])
            machine_before = _machine_jiffies()
            services_before = _service_cpu(cfg.pg_database, cfg.redis_pids)
            t_before = perf()
            await asyncio.sleep(max(0.0, start + cfg.duration - perf()))
            after = {pid: cpu_seconds(pid) for pid in pids}
            machine_after = _machine_jiffies()
            services_after = _service_cpu(cfg.pg_database, cfg.redis_pids)
            for kind in ("postgres", "redis"):
                cpu[f"{kind}_cpu_s"] = (_service_delta(services_before, services_after, kind) if cfg.pg_database
                                        else services_after[kind] - services_before[kind])
            if machine_before and machine_after:
                cpu["machine_busy_jiffies"] = machine_after[0] - machine_before[0]
                cpu["machine_total_jiffies"] = machine_after[1] - machine_before[1]
            cpu["server_cpu_s"] = sum((after[p] or 0) - (before[p] or 0) for p in pids)
            cpu["loadgen_cpu_s"] = sum(os.times()[:2]) - mine_before
            cpu["wall_s"] = perf() - t_before

        sampler = asyncio.create_task(sample_cpu())
        await asyncio.gather(*[_drive_table(t, cs, st, cfg, start, http_tasks) for t, cs in by_table.items()])
        sending_wall = perf() - start
        await sampler
        # Drain: wait for answers and deliveries still in flight, bounded.
        drain_deadline = perf() + cfg.drain
        while perf() < drain_deadline:
            if not http_tasks and not st.follow_up_tasks and len(st.acks) >= len(st.sent) - st.refusals() \
                    and _pending(st, by_table, match) == 0:
                break
            await asyncio.sleep(0.05)
        drain_wall = perf() - (start + sending_wall)
    finally:
        st.stopping = True
        for task in [*http_tasks, *st.follow_up_tasks]:
            task.cancel()
        await asyncio.gather(*[c.ws.close() for c in conns if c.ws is not None], return_exceptions=True)
        for task in readers:
            task.cancel()
        await asyncio.gather(*readers, return_exceptions=True)
    return _raw(st, conns, by_table, cfg, match, connect_wall, sending_wall, drain_wall, cpu)


def _raw(st: State, conns, by_table, cfg: LoadConfig, match: str, connect_wall: float, sending_wall: float,
         drain_wall: float, cpu: dict) -> dict:
    latencies, ack_latencies, slow = [], [], []
    missing = acked = 0
    measured = [(cid, s) for cid, s in st.sent.items() if s.measured]
    # The rolls of the first --warmup seconds on freshly started processes, reported apart: what a
    # table pays right after a start or a restart (sessions/warmup.py).
    first_rolls = [ack[0] - s.t0 for cid, s in st.sent.items() if not s.measured
                   and (ack := st.acks.get(cid)) is not None]
    first = min((s.t0 for _, s in measured), default=0.0)
    for cid, sent in measured:
        ack = st.acks.get(cid)
        if ack is None:
            continue
        acked += 1
        ack_latencies.append(ack[0] - sent.t0)
        slow.append((ack[0] - sent.t0, sent.t0 - first, sent.table))
        key = cid if match == "id" else ack[1]
        for c in by_table[sent.table]:
            if c.ws is None:
                continue
            t = c.recv.get(key)
            if t is None:
                missing += 1
            else:
                latencies.append(t - sent.t0)
    errors = Counter(st.errors)
    unacked = sum(1 for cid in st.sent if cid not in st.acks) - st.refusals()
    if unacked > 0:
        errors["unanswered_command"] += unacked
    if missing:
        errors["missing_delivery"] += missing
    connected = [c for c in conns if c.ws is not None and c.connect_s is not None]
    return {
        "match": match, "via": cfg.via, "tables": len(by_table), "sockets": len(conns),
        "sockets_ready": len(connected), "offered": cfg.rate_per_table * len(by_table),
        "window_s": max(1e-9, cfg.duration - cfg.warmup), "sent": len(st.sent), "measured": len(measured),
        "acked": acked, "latencies": latencies, "ack_latencies": ack_latencies, "first_rolls": first_rolls,
        # When a tail comes, whether it is one moment or spread out, one table or all of them:
        # the slowest acks, each with its latency, when it was sent (s into the measured window), its table.
        "slowest_acks": [{"ms": round(ms * 1000, 1), "sent_s": round(at, 2), "table": table}
                         for ms, at, table in sorted(slow, reverse=True)[:12]],
        "connect_s": [c.connect_s for c in connected], "connect_wall_s": connect_wall,
        "sending_wall_s": sending_wall, "drain_wall_s": drain_wall,
        "event_bytes": sum(c.event_bytes for c in conns), "events": sum(c.events for c in conns),
        "errors": errors, "error_examples": st.error_examples, "cpu": cpu,
        "sheets_pushed": st.sheets_pushed, "follow_ups": list(st.follow_ups), "sheet_retries": st.sheet_retries,
    }


def summarize(rounds: list[dict]) -> dict:
    """The reported numbers of one side (Talekeeper or the relay) over all its rounds."""
    first = rounds[0]
    window = sum(r["window_s"] for r in rounds)
    acked = sum(r["acked"] for r in rounds)
    latencies = [x for r in rounds for x in r["latencies"]]
    errors = Counter()
    for r in rounds:
        errors.update(r["errors"])
    events = sum(r["events"] for r in rounds)
    cpu = Counter()
    for r in rounds:
        cpu.update({k: v for k, v in r["cpu"].items() if v is not None})
    result = {
        "match": first["match"],
        "via": first["via"],
        "rounds": len(rounds),
        "tables": first["tables"],
        "sockets": first["sockets"],
        "sockets_ready_min": min(r["sockets_ready"] for r in rounds),
        "offered_rolls_per_s": round(first["offered"], 2),
        "rolls_sent": sum(r["sent"] for r in rounds),
        "rolls_measured": sum(r["measured"] for r in rounds),
        "measured_window_s": round(window, 2),
        "rolls_per_s": round(acked / window, 2),
        "deliveries_per_s": round(len(latencies) / window, 2),
        "latency_ms": summary_ms(latencies),
        "ack_ms": summary_ms([x for r in rounds for x in r["ack_latencies"]]),
        "first_rolls_ack_ms": summary_ms([x for r in rounds for x in r.get("first_rolls", ())]),
        "connect_to_ready_ms": summary_ms([x for r in rounds for x in r["connect_s"]]),
        "connect_wall_s": [round(r["connect_wall_s"], 2) for r in rounds],
        "drain_wall_s": [round(r["drain_wall_s"], 2) for r in rounds],
        "mean_event_frame_bytes": round(sum(r["event_bytes"] for r in rounds) / events) if events else None,
        "errors": dict(sorted(errors.items())),
        "errors_total": sum(errors.values()),
        "event_frames_with_sheets": sum(r.get("sheets_pushed", 0) for r in rounds),
        "follow_up_sheet_fetches": sum(len(r.get("follow_ups", ())) for r in rounds),
        "follow_up_ms": summary_ms([x for r in rounds for x in r.get("follow_ups", ())]),
        "sheet_fetch_retries": dict(sum((Counter(r.get("sheet_retries", {})) for r in rounds), Counter())),
        "error_examples": [e for r in rounds for e in r["error_examples"]][:10],
        "slowest_acks_by_round": [r.get("slowest_acks", []) for r in rounds],
    }
    if cpu.get("machine_total_jiffies"):
        # Every process on this shared machine, as a share of all cores: 100 means every core was busy.
        result["machine_busy_pct"] = round(100 * cpu["machine_busy_jiffies"] / cpu["machine_total_jiffies"], 1)
    if cpu.get("wall_s"):
        result["server_cpu_pct_of_one_core"] = round(100 * cpu["server_cpu_s"] / cpu["wall_s"], 1)
        result["loadgen_cpu_pct_of_one_core"] = round(100 * cpu["loadgen_cpu_s"] / cpu["wall_s"], 1)
    if acked:
        for kind, key in (("server", "server_cpu_s"), ("postgres", "postgres_cpu_s"), ("redis", "redis_cpu_s")):
            if key in cpu:
                result[f"{kind}_cpu_ms_per_roll"] = round(cpu[key] * 1000 / acked, 3)
    return result


# --- a reconnect storm ------------------------------------------------------------

def _with_after(url: str, after: int | None) -> str:
    """The socket URL a reconnecting browser opens: ``?after=`` the last seq it saw."""
    if after is None or "?after=" not in url:
        return url
    return url.split("?after=", 1)[0] + f"?after={after}"


async def run_storm(specs: list[ClientSpec], cfg: LoadConfig, match: str, pids: list[int] = (),
                    between=None) -> dict:
    """Every socket connects (25 at a time) and is ready; all close; ``between()`` runs (the app's
    tables get a backlog meanwhile); then every socket reconnects AT ONCE from the last seq it saw.

    Measured from the instant the storm starts, per socket: ``ready``, and caught up: it has
    received every event up to the head ``between()`` returned for its table and the sheet
    fetches the browser makes after a backlog without sheets (``cfg.follow_ups``) have answered.
    Also the RSS of every server process once all are in.
    """
    budget = cfg.connect_timeout * 3 + 60
    return await asyncio.wait_for(_storm(specs, cfg, match, list(pids), between), budget)


async def _storm(specs, cfg, match, pids, between) -> dict:
    st = State()
    conns = [Conn(spec) for spec in specs]
    readers: list[asyncio.Task] = []
    first_sem = asyncio.Semaphore(cfg.connect_concurrency)
    rss_before = {pid: rss_mb(pid) for pid in pids}
    try:
        await asyncio.gather(*[_connect(c, st, match, first_sem, cfg, readers) for c in conns])
        opened = sum(1 for c in conns if c.connect_s is not None)
        rss_open = {pid: rss_mb(pid) for pid in pids}
        st.stopping = True
        await asyncio.gather(*[c.ws.close() for c in conns if c.ws is not None], return_exceptions=True)
        for task in readers:
            task.cancel()
        await asyncio.gather(*readers, return_exceptions=True)
        readers.clear()
        targets = await between() if between else {}
        await asyncio.sleep(0.5)  # the servers see every close before the storm
        st.stopping = False
        st.follow_up_enabled = cfg.follow_ups
        last = {id(c): c.last_seq for c in conns}
        backlog = sum(max(0, (targets.get(c.spec.table) or 0) - (c.last_seq or 0)) for c in conns) if targets else 0
        fresh = [Conn(ClientSpec(**{**c.spec.__dict__, "ws_url": _with_after(c.spec.ws_url, last[id(c)])}))
                 for c in conns]
        for old, new in zip(conns, fresh):
            new.last_seq = old.last_seq
        conns = fresh
        every = asyncio.Semaphore(len(conns))
        services_before = _service_cpu(cfg.pg_database, cfg.redis_pids)
        cpu_before = {pid: cpu_seconds(pid) for pid in pids}
        t0 = perf()
        await asyncio.gather(*[_connect(c, st, match, every, cfg, readers) for c in conns])
        all_ready = perf() - t0
        ready = [c.connect_s for c in conns if c.connect_s is not None]

        def caught_up(c: Conn) -> bool:
            target = targets.get(c.spec.table)
            events_in = target is None or (c.last_seq is not None and c.last_seq >= target)
            return events_in and all(t.done() for t in c.refresh.values()) and not c.fetch_failed

        caught: dict[int, float] = {}
        deadline = t0 + cfg.connect_timeout
        while perf() < deadline:
            now = perf() - t0
            for i, c in enumerate(conns):
                if i not in caught and c.connect_s is not None and caught_up(c):
                    caught[i] = now
            if len(caught) == len(ready) or all(
                    i in caught or c.connect_s is None or (c.fetch_failed and all(t.done() for t in c.refresh.values()))
                    for i, c in enumerate(conns)):
                break
            await asyncio.sleep(0.01)
        all_caught = perf() - t0 if len(caught) == len(conns) else None
        rss_storm = {pid: rss_mb(pid) for pid in pids}
        services_after = _service_cpu(cfg.pg_database, cfg.redis_pids)
        cpu = {"server_cpu_s": sum((cpu_seconds(p) or 0) - (cpu_before[p] or 0) for p in pids),
               **{f"{k}_cpu_s": _service_delta(services_before, services_after, k) for k in ("postgres", "redis")}}
    finally:
        st.stopping = True
        for task in list(st.follow_up_tasks):
            task.cancel()
        await asyncio.gather(*[c.ws.close() for c in conns if c.ws is not None], return_exceptions=True)
        for task in readers:
            task.cancel()
        await asyncio.gather(*readers, return_exceptions=True)
    missing = len(conns) - len(ready)
    if missing:
        st.errors["not_ready"] += missing
    not_caught = len(ready) - len(caught)
    if not_caught:
        st.errors["not_caught_up"] += not_caught
    stale = sum(1 for c in conns if c.fetch_failed)
    if stale:
        st.errors["stale_sheet_after_failed_fetch"] += stale
    return {
        "sockets": len(conns), "sockets_opened_first": opened, "sockets_ready": len(ready),
        "all_ready_s": round(all_ready, 3) if len(ready) == len(conns) else None,
        "all_caught_up_s": round(all_caught, 3) if all_caught is not None else None,
        "ready_ms": summary_ms(ready), "caught_up_ms": summary_ms(list(caught.values())),
        "backlog_events_per_socket": round(backlog / len(conns), 1) if conns else 0,
        "follow_up_sheet_fetches": len(st.follow_ups), "follow_up_ms": summary_ms(st.follow_ups),
        "sheet_fetch_retries": dict(st.sheet_retries),
        "rss_mb_before": rss_before, "rss_mb_open": rss_open, "rss_mb_after_storm": rss_storm,
        "max_rss_mb": max((v["rss_mb"] or 0 for v in [*rss_open.values(), *rss_storm.values()]), default=None),
        "max_peak_rss_mb": max((v["peak_rss_mb"] or 0 for v in rss_storm.values()), default=None),
        "cpu_s": {k: round(v, 3) for k, v in cpu.items()},
        "errors": dict(sorted(st.errors.items())), "errors_total": sum(st.errors.values()),
        "error_examples": st.error_examples,
    }


# --- concurrent HTTP writers ---------------------------------------------------------

async def run_writers(urls: list[tuple[str, str | None, object]], cfg: LoadConfig, pids: list[int] = (),
                      max_per_writer: int = 2000) -> dict:
    """``len(urls)`` writers, each POSTing commands back to back (closed loop) to its own URL with its
    token, signed by its signer (or not, when None), for ``cfg.duration`` seconds (the first
    ``cfg.warmup`` not measured): per-command latency, commands per second, errors, and CPU per
    command of the servers, PostgreSQL and Redis."""
    budget = cfg.duration + 60
    return await asyncio.wait_for(_writers(urls, cfg, list(pids), max_per_writer), budget)


async def _writers(urls, cfg, pids, max_per_writer) -> dict:
    st = State()
    times: list[float] = []
    start = perf()
    end = start + cfg.duration
    measured_from = start + cfg.warmup
    box = {}

    async def writer(w: int, url: str, token: str | None, signer):
        for n in range(max_per_writer):
            if perf() >= end:
                return
            body = json.dumps(_envelope(signer, f"{cfg.run_id}-w{w}-{n}",
                                        {"type": "roll", "notation": cfg.notation})).encode()
            t = perf()
            try:
                status, raw = await _http_post(url, token, body, 30.0)
            except Exception as e:  # noqa: BLE001
                st.error("http_failed", repr(e))
                continue
            if status not in (200, 201):
                st.error(f"http_{status}", raw.decode("utf-8", "replace"))
            elif t >= measured_from:
                times.append(perf() - t)

    async def sample():
        await asyncio.sleep(cfg.warmup)
        box["before"] = ({p: cpu_seconds(p) for p in pids}, _service_cpu(cfg.pg_database, cfg.redis_pids), perf())

    sampler = asyncio.create_task(sample())
    await asyncio.gather(*[writer(w, url, token, signer) for w, (url, token, signer) in enumerate(urls)])
    await sampler
    cpu_before, services_before, t_before = box["before"]
    services_after = _service_cpu(cfg.pg_database, cfg.redis_pids)
    wall = perf() - t_before
    n = len(times)
    out = {"writers": len(urls), "commands": n, "window_s": round(wall, 2),
           "commands_per_s": round(n / wall, 1) if wall > 0 else None, "latency_ms": summary_ms(times),
           "errors": dict(sorted(st.errors.items())), "errors_total": sum(st.errors.values()),
           "error_examples": st.error_examples}
    if n:
        out["server_cpu_ms_per_command"] = round(
            sum((cpu_seconds(p) or 0) - (cpu_before[p] or 0) for p in pids) * 1000 / n, 3)
        for k in ("postgres", "redis"):
            out[f"{k}_cpu_ms_per_command"] = round(_service_delta(services_before, services_after, k) * 1000 / n, 3)
    return out
