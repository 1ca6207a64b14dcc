"""Each patch of a library's internals, switched off and on in alternating rounds of one run.

Talekeeper replaces or leans on a few private parts of its libraries for speed (docs/performance.md,
"Patched library internals"; tests/test_patched_internals.py pins the upstream code each one copies).
This measures what each still gains: the same work done with the library's own code ("off") and with
the patch ("on"), in ``--rounds`` alternating rounds, so load from elsewhere on a shared machine lands
on both sides. It reports each side's median per operation and the ratio off/on (above 1: the patch
gains that much).

* ``pool_check``: a socket's database call (check a pooled connection out, ``SELECT 1``, give it back)
  with psycopg_pool's ``check_connection`` (an empty query per checkout, as Django configures it) against
  campaign/postgresql/base.py's check on the socket alone;
* ``prepared``: a ``2d6`` command through ``do_command`` with the lock and the write bound and
  prepared on the server (campaign/eventlog/store.py ``_cursor``) against Django's own cursor;
* ``group_send``: a doorbell to a group of 8 channels with channels-redis's ``group_send`` (four Redis
  round trips) against sessions/layers.py's (two);
* ``group_add_many``: a table beat re-joining 8 sockets, ``group_add`` each against one pipeline;
* ``dispatch``: a message to a socket's handler with Channels' ``dispatch`` (a hop to the synchronous
  thread for ``aclose_old_connections`` first) against sessions/consumers.py's.

```sh
.venv/bin/python bench/patches.py                      # all, on the bench database and a private redis-server
.venv/bin/python bench/patches.py --only dispatch --rounds 20
```
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import statistics
import sys
import time
import uuid
from datetime import datetime, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import common  # noqa: E402

perf = time.perf_counter
CASES = ("pool_check", "prepared", "group_send", "group_add_many", "dispatch")


def alternate(rounds: int, per_round: int, off, on, server_cpu=None) -> dict:
    """``off()`` and ``on()`` (one operation each) in ``rounds`` alternating rounds; medians in µs.

    ``server_cpu(side)``: the CPU seconds the side's PostgreSQL backend has used so far, to report
    the server's CPU per operation too (what a round trip or a parse costs PostgreSQL)."""
    times = {"off": [], "on": []}
    cpu = {"off": 0.0, "on": 0.0}
    for r in range(rounds):
        order = (("off", off), ("on", on)) if r % 2 == 0 else (("on", on), ("off", off))
        for side, op in order:
            before = server_cpu(side) if server_cpu else 0.0
            for _ in range(per_round):
                t = perf()
                op()
                times[side].append(perf() - t)
            cpu[side] += (server_cpu(side) - before) if server_cpu else 0.0
    out = summary(times)
    if server_cpu:
        for side in ("off", "on"):
            out[side]["server_cpu_us"] = round(cpu[side] / len(times[side]) * 1e6, 1)
        out["server_cpu_off_over_on"] = round(cpu["off"] / cpu["on"], 2) if cpu["on"] else None
    return out


def backend_cpu(pid: int) -> float:
    """utime + stime of a PostgreSQL backend (it runs on this machine: the bench is loopback only)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def alternate_async(rounds: int, per_round: int, off, on) -> dict:
    times = {"off": [], "on": []}
    for r in range(rounds):
        order = (("off", off), ("on", on)) if r % 2 == 0 else (("on", on), ("off", off))
        for side, op in order:
            for _ in range(per_round):
                t = perf()
                await op()
                times[side].append(perf() - t)
    return summary(times)


def summary(times: dict) -> dict:
    out = {side: {"n": len(v), "median_us": round(statistics.median(v) * 1e6, 1),
                  "p90_us": round(sorted(v)[int(len(v) * 0.9)] * 1e6, 1)} for side, v in times.items()}
    out["off_over_on"] = round(out["off"]["median_us"] / out["on"]["median_us"], 2)
    return out


# --- the cases ------------------------------------------------------------------------------------------

def bench_pool_check(rounds: int, per_round: int) -> dict:
    from django.db import connection
    from psycopg_pool import ConnectionPool

    from campaign.postgresql.base import check_without_round_trip

    kwargs = connection.get_connection_params()
    kwargs["autocommit"] = True
    pools = {side: ConnectionPool(kwargs=kwargs, min_size=1, max_size=1, open=True, check=check)
             for side, check in (("off", ConnectionPool.check_connection), ("on", check_without_round_trip))}

    def call(pool):
        with pool.connection() as conn:
            conn.execute("SELECT 1").fetchone()

    pids = {}
    for side, pool in pools.items():
        with pool.connection() as conn:
            pids[side] = conn.info.backend_pid
    try:
        return alternate(rounds, per_round, lambda: call(pools["off"]), lambda: call(pools["on"]),
                         lambda side: backend_cpu(pids[side]))
    finally:
        for pool in pools.values():
            pool.close()


def bench_prepared(rounds: int, per_round: int, prefix: str) -> dict:
    from django.db import transaction

    from bench import data
    from campaign.actions import do_command
    from campaign.eventlog import store
    from campaign.models import Campaign

    (table,) = data.make_tables(f"{prefix}-prep", 1, 1, system="wyrm")
    campaign = Campaign.objects.get(slug=table["slug"])
    gm = data.membership(campaign, campaign.memberships.get(role="gm").user)
    roll = {"type": "roll", "notation": "2d6"}
    prepared = store._cursor
    ids = iter(range(10**9))

    def off():
        store._cursor = lambda: transaction.get_connection().cursor()  # Django's: parameters in the text
        try:
            do_command(gm, {"id": f"off-{next(ids)}", "action": roll})
        finally:
            store._cursor = prepared

    def on():
        do_command(gm, {"id": f"on-{next(ids)}", "action": roll})

    on()  # the connection's first command prepares the two statements (once per connection)
    pid = transaction.get_connection().connection.info.backend_pid  # one connection: both sides share it
    return alternate(rounds, per_round, off, on, lambda side: backend_cpu(pid))


def _layers(redis_url: str):
    from channels_redis.core import RedisChannelLayer

    from sessions.layers import ResilientRedisChannelLayer

    options = {"hosts": [redis_url], "capacity": 10**6, "prefix": f"patches-{uuid.uuid4().hex[:6]}"}
    return RedisChannelLayer(**options), ResilientRedisChannelLayer(**options)


async def bench_group_send(rounds: int, per_round: int, redis_url: str) -> dict:
    upstream, ours = _layers(redis_url)
    group = "campaign-1"
    channels = [await ours.new_channel() for _ in range(8)]
    for channel in channels:
        await ours.group_add(group, channel)
    message = {"type": "table.events", "events": [{"seq": 1, "type": "roll", "payload": {"total": 7}}]}
    try:
        result = await alternate_async(rounds, per_round, lambda: upstream.group_send(group, message),
                                       lambda: ours.group_send(group, message))
    finally:
        await ours.flush()
        await ours.close_pools()
        await upstream.close_pools()
    return result


async def bench_group_add_many(rounds: int, per_round: int, redis_url: str) -> dict:
    upstream, ours = _layers(redis_url)
    pairs = [("campaign-1", await ours.new_channel()) for _ in range(8)]

    async def each():
        for group, channel in pairs:
            await upstream.group_add(group, channel)

    try:
        result = await alternate_async(rounds, per_round, each, lambda: ours.group_add_many(pairs))
    finally:
        await ours.flush()
        await ours.close_pools()
        await upstream.close_pools()
    return result


async def bench_dispatch(rounds: int, per_round: int) -> dict:
    from channels.consumer import AsyncConsumer

    from sessions.consumers import TableConsumer

    class Socket(AsyncConsumer):
        async def table_events(self, message):
            return None

    socket = Socket()
    message = {"type": "table.events", "events": []}
    return await alternate_async(rounds, per_round, lambda: AsyncConsumer.dispatch(socket, message),
                                 lambda: TableConsumer.dispatch(socket, message))


# --- the run --------------------------------------------------------------------------------------------

def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--database-url", default=common.DEFAULT_DATABASE_URL)
    p.add_argument("--redis-url", default=None, help="default: a private redis-server on a spare port")
    p.add_argument("--only", choices=CASES, action="append")
    p.add_argument("--rounds", type=int, default=10)
    p.add_argument("--per-round", type=int, default=200)
    p.add_argument("--out", type=Path, default=None)
    return p.parse_args(argv)


def main(argv=None) -> int:
    a = parse_args(argv)
    common.require_loopback(a.database_url, "--database-url")
    started = datetime.now(timezone.utc)
    run_id = "p" + uuid.uuid4().hex[:6]
    out = a.out or common.RESULTS / f"{started.strftime('%Y%m%dT%H%M%SZ')}-patches.json"
    cases = a.only or CASES
    with contextlib.ExitStack() as stack:
        redis_url = a.redis_url or stack.enter_context(common.own_redis(common.RESULTS / "logs" / run_id))
        env = common.base_env(a.database_url, redis_url)
        common.ensure_database(a.database_url)
        common.migrate(env)
        common.setup_django(env)
        result = {"command": " ".join([".venv/bin/python", "bench/patches.py", *(argv or sys.argv[1:])]),
                  "started": started.isoformat(timespec="seconds"),
                  "machine": common.machine_info(a.database_url, redis_url),
                  "note": "alternating rounds on one machine: compare off_over_on, not the absolute numbers"}
        for case in cases:
            if case == "pool_check":
                result[case] = bench_pool_check(a.rounds, a.per_round)
            elif case == "prepared":
                result[case] = bench_prepared(a.rounds, max(1, a.per_round // 4), run_id)
            elif case == "group_send":
                result[case] = asyncio.run(bench_group_send(a.rounds, a.per_round, redis_url))
            elif case == "group_add_many":
                result[case] = asyncio.run(bench_group_add_many(a.rounds, a.per_round, redis_url))
            elif case == "dispatch":
                result[case] = asyncio.run(bench_dispatch(a.rounds, a.per_round))
            r = result[case]
            print(f"{case:16} off {r['off']['median_us']:8.1f} µs  on {r['on']['median_us']:8.1f} µs  "
                  f"off/on {r['off_over_on']:.2f}", flush=True)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(result, indent=2, default=str) + "\n")
        print(f"wrote {out}")
    common.stop_all()
    return 0


if __name__ == "__main__":
    sys.exit(main())
