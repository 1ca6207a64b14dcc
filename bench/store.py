"""Store benchmarks, in this process against the bench PostgreSQL database.

* appends: commands per second through ``campaign.actions.do_command`` (one
  transaction each, as a socket or the API runs it) against a raw ``INSERT``
  of the very same event rows (same columns and payloads, valid chain, one
  commit each) straight through psycopg: the ratio is the append service's
  own cost over the database's;
* projection rebuild: ``campaign.projections.rebuild`` over WYRM logs of 10k
  and 100k events (mostly character checks);
* reads that must not grow with history: the table page and the newest page
  of the events API, with a 1k-event log against a 100k-event log.

Django must be set up (``common.setup_django``) before this is imported.
"""

from __future__ import annotations

import statistics
import time
import uuid

import psycopg
from psycopg.types.json import Jsonb
from django.conf import settings
from django.db import connection
from django.test import Client

from campaign.actions import do_command
from campaign.log import event_hash, hashed_fields
from campaign.models import Campaign, Character, Event
from campaign.projections import rebuild
from rules import get_system

from . import data
from .common import ratio, summary_ms

perf = time.perf_counter


def _dsn() -> str:
    s = settings.DATABASES["default"]
    return (f"host={s.get('HOST') or '127.0.0.1'} port={s.get('PORT') or 5432} dbname={s['NAME']} "
            f"user={s.get('USER') or 'postgres'}" + (f" password={s['PASSWORD']}" if s.get("PASSWORD") else ""))


def bench_appends(n: int, prefix: str) -> dict:
    """``n`` commands through do_command, then the same rows by raw INSERT; per second each."""
    wyrm = get_system("wyrm")
    (table,) = data.make_tables(f"{prefix}-ap", 1, 2, system="wyrm")
    campaign = Campaign.objects.get(slug=table["slug"])
    gm = data.membership(campaign, campaign.memberships.get(role="gm").user)
    hero = Character.objects.get(pk=do_command(gm, {"id": "hero", "action": {
        "type": "create_character", "name": "Hero", "sheet": wyrm.example_sheet}}).events[0].character_id)
    results = {}

    def run(label: str, action_for) -> list[float]:
        first = Campaign.objects.get(pk=campaign.pk).last_seq + 1
        times = []
        t0 = perf()
        for i in range(n):
            t = perf()
            do_command(gm, {"id": f"{label}-{i}", "action": action_for(i)})
            times.append(perf() - t)
        wall = perf() - t0
        results[label] = {"n": n, "per_s": round(n / wall, 1), "ms": summary_ms(times), "first_seq": first}
        return times

    roll = {"type": "roll", "notation": "2d6"}
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as ctx:
        do_command(gm, {"id": "count-queries", "action": roll})
    results["queries_per_roll_command"] = len(ctx.captured_queries)
    run("do_command_roll", lambda i: roll)
    run("do_command_check", lambda i: {"type": "check", "character": hero.id, "attribute": "rogue",
                                       "skills": ["Stealth"], "dl": 7})

    # The same rows as the plain rolls, re-chained for campaigns of their own (hashing is not timed):
    # one campaign gets them one commit per row, the other all in one transaction.
    first = results["do_command_roll"]["first_seq"]
    source = list(Event.objects.filter(campaign=campaign, seq__gte=first, seq__lt=first + n).order_by("seq"))
    sql = ("INSERT INTO campaign_event (campaign_id, seq, type, version, payload, actor_id, character_id, session, "
           "scene, visibility, command_id, created_at, prev_hash, hash) "
           "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)")

    def rows_for(label: str):
        (raw_table,) = data.make_tables(f"{prefix}-{label}", 1, 1, system="wyrm")
        target = Campaign.objects.get(slug=raw_table["slug"])
        params, prev, seq = [], target.head_hash, target.last_seq
        for e in source:
            seq += 1
            e.campaign_id, e.seq, e.command_id, e.prev_hash = target.id, seq, None, prev
            e.hash = prev = event_hash(prev, hashed_fields(e))
            params.append((e.campaign_id, e.seq, e.type, e.version, Jsonb(e.payload), e.actor_id, e.character_id,
                           e.session, e.scene, e.visibility, None, e.created_at, e.prev_hash, e.hash))
        return target, params, seq, prev

    with psycopg.connect(_dsn(), autocommit=True) as conn:
        target, params, head, head_hash = rows_for("raw1")
        times = []
        t0 = perf()
        for p in params:  # one commit per row, as one command is one transaction
            t = perf()
            conn.execute(sql, p)
            times.append(perf() - t)
        wall = perf() - t0
        results["raw_insert_commit_each"] = {"n": len(params), "per_s": round(len(params) / wall, 1),
                                             "ms": summary_ms(times)}
        conn.execute("UPDATE campaign_campaign SET last_seq = %s, head_hash = %s WHERE id = %s",
                     [head, head_hash, target.id])
        target, params, head, head_hash = rows_for("raw2")
        t0 = perf()
        with conn.transaction():  # all in one transaction: what the commits cost
            with conn.cursor() as cur:
                cur.executemany(sql, params)
        wall = perf() - t0
        results["raw_insert_one_transaction"] = {"n": len(params), "per_s": round(len(params) / wall, 1)}
        conn.execute("UPDATE campaign_campaign SET last_seq = %s, head_hash = %s WHERE id = %s",
                     [head, head_hash, target.id])
    results["ratio_raw_over_do_command"] = ratio(results["raw_insert_commit_each"]["per_s"],
                                                 results["do_command_roll"]["per_s"])
    return results


def bench_rebuild(sizes: list[int], repeat: int, progress=None) -> dict:
    out = {}
    for n in sizes:
        log = data.ensure_log(n, progress=progress)
        campaign = Campaign.objects.get(slug=log["slug"])
        times = []
        for _ in range(repeat):
            t = perf()
            rebuild(campaign)
            times.append(perf() - t)
        differing = rebuild(campaign, check=True)
        out[str(n)] = {"events": log["events"], "log_reused": log["reused"], "log_build_s": log["build_s"],
                       "seconds": [round(x, 3) for x in times], "best_s": round(min(times), 3),
                       "events_per_s": round(log["events"] / min(times)), "check_after": differing or "OK"}
    return out


def _time_get(client: Client, url: str, count: int) -> dict:
    for _ in range(3 if count > 5 else 1):  # warm up (templates, connection, caches)
        response = client.get(url)
        assert response.status_code == 200, (url, response.status_code, response.content[:300])
    times, queries = [], None
    for _ in range(count):
        t = perf()
        response = client.get(url)
        times.append(perf() - t)
        assert response.status_code == 200
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as ctx:
        client.get(url)
    queries = len(ctx.captured_queries)
    s = summary_ms(times)
    return {"median_ms": round(statistics.median(times) * 1000, 3), "p95_ms": s["p95"], "n": count,
            "bytes": len(response.content), "queries": queries}


def bench_reads(sizes: list[int], count: int, progress=None) -> dict:
    """Table page, newest events page and a character sheet with a small and a large log.

    In-process Django test client, logged in as the GM, and as a player who may
    not see one secret roll of the first character (the log has no other hidden
    event), which the table page and the sheet must leave out for that player.
    """
    out = {}
    for n in sizes:
        log = data.ensure_log(n, progress=progress)
        campaign = Campaign.objects.get(slug=log["slug"])
        player, character_id = data.ensure_secret_roll(campaign)
        campaign.refresh_from_db()
        gm = Client()
        gm.force_login(campaign.memberships.get(role="gm").user)
        as_player = Client()
        as_player.force_login(player)
        after = max(0, campaign.last_seq - 100)
        sheet = f"/api/campaigns/{campaign.slug}/characters/{character_id}"
        out[str(n)] = {
            "events": campaign.last_seq,
            "table_page": _time_get(gm, f"/campaigns/{campaign.slug}/", count),
            "table_page_player_one_secret_roll": _time_get(as_player, f"/campaigns/{campaign.slug}/",
                                                           max(3, count // 10)),
            "events_api_newest_100": _time_get(
                gm, f"/api/campaigns/{campaign.slug}/events?after={after}&limit=100", count),
            # Not in the brief, but reads any member makes at any time: a character's sheet now (as
            # the GM, and as a player who may not see one secret roll of that character), and as it
            # stood 10 events ago.
            "character_now_gm": _time_get(gm, sheet, count),
            "character_now_player_one_secret_roll": _time_get(as_player, sheet, max(3, count // 10)),
            "character_as_of_head_minus_10": _time_get(
                gm, f"{sheet}?as_of={campaign.last_seq - 10}", max(3, count // 10)),
        }
    small, large = (str(n) for n in (min(sizes), max(sizes)))
    out["ratio_large_over_small"] = {
        what: ratio(out[large][what]["median_ms"], out[small][what]["median_ms"])
        for what in out[large] if what != "events"
    }
    return out


def run_store(appends: int, rebuild_sizes: list[int], rebuild_repeat: int, read_sizes: list[int],
              read_requests: int, prefix: str | None = None, progress=print) -> dict:
    prefix = prefix or uuid.uuid4().hex[:8]
    result = {}
    t = perf()
    result["appends"] = bench_appends(appends, prefix)
    result["appends"]["wall_s"] = round(perf() - t, 2)
    progress(f"appends: do_command {result['appends']['do_command_roll']['per_s']}/s, raw INSERT "
             f"{result['appends']['raw_insert_commit_each']['per_s']}/s")
    t = perf()
    result["rebuild"] = bench_rebuild(rebuild_sizes, rebuild_repeat, progress)
    result["rebuild"]["wall_s"] = round(perf() - t, 2)
    progress("rebuild: " + ", ".join(f"{k}: {v['best_s']}s" for k, v in result["rebuild"].items() if k != "wall_s"))
    t = perf()
    result["reads"] = bench_reads(read_sizes, read_requests, progress)
    result["reads"]["wall_s"] = round(perf() - t, 2)
    progress(f"reads: ratio large/small {result['reads']['ratio_large_over_small']}")
    return result
