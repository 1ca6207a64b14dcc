"""A soak: one daphne process under a steady, light load for a long time, and where its memory goes.

```sh
.venv/bin/python bench/soak.py                      # 2 hours: 10 tables x 5 members at 0.5 actions/s per table
.venv/bin/python bench/soak.py --duration 600 --probe-every 60   # a 10-minute look
```

It starts its own redis-server (as ``bench/run.py``), migrates the bench database, makes ``--tables``
tables (the four systems in turn, a GM and players with characters, a session running) and starts ONE
daphne of ``campaign.asgi:application`` with the memory probe on (``TRACEMALLOC_FILE``,
``sessions/memwatch.py``). Then, in rounds of ``--round`` seconds until ``--duration`` is used up,
every member connects (from the log's head, as a page reloads), the players act at ``--rate`` per table
(Poisson: their system's rule actions, a plain ``2d6`` and chat messages, ``--chat`` of them) and every
socket closes: each round is a reconnect of every page. After each round it records the daphne's RSS
and the round's acks and errors.

Everything goes to ``bench/results/soak-<UTC time>/``: ``rounds.jsonl`` (one line per round),
``memwatch.jsonl`` (the server's probe: RSS, traced memory, the allocation sites that grew most),
``summary.json`` (RSS and traced memory at the first and last sample, the growth per minute over the
whole run and over its second half, and the top growth sites of the last probe) and the logs.
Talks to 127.0.0.1 only; the load, the rounds and the whole run are bounded in time and count, and
every process it starts is stopped when it ends, fails or is interrupted (``bench/common.py``).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import common  # noqa: E402
from bench.common import RESULTS  # noqa: E402

MAX_DURATION_S = 6 * 3600
CHAT = {"type": "post_message", "kind": "ooc", "text": "Anyone bring snacks? (soak)"}
perf = time.monotonic


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--duration", type=float, default=7200, help=f"seconds in all, at most {MAX_DURATION_S} [7200]")
    p.add_argument("--round", type=float, default=120, help="seconds each socket stays before it reconnects [120]")
    p.add_argument("--tables", type=int, default=10, help="tables [10]")
    p.add_argument("--clients", type=int, default=5, help="members per table, the GM and players [5]")
    p.add_argument("--rate", type=float, default=0.5, help="actions per second per table (Poisson) [0.5]")
    p.add_argument("--chat", type=float, default=0.25, help="share of the actions that are chat messages [0.25]")
    p.add_argument("--probe-every", type=float, default=300, help="seconds between the server's memory samples [300]")
    p.add_argument("--probe-frames", type=int, default=6, help="traceback depth the probe records [6]")
    p.add_argument("--no-probe", action="store_true", help="run without tracemalloc (RSS only)")
    p.add_argument("--database-url", default="postgres://postgres@127.0.0.1:5432/talekeeper_bench_soak",
                   help="the soak's own database, created if missing; its name must contain 'bench'")
    p.add_argument("--redis-url", help="use this Redis (on 127.0.0.1) instead of a private redis-server")
    p.add_argument("--app-env", action="append", default=[], metavar="KEY=VALUE",
                   help="extra environment for the daphne, e.g. MALLOC_ARENA_MAX=2 (repeatable)")
    p.add_argument("--summarize", metavar="DIR", type=Path,
                   help="only print what the soak in DIR (bench/results/soak-...) measured so far, running or not")
    a = p.parse_args(argv)
    if not 0 < a.duration <= MAX_DURATION_S:
        p.error(f"--duration must be within (0, {MAX_DURATION_S}]")
    if not 0 <= a.chat <= 1:
        p.error("--chat is a share, between 0 and 1")
    return a


def log(msg: str) -> None:
    print(f"[{datetime.now(timezone.utc).strftime('%H:%M:%S')}] {msg}", flush=True)


def slope_per_min(points: list[tuple[float, float]]) -> float | None:
    """Least-squares slope of (seconds, value) points, per minute."""
    if len(points) < 2:
        return None
    n = len(points)
    mx = sum(x for x, _ in points) / n
    my = sum(y for _, y in points) / n
    var = sum((x - mx) ** 2 for x, _ in points)
    if var == 0:
        return None
    return round(sum((x - mx) * (y - my) for x, y in points) / var * 60, 3)


def _with_chat(tables: list[dict], share: float) -> None:
    """Every player's actions get chat messages, ``share`` of the picks (the load picks uniformly)."""
    for table in tables:
        for member in table["members"]:
            actions = member.get("actions")
            if not actions or share <= 0:
                continue
            if share >= 1:
                member["actions"] = [CHAT]
                continue
            # k chat entries among len(actions) others: k / (k + n) = share
            k = max(1, round(share * len(actions) / (1 - share)))
            member["actions"] = actions + [CHAT] * k


def _memwatch_summary(path: Path) -> dict:
    lines = []
    if path.exists():
        for raw in path.read_text().splitlines():
            try:
                line = json.loads(raw)
            except ValueError:
                continue
            if "rss_kb" in line:
                lines.append(line)
    if not lines:
        return {"samples": 0}
    t0 = lines[0]["t"]
    half = [ln for ln in lines if ln["t"] - t0 >= (lines[-1]["t"] - t0) / 2]
    mb = lambda ln, k: ln[k] / 1024 if ln.get(k) is not None else None  # noqa: E731
    return {
        "samples": len(lines),
        "first": {k: lines[0].get(k) for k in ("rss_kb", "traced_kb", "gc_objects")},
        "last": {k: lines[-1].get(k) for k in ("rss_kb", "traced_kb", "gc_objects")},
        "span_min": round((lines[-1]["t"] - t0) / 60, 1),
        "rss_mb_per_min": slope_per_min([(ln["t"], mb(ln, "rss_kb")) for ln in lines if ln.get("rss_kb")]),
        "traced_mb_per_min": slope_per_min([(ln["t"], mb(ln, "traced_kb")) for ln in lines]),
        "rss_mb_per_min_second_half": slope_per_min([(ln["t"], mb(ln, "rss_kb")) for ln in half if ln.get("rss_kb")]),
        "traced_mb_per_min_second_half": slope_per_min([(ln["t"], mb(ln, "traced_kb")) for ln in half]),
        "top_growth_since_first": lines[-1].get("since_first", [])[:10],
        "top_growth_tracebacks": lines[-1].get("since_first_tracebacks", []),
    }


def main(argv=None) -> int:
    a = parse_args(argv)
    if a.summarize:
        summary = summarize(a.summarize)
        print(json.dumps(summary, indent=2))
        log(summary_line(summary))
        return 0
    common.require_loopback(a.database_url, "--database-url")
    if a.redis_url:
        common.require_loopback(a.redis_url, "--redis-url")
    run_id = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    out = RESULTS / f"soak-{run_id}"
    out.mkdir(parents=True, exist_ok=True)
    log(f"soak {run_id}: {a.tables} tables x {a.clients} at {a.rate}/s per table, rounds of {a.round}s, "
        f"{a.duration}s in all; results in {out}")
    import contextlib

    with (contextlib.nullcontext(a.redis_url) if a.redis_url else common.own_redis(out)) as redis_url:
        return _soak(a, run_id, out, redis_url)


def _soak(a, run_id: str, out: Path, redis_url: str) -> int:
    env = common.base_env(a.database_url, redis_url)
    common.ensure_database(a.database_url)
    common.migrate(env)
    common.setup_django(env)
    from bench import data
    from bench.live import _specs
    from bench.load import LoadConfig, rss_mb, run_load

    tables = data.make_rule_tables(f"soak-{run_id}", a.tables, a.clients)
    _with_chat(tables, a.chat)
    common.analyze(a.database_url)
    probe_file = out / "memwatch.jsonl"
    app_env = {**env, "RATE_LIMIT_USER_PER_MINUTE": "1000000", "RATE_LIMIT_MESSAGES_PER_MINUTE": "1000000"}
    if not a.no_probe:
        app_env |= {"TRACEMALLOC_FILE": str(probe_file), "TRACEMALLOC_SECONDS": str(int(a.probe_every)),
                    "TRACEMALLOC_FRAMES": str(a.probe_frames)}
    for item in a.app_env:
        key, _, value = item.partition("=")
        app_env[key] = value
    rounds_file = out / "rounds.jsonl"
    errors = 0
    try:
        with common.daphnes("campaign.asgi:application", 1, app_env, out / "logs", "soak") as (ports, procs):
            pid = procs[0].pid
            start = perf()
            end = start + a.duration
            n = 0
            while (left := end - perf()) > 5:
                cfg = LoadConfig(rate_per_table=a.rate, duration=min(a.round, left), warmup=0, drain=10,
                                 run_id=f"soak-{run_id}-r{n}", seed=n + 1,
                                 max_commands_per_table=int(a.rate * a.round * 4) + 10)
                raw = asyncio.run(run_load(_specs(tables, ports), cfg, "seq", [pid]))
                acks = sorted(raw["ack_latencies"])
                line = {"round": n, "t_s": round(perf() - start, 1), **rss_mb(pid), "sent": raw["sent"],
                        "acked": raw["acked"], "sockets_ready": raw["sockets_ready"],
                        "ack_p99_ms": round(common.percentile(acks, 99) * 1000, 1) if acks else None,
                        "errors": dict(raw["errors"]), "server_cpu_s": round(raw["cpu"].get("server_cpu_s", 0), 2)}
                errors += sum(line["errors"].values())
                with rounds_file.open("a") as f:
                    f.write(json.dumps(line) + "\n")
                log(f"round {n} at {line['t_s']:.0f}s: RSS {line['rss_mb']} MB, {line['acked']}/{line['sent']} "
                    f"acked, ack p99 {line['ack_p99_ms']} ms, errors {line['errors'] or 0}")
                if procs[0].poll() is not None:
                    log("the daphne exited")
                    break
                n += 1
    finally:  # an interrupted run (SIGTERM, Ctrl-C) still says what it measured
        summary = {"command": " ".join(sys.argv), "run_id": run_id,
                   "machine": common.machine_info(a.database_url, redis_url),
                   "config": {k: v for k, v in vars(a).items() if k != "database_url"}, **summarize(out)}
        (out / "summary.json").write_text(json.dumps(summary, indent=2))
        log(f"{summary_line(summary)}; {out / 'summary.json'}")
    return 0 if errors == 0 else 1


def summarize(out: Path) -> dict:
    """What a soak's directory says so far: its rounds (RSS, acks, errors) and the server's probe."""
    rounds = [json.loads(line) for line in (out / "rounds.jsonl").read_text().splitlines()] \
        if (out / "rounds.jsonl").exists() else []
    first, last = (rounds[0], rounds[-1]) if rounds else ({}, {})
    rss = [(r["t_s"], r["rss_mb"]) for r in rounds if r.get("rss_mb")]
    return {
        "measured_min": round(last.get("t_s", 0) / 60, 1), "rounds": len(rounds),
        "sent": sum(r["sent"] for r in rounds), "acked": sum(r["acked"] for r in rounds),
        "errors": sum(sum(r["errors"].values()) for r in rounds),
        "rss_mb": {"first_round": first.get("rss_mb"), "last_round": last.get("rss_mb"),
                   "peak": last.get("peak_rss_mb"), "per_min": slope_per_min(rss),
                   "per_min_second_half": slope_per_min(rss[len(rss) // 2:])},
        "probe": _memwatch_summary(out / "memwatch.jsonl"),
    }


def summary_line(summary: dict) -> str:
    rss = summary["rss_mb"]
    return (f"{summary['measured_min']} min, {summary['acked']}/{summary['sent']} acked, errors {summary['errors']}; "
            f"RSS {rss['first_round']} -> {rss['last_round']} MB ({rss['per_min']} MB/min, second half "
            f"{rss['per_min_second_half']}); traced {summary['probe'].get('traced_mb_per_min')} MB/min")

if __name__ == "__main__":
    sys.exit(main())
