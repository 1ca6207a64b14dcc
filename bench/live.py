"""The live-path scenarios, each against the bare relay in the same run, on 1 and on 2 processes.

* ``rules``: 20 tables x 8 sockets at 2 rolls/s per table; players roll their characters' rule
  actions (a WYRM check, a TOTE skill test, a Tale straight roll, an MdT test, ...) and plain
  ``2d6``, and every client makes the follow-up requests ``static/talekeeper/table.js`` makes
  after an event (a ``GET .../characters/<id>`` for each event without pushed sheets; with
  pushed sheets, none: counted and reported);
* ``storm``: 200 sockets ready, all close, the tables get a backlog, all 200 reconnect at once
  from the last seq each saw: time until every socket is ready and until every one has caught up
  (the backlog in, and the sheet fetches a browser makes after a backlog answered); RSS of each
  daphne with 200 sockets;
* ``writers``: 8 concurrent HTTP writers (closed loop, one table each): per command p50/p99
  against the relay's HTTP endpoint and a bare PostgreSQL floor (8 connections, each locking its
  stream row and inserting one event row per transaction);
* ``witnessed`` (one process): 20 tables x 8 signed members, each table's GM rolling while the other
  seven sockets contribute to each roll as the browser does: a GM's roll to its result on every screen,
  witnessed and plain (``bench/witnessed.py``).

Django must be set up before this is imported (``common.setup_django``).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import signal
import subprocess
import threading
import time
from urllib.parse import urlparse

import psycopg

from bench import common, data, witnessed
from bench.common import ratio, summary_ms
from bench.load import ClientSpec, LoadConfig, run_load as drive, run_storm, run_writers, summarize

perf = time.perf_counter


def _db_name(url: str) -> str:
    return urlparse(url).path.lstrip("/")


def _specs(tables: list[dict], ports: list[int], after_head: bool = True) -> list[ClientSpec]:
    """Every member's socket, round-robin over the processes, from the log's head now."""
    from campaign.models import Campaign

    heads = dict(Campaign.objects.filter(slug__in=[t["slug"] for t in tables]).values_list("slug", "last_seq"))
    out, k = [], 0
    for t, table in enumerate(tables):
        for member in table["members"]:
            port = ports[k % len(ports)]
            k += 1
            base = f"http://127.0.0.1:{port}/api/campaigns/{table['slug']}/"
            out.append(ClientSpec(
                table=t, token=member["token"], roller=member["role"] == "player",
                ws_url=f"ws://127.0.0.1:{port}/ws/campaigns/{table['slug']}/table/?after={heads[table['slug']]}",
                command_url=base + "commands", actions=member.get("actions"), sheet_url=base + "characters/",
                signer=data.signer(table, member)))
    return out


def _relay_specs(ports: list[int], like: list[ClientSpec], tag: str) -> list[ClientSpec]:
    return [ClientSpec(table=s.table, roller=s.roller,
                       ws_url=f"ws://127.0.0.1:{ports[j % len(ports)]}/relay/{tag}-t{s.table}/")
            for j, s in enumerate(like)]


def bare_writers_floor(database_url: str, writers: int, duration: float, warmup: float, tag: str) -> dict:
    """The floor under 8 HTTP writers: ``writers`` threads, each with its own PostgreSQL connection and
    stream row, appending back to back (``BEGIN``, ``SELECT ... FOR UPDATE`` of the stream row, ``INSERT``
    of an event row of a roll's size, ``UPDATE`` of the head, ``COMMIT``) in scratch tables
    ``bench_floor_stream`` / ``bench_floor_event`` of the bench database."""
    payload = json.dumps({"notation": "2d6", "terms": [{"text": "+2d6", "sign": 1, "sides": 6, "dice": [
        {"face": 3, "kept": True}, {"face": 5, "kept": True}], "value": 8}], "total": 8, "counts_successes": False})
    with psycopg.connect(database_url, autocommit=True) as conn:
        conn.execute("CREATE TABLE IF NOT EXISTS bench_floor_stream (id text PRIMARY KEY, last_seq bigint NOT NULL)")
        conn.execute("CREATE TABLE IF NOT EXISTS bench_floor_event (stream text NOT NULL, seq bigint NOT NULL, "
                     "type text NOT NULL, payload jsonb NOT NULL, created_at timestamptz NOT NULL DEFAULT now(), "
                     "prev_hash text NOT NULL, hash text NOT NULL, PRIMARY KEY (stream, seq))")
        for w in range(writers):
            conn.execute("INSERT INTO bench_floor_stream VALUES (%s, 0) ON CONFLICT DO NOTHING", [f"{tag}-{w}"])
    times: list[list[float]] = [[] for _ in range(writers)]
    start = perf() + 0.2
    end, measured_from = start + duration, start + warmup
    errors: list[str] = []

    def work(w: int):
        stream = f"{tag}-{w}"
        try:
            with psycopg.connect(database_url) as conn:
                while perf() < start:
                    time.sleep(0.01)
                for _ in range(100_000):
                    t = perf()
                    if t >= end:
                        return
                    with conn.transaction():
                        (seq,) = conn.execute("SELECT last_seq FROM bench_floor_stream WHERE id = %s FOR UPDATE",
                                              [stream]).fetchone()
                        conn.execute("INSERT INTO bench_floor_event (stream, seq, type, payload, prev_hash, hash) "
                                     "VALUES (%s, %s, 'rolled', %s, %s, %s)", [stream, seq + 1, payload, "0" * 64, "1" * 64])
                        conn.execute("UPDATE bench_floor_stream SET last_seq = %s WHERE id = %s", [seq + 1, stream])
                    if t >= measured_from:
                        times[w].append(perf() - t)
        except Exception as e:  # noqa: BLE001 (reported)
            errors.append(repr(e))

    threads = [threading.Thread(target=work, args=(w,), daemon=True) for w in range(writers)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(duration + 30)
    flat = [x for ts in times for x in ts]
    window = duration - warmup
    return {"writers": writers, "commands": len(flat), "commands_per_s": round(len(flat) / window, 1),
            "latency_ms": summary_ms(flat), "round_trips": 5, "errors": errors[:5], "errors_total": len(errors)}


@contextlib.contextmanager
def profiled(a, procs, label: str):
    """py-spy on the Talekeeper daphnes while the block runs (``--py-spy``; bench/run.py start_py_spy)."""
    from bench.run import start_py_spy

    spies = start_py_spy(a, procs, label)
    try:
        yield
    finally:
        for spy in spies:  # SIGINT: py-spy writes what it sampled and ends
            with contextlib.suppress(OSError):
                spy.send_signal(signal.SIGINT)
            try:
                spy.wait(timeout=30)
            except subprocess.TimeoutExpired:
                pass
            common.stop(spy)


def run_live(a, env: dict, run_id: str, log_dir, log) -> dict:
    """Every live scenario on each process count of ``a.live_procs``; see the module doc."""
    app_env = {**env, "DJANGO_SETTINGS_MODULE": a.app_settings,
               # the writers post back to back: measure the command path, not the per-user limiter
               "RATE_LIMIT_USER_PER_MINUTE": "1000000"}
    for item in a.app_env:
        key, _, value = item.partition("=")
        app_env[key] = value
    relay_env = {**env, "DJANGO_SETTINGS_MODULE": "bench.relay_settings"}
    pg_db = _db_name(a.database_url)
    base = dict(pg_database=pg_db, redis_pids=tuple(common.REDIS_PIDS), seed=a.seed)
    out = {"procs": a.live_procs, "app_env_added": ["RATE_LIMIT_USER_PER_MINUTE=1000000"]}

    t0 = perf()
    chosen = set(a.live_scenarios)
    # Signed, as every new campaign is: the bots sign each command with their member's key (bench/signing.py).
    rule_tables = (data.make_rule_tables(f"{run_id}-rules", a.live_tables, a.live_clients, signed=True)
                   if "rules" in chosen else [])
    storm_tables = (data.make_rule_tables(f"{run_id}-storm", a.storm_tables, a.storm_clients, signed=True)
                    if "storm" in chosen else [])
    writer_tables = data.make_tables(f"{run_id}-writers", a.writers, 2, signed=True) if "writers" in chosen else []
    witness_tables = (witnessed.make_tables(f"{run_id}-witnessed", a.live_tables, a.live_clients)
                      if "witnessed" in chosen else [])
    log(f"live: {len(rule_tables)}+{len(storm_tables)}+{len(writer_tables)}+{len(witness_tables)} tables made in "
        f"{perf() - t0:.1f}s (systems {', '.join(data.SYSTEMS)}); ANALYZE took {common.analyze(a.database_url)}s")

    for procs in a.live_procs:
        key = f"{procs}proc"
        res = out[key] = {}
        # 0. a GM's roll to every screen, witnessed by the other tables and plain (one process)
        if "witnessed" in a.live_scenarios and procs == 1:
            rounds = {}
            for mode in ("off", "gm"):
                witnessed.set_mode(witness_tables, mode)
                with common.daphnes("campaign.asgi:application", 1, app_env, log_dir, f"app-{key}-witnessed-{mode}") \
                        as (ports, ps), profiled(a, ps, f"{run_id}-{key}-witnessed-{mode}"):
                    rounds[mode] = asyncio.run(witnessed.run(witness_tables, ports[0], a.witness_rate, a.duration,
                                                             a.warmup, a.seed, ps[0].pid))
            plain, witnessing = rounds["off"], rounds["gm"]
            res["witnessed"] = {"plain": plain, "witnessed": witnessing,
                                "ratio": {q: ratio(witnessing["all_screens_ms"][q], plain["all_screens_ms"][q])
                                          for q in ("p50", "p95", "p99")}}
            log(f"  {key} witnessed {a.live_tables}x{a.live_clients} at {a.witness_rate:g} GM rolls/s per table: "
                f"on every screen p50/p99 {witnessing['all_screens_ms']['p50']}/{witnessing['all_screens_ms']['p99']} ms "
                f"(plain {plain['all_screens_ms']['p50']}/{plain['all_screens_ms']['p99']} ms), lost "
                f"{witnessing['lost']}/{plain['lost']}, unwitnessed {witnessing['unwitnessed']}, errors "
                f"{witnessing['errors'] or 0} {plain['errors'] or ''}; daphne CPU per roll "
                f"{witnessing['daphne_cpu_ms_per_roll']}/{plain['daphne_cpu_ms_per_roll']} ms; p50 from the GM's frame: "
                + ", ".join(f"{name} {phase['p50']} ms" for name, phase in witnessing["phases_ms"].items()))
        # 1. 20 x 8 with rule actions and the browser's follow-ups
        if "rules" in a.live_scenarios:
            name = f"rules-{a.live_tables}x{a.live_clients}"
            app_rounds, relay_rounds, app_commits, relay_commits = [], [], [], []
            for rnd in range(a.rounds):
                cfg = LoadConfig(rate_per_table=a.live_rate, duration=a.duration, warmup=a.warmup, via="ws",
                                 follow_ups=True, run_id=f"{run_id}-{key}-rules-r{rnd}", **base)
                with common.daphnes("campaign.asgi:application", procs, app_env, log_dir, f"app-{key}-{name}-r{rnd}") \
                        as (ports, ps):
                    specs = _specs(rule_tables, ports)
                    with profiled(a, ps, f"{run_id}-{key}-{name}-r{rnd}"), \
                            common.commit_watch(a.database_url) as commits:
                        app_rounds.append(asyncio.run(drive(specs, cfg, "seq", [p.pid for p in ps])))
                    app_commits += commits
                with common.daphnes("bench.relay:application", procs, relay_env, log_dir, f"relay-{key}-{name}-r{rnd}") \
                        as (ports, ps):
                    relay_cfg = LoadConfig(**{**cfg.__dict__, "follow_ups": False})
                    with common.commit_watch(a.database_url) as commits:  # the same load on PostgreSQL, for symmetry
                        relay_rounds.append(asyncio.run(drive(_relay_specs(ports, specs, cfg.run_id), relay_cfg, "id",
                                                              [p.pid for p in ps])))
                    relay_commits += commits
            app, relay = summarize(app_rounds), summarize(relay_rounds)
            app["bare_commits_ms"], relay["bare_commits_ms"] = (common.commits_summary(app_commits),
                                                                common.commits_summary(relay_commits))
            res["rules"] = {"config": {"tables": a.live_tables, "clients": a.live_clients, "rate": a.live_rate,
                                       "rounds": a.rounds, "duration": a.duration, "warmup": a.warmup,
                                       "actions": data.RULE_ACTIONS},
                            "talekeeper": app, "relay": relay,
                            "ratio": {q: ratio(app["latency_ms"][q], relay["latency_ms"][q]) for q in ("p50", "p95", "p99")}
                            | {"daphne_cpu_per_roll": ratio(app.get("server_cpu_ms_per_roll"),
                                                             relay.get("server_cpu_ms_per_roll"))}}
            log(f"  {key} {name}: talekeeper p50/p99 {app['latency_ms']['p50']}/{app['latency_ms']['p99']} ms, "
                f"relay {relay['latency_ms']['p50']}/{relay['latency_ms']['p99']} ms, errors {app['errors_total']} "
                f"{app['errors'] or ''}, sheet fetches {app['follow_up_sheet_fetches']}, frames with sheets "
                f"{app['event_frames_with_sheets']}; CPU ms/roll daphne {app.get('server_cpu_ms_per_roll')} "
                f"pg {app.get('postgres_cpu_ms_per_roll')} redis {app.get('redis_cpu_ms_per_roll')}; bare commits "
                f"beside it p99/max {app['bare_commits_ms']['p99']}/{app['bare_commits_ms']['max']} ms "
                f"({app['bare_commits_ms']['over_50ms']} over 50 ms)")

        # 2. the reconnect storm
        if "storm" in a.live_scenarios:
            cfg = LoadConfig(follow_ups=True, run_id=f"{run_id}-{key}-storm", **base)
            tag = f"{run_id}-{key}-backlog"

            async def backlog():
                heads = await asyncio.to_thread(data.add_backlog, [t["slug"] for t in storm_tables], a.storm_backlog, tag)
                return {i: heads[t["slug"]] for i, t in enumerate(storm_tables)}

            with common.daphnes("campaign.asgi:application", procs, app_env, log_dir, f"app-{key}-storm") as (ports, ps):
                specs = _specs(storm_tables, ports)
                with profiled(a, ps, f"{run_id}-{key}-storm"):
                    storm_app = asyncio.run(run_storm(specs, cfg, "seq", [p.pid for p in ps], backlog))
            with common.daphnes("bench.relay:application", procs, relay_env, log_dir, f"relay-{key}-storm") as (ports, ps):
                storm_relay = asyncio.run(run_storm(_relay_specs(ports, specs, cfg.run_id),
                                                    LoadConfig(**{**cfg.__dict__, "follow_ups": False}), "id",
                                                    [p.pid for p in ps]))
            res["storm"] = {"talekeeper": storm_app, "relay": storm_relay, "backlog_per_table": a.storm_backlog}
            log(f"  {key} storm of {storm_app['sockets']}: all ready {storm_app['all_ready_s']} s, all caught up "
                f"{storm_app['all_caught_up_s']} s ({storm_app['follow_up_sheet_fetches']} sheet fetches, retried "
                f"{storm_app['sheet_fetch_retries'] or 0}), errors "
                f"{storm_app['errors_total']} {storm_app['errors'] or ''}; relay all ready {storm_relay['all_ready_s']} s; "
                f"daphne RSS max {storm_app['max_rss_mb']} MB")

        # 3. 8 concurrent HTTP writers
        if "writers" in a.live_scenarios:
            wcfg = LoadConfig(duration=a.writer_duration, warmup=a.warmup, run_id=f"{run_id}-{key}-writers", **base)
            with common.daphnes("campaign.asgi:application", procs, app_env, log_dir, f"app-{key}-writers") as (ports, ps):
                urls = [(f"http://127.0.0.1:{ports[w % procs]}/api/campaigns/{t['slug']}/commands",
                         t["members"][1]["token"], data.signer(t, t["members"][1])) for w, t in enumerate(writer_tables)]
                w_app = asyncio.run(run_writers(urls, wcfg, [p.pid for p in ps]))
            with common.daphnes("bench.relay:application", procs, relay_env, log_dir, f"relay-{key}-writers") as (ports, ps):
                urls = [(f"http://127.0.0.1:{ports[w % procs]}/relay/{wcfg.run_id}-w{w}/commands", None, None)
                        for w in range(a.writers)]
                w_relay = asyncio.run(run_writers(urls, wcfg, [p.pid for p in ps]))
            w_floor = bare_writers_floor(a.database_url, a.writers, a.writer_duration, a.warmup, f"{run_id}-{key}")
            res["writers"] = {"talekeeper": w_app, "relay_http": w_relay, "postgres_floor": w_floor,
                              "ratio_p50_over_floor": ratio(w_app["latency_ms"]["p50"], w_floor["latency_ms"]["p50"]),
                              "ratio_p99_over_floor": ratio(w_app["latency_ms"]["p99"], w_floor["latency_ms"]["p99"]),
                              "ratio_p50_over_relay": ratio(w_app["latency_ms"]["p50"], w_relay["latency_ms"]["p50"]),
                              "ratio_p99_over_relay": ratio(w_app["latency_ms"]["p99"], w_relay["latency_ms"]["p99"])}
            log(f"  {key} {a.writers} HTTP writers: p50/p99 {w_app['latency_ms']['p50']}/{w_app['latency_ms']['p99']} ms "
                f"({w_app['commands_per_s']}/s, errors {w_app['errors_total']} {w_app['errors'] or ''}); relay "
                f"{w_relay['latency_ms']['p50']}/{w_relay['latency_ms']['p99']} ms; PostgreSQL floor "
                f"{w_floor['latency_ms']['p50']}/{w_floor['latency_ms']['p99']} ms ({w_floor['commands_per_s']}/s)")
    return out


def _disk(app: dict) -> str:
    """The bare commits measured beside Talekeeper's rounds (common.commit_watch), when there were."""
    c = app.get("bare_commits_ms")
    if not c or not c.get("n"):
        return ""
    return f"; bare commits beside it p99 {c['p99']} ms, max {c['max']} ms, {c['over_50ms']} of {c['n']} over 50 ms"


def targets(live: dict) -> list[dict]:
    """Each live-path target (docs/performance.md) against its floor, from this run's numbers (PASS/MISS)."""
    out = []
    for key in (f"{p}proc" for p in live.get("procs", [])):
        res = live.get(key)
        if not res:
            continue
        if "rules" in res:
            r = res["rules"]
            app, relay = r["talekeeper"], r["relay"]
            p99, floor = app["latency_ms"]["p99"], relay["latency_ms"]["p99"]
            # An ack waits for its durable commit and the relay writes nothing: a roll acknowledged while
            # the disk stalls waits as long as a bare commit made beside it, whatever the server does.
            # So the floor is the relay's doubled plus the slowest bare commit of the same rounds.
            commit = (app.get("bare_commits_ms") or {}).get("max") or 0
            bound = round(2 * floor + commit, 1) if floor is not None else None
            c = r["config"]
            out.append({"target": f"{c['tables']}x{c['clients']} at {c['rate']:g} rolls/s with rule actions, {key}: "
                                  "steady-state p99 <= 2x the relay's + the slowest durable commit beside it, 0 lost",
                        "floor": f"2 x relay p99 {floor} ms + bare commit max {commit} ms = {bound} ms",
                        "measured": f"p99 {p99} ms ({r['ratio']['p99']}x), p50 {app['latency_ms']['p50']} ms "
                                    f"({r['ratio']['p50']}x), {app['errors_total']} errors {app['errors'] or ''}"
                                    + _disk(app),
                        "met": p99 is not None and bound is not None and p99 <= bound and app["errors_total"] == 0,
                        "binding": key == "1proc"})
            first = app.get("first_rolls_ack_ms") or {}
            out.append({"target": f"the first {c['warmup']:g} s of rolling after each start, {key} (reported): ack p99",
                        "floor": f"steady-state ack p99 {app['ack_ms']['p99']} ms",
                        "measured": f"p99 {first.get('p99')} ms, max {first.get('max')} ms over {first.get('n')} rolls",
                        "met": None})
            out.append({"target": f"CPU per roll, {key} (reported): daphne, PostgreSQL, Redis",
                        "floor": f"relay {relay.get('server_cpu_ms_per_roll')} / {relay.get('postgres_cpu_ms_per_roll')} / "
                                 f"{relay.get('redis_cpu_ms_per_roll')} ms",
                        "measured": f"{app.get('server_cpu_ms_per_roll')} / {app.get('postgres_cpu_ms_per_roll')} / "
                                    f"{app.get('redis_cpu_ms_per_roll')} ms ({r['ratio']['daphne_cpu_per_roll']}x the "
                                    f"relay's daphne); sheet fetches after events: {app['follow_up_sheet_fetches']} "
                                    f"({app['event_frames_with_sheets']} event frames carried their sheets)",
                        "met": None})
        if "witnessed" in res:
            w = res["witnessed"]
            wit, plain = w["witnessed"], w["plain"]
            p99 = wit["all_screens_ms"]["p99"]
            out.append({"target": f"a GM's roll witnessed by the other {wit['clients'] - 1} tables, {wit['tables']}x"
                                  f"{wit['clients']} at {wit['rate']:g} GM rolls/s per table, {key}: result on every "
                                  "screen p99 <= 400 ms, 0 lost, none unwitnessed",
                        "floor": f"the plain roll on every screen p99 {plain['all_screens_ms']['p99']} ms, p50 "
                                 f"{plain['all_screens_ms']['p50']} ms",
                        "measured": f"p99 {p99} ms ({w['ratio']['p99']}x), p50 {wit['all_screens_ms']['p50']} ms "
                                    f"({w['ratio']['p50']}x); {wit['lost']} lost, {wit['unwitnessed']} unwitnessed, "
                                    f"errors {wit['errors'] or 0}",
                        "met": p99 is not None and p99 <= 400 and wit["lost"] == 0 and wit["unwitnessed"] == 0
                        and not wit["errors"]})
        if "storm" in res:
            s = res["storm"]["talekeeper"]
            sr = res["storm"]["relay"]
            n = s["sockets"]
            out.append({"target": f"{n}-socket reconnect storm, {key}: every socket ready within 3 s",
                        "floor": f"3 s (relay: all ready in {sr['all_ready_s']} s)",
                        "measured": f"{s['all_ready_s']} s (p50 {s['ready_ms']['p50']} ms), {s['errors_total']} errors",
                        "met": s["all_ready_s"] is not None and s["all_ready_s"] <= 3})
            out.append({"target": f"{n}-socket reconnect storm, {key}: every socket caught up within 5 s",
                        "floor": f"5 s (relay: no log, caught up = ready, {sr['all_ready_s']} s)",
                        "measured": (f"{s['all_caught_up_s']} s" if s["all_caught_up_s"] is not None else
                                     f"never: {s['caught_up_ms']['n']} of {s['sockets']} caught up within "
                                     f"{int(LoadConfig().connect_timeout)} s, {s['errors'].get('stale_sheet_after_failed_fetch', 0)} "
                                     "left with a stale sheet after a refused fetch") +
                                    f" ({s['backlog_events_per_socket']} backlog events and "
                                    f"{round(s['follow_up_sheet_fetches'] / max(1, s['sockets']), 1)} sheet fetches per socket)",
                        "met": s["all_caught_up_s"] is not None and s["all_caught_up_s"] <= 5})
            out.append({"target": f"RSS per daphne process at {n} sockets, {key}: at most 200 MB",
                        "floor": f"200 MB (relay: {sr['max_rss_mb']} MB)",
                        "measured": f"{s['max_rss_mb']} MB (peak {s['max_peak_rss_mb']} MB)",
                        "met": s["max_rss_mb"] is not None and s["max_rss_mb"] <= 200})
        if "writers" in res:
            w = res["writers"]
            out.append({"target": f"{w['talekeeper']['writers']} concurrent HTTP writers, {key} (reported; no number "
                                  "set)",
                        "floor": f"PostgreSQL floor p50/p99 {w['postgres_floor']['latency_ms']['p50']}/"
                                 f"{w['postgres_floor']['latency_ms']['p99']} ms; relay HTTP "
                                 f"{w['relay_http']['latency_ms']['p50']}/{w['relay_http']['latency_ms']['p99']} ms",
                        "measured": f"p50/p99 {w['talekeeper']['latency_ms']['p50']}/{w['talekeeper']['latency_ms']['p99']} ms "
                                    f"({w['ratio_p50_over_floor']}x / {w['ratio_p99_over_floor']}x the floor), "
                                    f"{w['talekeeper']['errors_total']} errors",
                        "met": None})
    return out
