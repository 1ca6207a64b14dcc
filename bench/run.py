"""Talekeeper benchmarks: ``make bench`` or ``.venv/bin/python bench/run.py [--quick] [options]``.

Load: real WebSocket clients against real daphne processes on PostgreSQL and
Redis, N tables x M clients, players rolling; the same load against a bare
Channels relay on the same Redis (bench/relay.py) for the ratio.
Store: appends through do_command against raw INSERTs, projection rebuilds,
and read times with a small and a large log.

Results are printed and written as JSON to bench/results/. See bench/README.md.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import shlex
import subprocess
import sys
import time
import uuid
import warnings
from datetime import datetime, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import common  # noqa: E402
from bench.common import RESULTS, ratio  # noqa: E402


def sizes(text: str) -> list[int]:
    return [int(float(x.replace("k", "e3"))) for x in text.split(",") if x.strip()]


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--quick", action="store_true", help="a smoke-sized run (under a minute)")
    p.add_argument("--only", choices=["live", "store", "load"],
                   help="run only the live scenarios, only the store benchmarks, or only the older "
                        "2d6 load scenarios (10x6 and 20x10, --tables/--clients/...); default: live and store")
    g = p.add_argument_group("load")
    g.add_argument("--procs", type=int, default=2, help="daphne processes (app and relay alike) [2]")
    g.add_argument("--tables", type=int, default=10, help="tables of the main load [10]")
    g.add_argument("--clients", type=int, default=6, help="sockets per table, 1 GM + players [6]")
    g.add_argument("--rate", type=float, default=2.0, help="rolls per second per table (Poisson) [2]")
    g.add_argument("--duration", type=float, help="seconds of rolling per round [12; quick 7]")
    g.add_argument("--warmup", type=float, help="first seconds of each round not measured [2; quick 1]")
    g.add_argument("--rounds", type=int, help="rounds per scenario, alternating Talekeeper and the relay, each "
                                              "--duration long [2; quick 1]")
    g.add_argument("--via", choices=["ws", "http"], default="ws",
                   help="send commands as socket frames or HTTP POSTs with a bearer token [ws]")
    g.add_argument("--big-tables", type=int, default=20, help="tables of the large load [20]")
    g.add_argument("--big-clients", type=int, default=10, help="sockets per table of the large load [10]")
    g.add_argument("--big-rate", type=float, default=1.0, help="rolls/s per table of the large load [1]")
    g.add_argument("--no-big", action="store_true", help="skip the large load (default in --quick)")
    g.add_argument("--http-too", action="store_true",
                   help="also run the main load with commands sent over HTTP (the relay gets socket frames)")
    g.add_argument("--no-relay", action="store_true", help="skip the relay baseline")
    g.add_argument("--py-spy", nargs="?", const="wall", choices=["wall", "gil"],
                   help="profile every Talekeeper daphne during each load with py-spy (pip install py-spy): "
                        "'wall' (default) samples running threads, so waits on PostgreSQL count; 'gil' only "
                        "the thread holding the GIL, i.e. Python CPU. Collapsed stacks go to "
                        "bench/results/profiles/; summarise them with bench/profile_report.py")
    g.add_argument("--app-env", action="append", default=[], metavar="KEY=VALUE",
                   help="extra environment for the Talekeeper daphnes, e.g. DB_CONN_MAX_AGE=60 (repeatable)")
    g.add_argument("--app-settings", default="campaign.settings", metavar="MODULE",
                   help="DJANGO_SETTINGS_MODULE of the Talekeeper daphnes, for an experiment of your own "
                        "[campaign.settings]")
    g = p.add_argument_group("live (rule actions, reconnect storm, HTTP writers)")
    g.add_argument("--live-procs", type=lambda t: [int(x) for x in t.split(",")], default=[1, 2],
                   help="daphne process counts to run every live scenario on [1,2]")
    g.add_argument("--live-tables", type=int, default=20, help="tables of the rule-actions load [20]")
    g.add_argument("--live-clients", type=int, default=8, help="sockets per table of the rule-actions load [8]")
    g.add_argument("--live-rate", type=float, default=2.0, help="rolls/s per table of the rule-actions load [2]")
    g.add_argument("--storm-tables", type=int, default=20, help="tables of the reconnect storm [20]")
    g.add_argument("--storm-clients", type=int, default=10, help="sockets per table of the storm [10]")
    g.add_argument("--storm-backlog", type=int, default=5,
                   help="rule actions per table committed while the storm's sockets are away [5]")
    g.add_argument("--live-scenarios", type=lambda t: [x for x in t.split(",") if x], default=["witnessed", "rules", "storm", "writers"],
                   help="which live scenarios to run, e.g. rules,storm [witnessed,rules,storm,writers]")
    g.add_argument("--witness-rate", type=float, default=0.1,
                   help="GM rolls/s per table of the witnessed load (the other members contribute to each) [0.1]")
    g.add_argument("--writers", type=int, default=8, help="concurrent HTTP writers [8]")
    g.add_argument("--writer-duration", type=float, help="seconds of writing per side [10; quick 5]")
    g = p.add_argument_group("store")
    g.add_argument("--appends", type=int, help="commands per append benchmark [1000; quick 150]")
    g.add_argument("--rebuild-sizes", type=sizes, help="log sizes to rebuild [10k,100k; quick 10k]")
    g.add_argument("--rebuild-repeat", type=int, help="rebuilds per size, best is reported [2; quick 1]")
    g.add_argument("--read-sizes", type=sizes, help="log sizes for page timings [1k,100k; quick 1k,10k]")
    g.add_argument("--read-requests", type=int, help="requests per page and size [50; quick 20]")
    g = p.add_argument_group("services")
    g.add_argument("--database-url", default=common.DEFAULT_DATABASE_URL,
                   help=f"the bench's own PostgreSQL database (created if missing) [{common.DEFAULT_DATABASE_URL}]")
    g.add_argument("--redis-url",
                   help="use this Redis (on 127.0.0.1) instead of a private redis-server that the bench starts "
                        "on a spare port and stops at the end [private]")
    g.add_argument("--fresh", action="store_true", help="drop and recreate the bench database first")
    g.add_argument("--out", type=Path, help="JSON result file [bench/results/<time>-<mode>.json]")
    g.add_argument("--seed", type=int, default=1)
    a = p.parse_args(argv)
    q = a.quick
    a.duration = a.duration if a.duration is not None else (7.0 if q else 12.0)
    a.warmup = a.warmup if a.warmup is not None else (1.0 if q else 2.0)
    a.appends = a.appends if a.appends is not None else (150 if q else 1000)
    a.rebuild_sizes = a.rebuild_sizes or ([10_000] if q else [10_000, 100_000])
    a.rebuild_repeat = a.rebuild_repeat or (1 if q else 2)
    a.read_sizes = a.read_sizes or ([1_000, 10_000] if q else [1_000, 100_000])
    a.read_requests = a.read_requests or (20 if q else 50)
    a.rounds = a.rounds or (1 if q else 2)
    a.no_big = a.no_big or q
    a.writer_duration = a.writer_duration if a.writer_duration is not None else (5.0 if q else 10.0)
    if a.warmup >= a.duration:
        p.error("--warmup must be shorter than --duration")
    # Keep every run bounded (a typo must not start 100 000 sockets on a shared 2-core machine).
    for name, value, hi in (("--tables", a.tables, 500), ("--big-tables", a.big_tables, 500),
                            ("--clients", a.clients, 100), ("--big-clients", a.big_clients, 100),
                            ("--procs", a.procs, 16), ("--rounds", a.rounds, 10),
                            ("--live-tables", a.live_tables, 100), ("--live-clients", a.live_clients, 50),
                            ("--storm-tables", a.storm_tables, 100), ("--storm-clients", a.storm_clients, 50),
                            ("--storm-backlog", a.storm_backlog, 100), ("--writers", a.writers, 32)):
        if not 1 <= value <= hi:
            p.error(f"{name} must be from 1 to {hi}")
    if max(a.tables * a.clients, a.big_tables * a.big_clients) > 2000:
        p.error("at most 2000 sockets per scenario")
    if not (0 <= a.rate <= 50 and 0 <= a.big_rate <= 50 and 0 < a.duration <= 600):
        p.error("rates must be 0..50 rolls/s per table and --duration at most 600 s")
    if not a.live_procs or not all(1 <= n <= 4 for n in a.live_procs):
        p.error("--live-procs: 1 to 4 processes each, e.g. 1,2")
    if a.live_tables * a.live_clients > 1000 or a.storm_tables * a.storm_clients > 1000:
        p.error("at most 1000 sockets per live scenario")
    if not (0 < a.live_rate <= 20 and 0 < a.writer_duration <= 120 and a.warmup < a.writer_duration):
        p.error("--live-rate 0..20 rolls/s per table, --writer-duration up to 120 s and longer than --warmup")
    if not a.live_scenarios or set(a.live_scenarios) - {"witnessed", "rules", "storm", "writers"}:
        p.error("--live-scenarios: some of witnessed,rules,storm,writers")
    if a.clients < 2 or a.big_clients < 2 or a.live_clients < 2 or a.storm_clients < 2:
        p.error("a table needs a GM and at least one player (--clients >= 2)")
    return a


def log(msg: str) -> None:
    print(f"[bench {time.strftime('%H:%M:%S')}] {msg}", flush=True)


# --- load -----------------------------------------------------------------------

def load_scenarios(a) -> list[dict]:
    main = {"name": f"{a.tables}x{a.clients}", "tables": a.tables, "clients": a.clients, "rate": a.rate, "via": a.via}
    out = [main]
    if a.http_too and a.via != "http":
        out.append({**main, "name": main["name"] + "-http", "via": "http"})
    if not a.no_big:
        out.append({"name": f"{a.big_tables}x{a.big_clients}", "tables": a.big_tables, "clients": a.big_clients,
                    "rate": a.big_rate, "via": a.via})
    return out


def run_load(a, env: dict, run_id: str, log_dir: Path) -> dict:
    from bench import data
    from bench.load import ClientSpec, LoadConfig, run_load as drive, summarize

    app_env = {**env, "DJANGO_SETTINGS_MODULE": a.app_settings}
    for item in a.app_env:
        key, _, value = item.partition("=")
        app_env[key] = value
    relay_env = {**env, "DJANGO_SETTINGS_MODULE": "bench.relay_settings"}
    scenarios = load_scenarios(a)
    results = {"scenarios": {}, "procs": a.procs, "app_env": a.app_env, "app_settings": a.app_settings}
    for i, sc in enumerate(scenarios):
        t0 = time.perf_counter()
        tables = data.make_tables(f"{run_id}-{i}", sc["tables"], sc["clients"])
        log(f"load {sc['name']} ({sc['tables'] * sc['clients']} sockets, {sc['rate']} rolls/s per table, "
            f"via {sc['via']}, {a.rounds} round(s) of {a.duration:g}s): {len(tables)} tables made in "
            f"{time.perf_counter() - t0:.1f}s")
        cfg = LoadConfig(rate_per_table=sc["rate"], duration=a.duration, warmup=a.warmup, via=sc["via"],
                         seed=a.seed + i, run_id=f"{run_id}-{i}")

        def app_specs(ports: list[int]) -> list:
            """Every member's socket, spread round-robin over the processes, from the log's head now."""
            from campaign.models import Campaign

            heads = dict(Campaign.objects.filter(slug__in=[t["slug"] for t in tables])
                         .values_list("slug", "last_seq"))
            out, k = [], 0
            for t, table in enumerate(tables):
                for member in table["members"]:
                    port = ports[k % len(ports)]
                    k += 1
                    out.append(ClientSpec(
                        table=t, token=member["token"], roller=member["role"] == "player",
                        ws_url=f"ws://127.0.0.1:{port}/ws/campaigns/{table['slug']}/table/"
                               f"?after={heads[table['slug']]}",
                        command_url=f"http://127.0.0.1:{port}/api/campaigns/{table['slug']}/commands"))
            return out

        def relay_specs(ports: list[int], like: list) -> list:
            return [ClientSpec(table=s.table, roller=s.roller,
                               ws_url=f"ws://127.0.0.1:{ports[j % len(ports)]}/relay/{run_id}-{i}-t{s.table}/")
                    for j, s in enumerate(like)]

        # Rounds alternate Talekeeper and the relay, so a burst of load from elsewhere on a shared
        # machine lands on both sides rather than on one; every round gets fresh server processes.
        app_rounds, relay_rounds = [], []
        for rnd in range(a.rounds):
            round_cfg = LoadConfig(**{**cfg.__dict__, "run_id": f"{cfg.run_id}-r{rnd}"})
            with common.daphnes("campaign.asgi:application", a.procs, app_env, log_dir,
                                f"app-{sc['name']}-r{rnd}") as (ports, procs):
                specs = app_specs(ports)
                spies = start_py_spy(a, procs, f"{run_id}-{sc['name']}-r{rnd}")
                try:
                    app_rounds.append(asyncio.run(drive(specs, round_cfg, "seq", [p.pid for p in procs])))
                finally:
                    for spy in spies:
                        try:
                            spy.wait(timeout=30)
                        except subprocess.TimeoutExpired:
                            common.stop(spy)
            if not a.no_relay:
                with common.daphnes("bench.relay:application", a.procs, relay_env, log_dir,
                                    f"relay-{sc['name']}-r{rnd}") as (ports, procs):
                    relay_cfg = LoadConfig(**{**round_cfg.__dict__, "via": "ws"})
                    relay_rounds.append(asyncio.run(drive(relay_specs(ports, specs), relay_cfg, "id",
                                                          [p.pid for p in procs])))
        app = summarize(app_rounds)
        entry = {"config": {**sc, "rounds": a.rounds, "duration_per_round": a.duration, "warmup": a.warmup},
                 "talekeeper": app}
        log(f"  talekeeper: {_line(app)}")
        if relay_rounds:
            relay = summarize(relay_rounds)
            entry["relay"] = relay
            entry["ratio_talekeeper_over_relay"] = {
                q: ratio(app["latency_ms"][q], relay["latency_ms"][q]) for q in ("p50", "p95", "p99")
            }
            entry["ratio_talekeeper_over_relay"]["daphne_cpu_per_roll"] = ratio(
                app.get("server_cpu_ms_per_roll"), relay.get("server_cpu_ms_per_roll"))
            log(f"  relay:      {_line(relay)}")
            log(f"  ratio talekeeper/relay: {entry['ratio_talekeeper_over_relay']}")
        results["scenarios"][sc["name"]] = entry
    return results


def start_py_spy(a, procs, label: str) -> list:
    """py-spy record on each process for the connect + rolling time of one load (bounded by --duration)."""
    if not a.py_spy:
        return []
    out_dir = RESULTS / "profiles"
    out_dir.mkdir(parents=True, exist_ok=True)
    spies = []
    for i, proc in enumerate(procs):
        spy = subprocess.Popen(
            [str(Path(sys.executable).with_name("py-spy")), "record", "--pid", str(proc.pid), "--rate", "200",
             "--duration", str(int(a.duration + 5)), "--format", "raw", "--nonblocking",
             *(["--gil"] if a.py_spy == "gil" else []),
             "-o", str(out_dir / f"{label}-{a.py_spy}-app{i}.txt")],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        common._PROCS.append(spy)
        spies.append(spy)
    return spies


def _line(r: dict) -> str:
    lat = r["latency_ms"]
    return (f"{r['rolls_per_s']} rolls/s (offered {r['offered_rolls_per_s']}), {r['deliveries_per_s']} deliveries/s, "
            f"latency p50 {lat['p50']} p95 {lat['p95']} p99 {lat['p99']} ms, ack p50 {r['ack_ms']['p50']} ms, "
            f"CPU ms/roll: daphne {r.get('server_cpu_ms_per_roll')} postgres {r.get('postgres_cpu_ms_per_roll')} "
            f"redis {r.get('redis_cpu_ms_per_roll')}, machine {r.get('machine_busy_pct')}% busy, errors {r['errors_total']} {r['errors'] or ''}")


def report_targets(result: dict) -> list[dict]:
    """Every target (docs/performance.md) measured in this run, each beside its floor: one PASS/MISS line each."""
    rows = []
    if "live" in result:
        from bench.live import targets as live_targets

        rows += live_targets(result["live"])
    if "store" in result:
        rows += result["store"].get("targets", [])
    if rows:
        log(f"targets (run {result['run_id']}, machine load {result['machine']['load_average']} at start):")
        for t in rows:
            verdict = "INFO" if t["met"] is None else "PASS" if t["met"] else "MISS"
            log(f"  {verdict}  {t['target']}: {t['measured']}  [floor: {t['floor']}]")
        scored = [t for t in rows if t["met"] is not None]
        log(f"  {sum(1 for t in scored if t['met'])} of {len(scored)} targets met")
    return rows


# --- main -----------------------------------------------------------------------

def main(argv=None) -> int:
    a = parse_args(argv)
    common.require_loopback(a.database_url, "--database-url")
    if a.redis_url:
        common.require_loopback(a.redis_url, "--redis-url")
    started = datetime.now(timezone.utc)
    run_id = "b" + uuid.uuid4().hex[:6]
    mode = "quick" if a.quick else "full"
    out = a.out or RESULTS / f"{started.strftime('%Y%m%dT%H%M%SZ')}-{mode}.json"
    log_dir = RESULTS / "logs" / run_id
    t_all = time.perf_counter()
    with contextlib.ExitStack() as stack:
        redis_url = a.redis_url or stack.enter_context(common.own_redis(log_dir))
        env = common.base_env(a.database_url, redis_url)
        common.ensure_database(a.database_url, fresh=a.fresh)
        common.migrate(env)
        common.setup_django(env)
        warnings.filterwarnings("ignore", message="No directory at")  # WhiteNoise: no collectstatic in the bench
        result = {
            "command": " ".join(shlex.quote(x) for x in [".venv/bin/python", "bench/run.py",
                                                         *(argv if argv is not None else sys.argv[1:])]),
            "mode": mode,
            "run_id": run_id,
            "started": started.isoformat(timespec="seconds"),
            "redis": a.redis_url or "private redis-server on a spare port",
            "machine": common.machine_info(a.database_url, redis_url),
            "note": "shared, noisy 2-core machine: compare the ratios, not the absolute numbers",
        }
        result["machine"]["busy_pct_before"] = common.machine_busy_pct(2.0)
        log(f"run {run_id} ({mode}); machine: {result['machine']['nproc']} cores, {result['machine']['cpu_model']}, "
            f"load {result['machine']['load_average']}, {result['machine']['busy_pct_before']}% busy before start")
        try:
            if a.only == "load":
                result["load"] = run_load(a, env, run_id, log_dir)
            if a.only in (None, "live"):
                from bench.live import run_live

                log(f"live scenarios on {' and '.join(map(str, a.live_procs))} process(es)")
                result["live"] = run_live(a, env, run_id, log_dir, log)
            if a.only in (None, "store"):
                from bench.store import run_store

                log(f"store benchmarks (ANALYZE of the bench database first: {common.analyze(a.database_url)}s)")
                result["store"] = run_store(a.appends, a.rebuild_sizes, a.rebuild_repeat, a.read_sizes,
                                            a.read_requests, prefix=run_id, progress=log)
            result["targets"] = report_targets(result)
        finally:
            result["wall_s"] = round(time.perf_counter() - t_all, 1)
            result["machine"]["load_average_end"] = [round(x, 2) for x in os.getloadavg()]
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_text(json.dumps(result, indent=2, default=str) + "\n")
            log(f"wrote {out} ({result['wall_s']}s)")
    common.stop_all()
    return 0


if __name__ == "__main__":
    sys.exit(main())
