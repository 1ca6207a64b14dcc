"""Store benchmarks, in this process against the bench PostgreSQL database.

* appends: commands per second through ``campaign.actions.do_command`` (one
  transaction each, as a socket or the API runs it) against a raw ``INSERT``
  of the very same event rows (same columns and payloads, valid chain, one
  commit each) straight through psycopg: the ratio is the append service's
  own cost over the database's;
* projection rebuild: ``campaign.projections.rebuild`` over WYRM logs of 10k
  and 100k events (mostly character checks);
* reads that must not grow with history: the table page and the newest page
  of the events API, with a 1k-event log against a 100k-event log;
* appends through ``do_command`` on ONE campaign against a bare loop that
  locks the stream row and inserts an event (one transaction each), in
  alternating rounds of the same run;
* a sheet as of any seq of the 100k-event log (``state_as_of``, and through the
  API as the GM and as a player who may not see a secret roll);
* every odds form of every system, first call from cold caches (``bench/odds.py``);

and each store-side target (docs/performance.md) against its floor (``targets``).

Django must be set up (``common.setup_django``) before this is imported.
"""

from __future__ import annotations

import contextlib
import gc
import statistics
import time
import uuid

import psycopg
from psycopg.types.json import Jsonb
from django.conf import settings
from django.db import connection
from django.test import Client

from campaign.actions import do_command
from campaign.eventlog import EVENT_COLUMNS, STREAM_COLUMNS, canonical_json, event_hash, hashed_fields
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
           "scene, visibility, command_id, created_at, prev_hash, hash, format) "
           "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)")

    def rows_for(label: str):
        (raw_table,) = data.make_tables(f"{prefix}-{label}", 1, 1, system="wyrm")
        target = Campaign.objects.get(slug=raw_table["slug"])
        params, prev, seq = [], target.head_hash, target.last_seq
        for e in source:
            seq += 1
            e.campaign_id, e.seq, e.command_id, e.prev_hash = target.id, seq, None, prev
            e.hash = prev = event_hash(prev, hashed_fields(e), e.format)
            params.append((e.campaign_id, e.seq, e.type, e.version, Jsonb(e.payload), e.actor_id, e.character_id,
                           e.session, e.scene, e.visibility, None, e.created_at, e.prev_hash, e.hash, e.format))
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


def _read_log(campaign_id: int) -> float:
    """The floor of a rebuild: read every event's fold columns, payloads decoded, and nothing else."""
    import json

    t = perf()
    with psycopg.connect(_dsn()) as conn, conn.cursor(name="bench-read-log") as cursor:
        cursor.execute("SELECT seq, type, version, payload::text, character_id FROM campaign_event "
                       "WHERE campaign_id = %s ORDER BY seq", [campaign_id])
        while chunk := cursor.fetchmany(5000):
            for row in chunk:
                json.loads(row[3])
    return perf() - t


def bench_rebuild(sizes: list[int], repeat: int, progress=None) -> dict:
    """Each rebuild, alternating with its floor: reading the same rows (PostgreSQL's part and the
    JSON decoding, without the fold or any write)."""
    out = {}
    for n in sizes:
        log = data.ensure_log(n, progress=progress)
        campaign = Campaign.objects.get(slug=log["slug"])
        times, cpu, reads = [], [], []
        for _ in range(repeat):
            reads.append(_read_log(campaign.id))
            t, c = perf(), time.process_time()
            rebuild(campaign)
            times.append(perf() - t)
            cpu.append(time.process_time() - c)
        t, c = perf(), time.process_time()
        differing = rebuild(campaign, check=True)
        check_s, check_cpu_s = perf() - t, time.process_time() - c
        out[str(n)] = {"events": log["events"], "log_reused": log["reused"], "log_build_s": log["build_s"],
                       "seconds": [round(x, 3) for x in times], "best_s": round(min(times), 3),
                       # This process's CPU (the fold, JSON decoding): the rest is waiting on PostgreSQL.
                       "cpu_s": [round(x, 3) for x in cpu],
                       "read_floor_s": [round(x, 3) for x in reads],
                       "ratio_rebuild_over_read": ratio(min(times), min(reads)),
                       "events_per_s": round(log["events"] / min(times)), "check_after": differing or "OK",
                       # rebuild --check: the same fold, nothing written
                       "check_s": round(check_s, 3), "check_cpu_s": round(check_cpu_s, 3)}
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


def round_trips(run) -> int:
    """The times ``run()`` waited for PostgreSQL on this thread's connection: ReadyForQuery messages
    in libpq's trace (one per Sync or simple query; statements sent together in a pipeline wait
    once). tests/campaign/test_log.py holds the command path to its count with it."""
    import tempfile

    connection.ensure_connection()
    pgconn = connection.connection.pgconn
    with tempfile.TemporaryFile("w+") as trace:
        pgconn.trace(trace.fileno())
        try:
            run()
        finally:
            pgconn.untrace()
        trace.seek(0)
        return sum("\tReadyForQuery\t" in line for line in trace)


def _command_statements(gm) -> tuple[str, list, str, list]:
    """The lock's and the write's SQL and parameters of one ``2d6`` command, as ``do_command`` sends them."""
    sent = []

    def keep(execute, sql, params, many, context):
        sent.append((sql, list(params)))
        return execute(sql, params, many, context)

    with connection.execute_wrapper(keep):
        do_command(gm, {"id": f"floor-template-{uuid.uuid4().hex[:8]}", "action": {"type": "roll", "notation": "2d6"}})
    (lock_sql, lock_params), = [(q, p) for q, p in sent if "FOR UPDATE" in q]
    (write_sql, write_params), = [(q, p) for q, p in sent if q.startswith("WITH ")]
    # The layouts the same-statements floor fills in (campaign.eventlog.lock_stream and _write, one event with its
    # command, no projection): if either changes, this stops here rather than measure something else.
    assert len(lock_params) == 4, lock_params  # membership, user, client id, campaign
    assert len(write_params) == 5 + len(EVENT_COLUMNS) - 1 + len(STREAM_COLUMNS) + 1, write_params
    return lock_sql, lock_params, write_sql, write_params


def bench_append_floor(n: int, prefix: str, rounds: int = 10) -> dict:
    """Appends through ``do_command`` on one campaign against the floor: a bare loop
    that locks the stream row and inserts the event, one transaction each.

    Both append ``2d6`` rolls to their own single campaign, in ``rounds``
    alternating rounds of ``n / rounds`` (a burst of load from elsewhere lands
    on both sides). The bare loop's rows are real events (re-chained copies of
    the ``do_command`` ones); its hashing is done before the clock starts. Also
    counted: the round trips (waits for PostgreSQL) of one command and of one bare
    append, and this process's CPU time per append on each side.

    Reported beside it, not scored (``same_statements``): a third loop that sends
    ``do_command``'s own two statements (the lock with its join, the one write of the
    command row, the event and the stream head) with the same events, straight through
    psycopg. Between it and the bare loop is what the command writes beyond the floor;
    between ``do_command`` and it, the command's Python (docs/performance.md).
    """
    (table,) = data.make_tables(f"{prefix}-floor", 1, 2, system="wyrm")
    campaign = Campaign.objects.get(slug=table["slug"])
    gm = data.membership(campaign, campaign.memberships.get(role="gm").user)
    (bare_table,) = data.make_tables(f"{prefix}-bare", 1, 1, system="wyrm")
    bare = Campaign.objects.get(slug=bare_table["slug"])
    (same_table,) = data.make_tables(f"{prefix}-same", 1, 1, system="wyrm")
    same = Campaign.objects.get(slug=same_table["slug"])
    same_gm = same.memberships.get(role="gm")
    # The same rolls in a campaign whose members sign, each signed before the clock starts (the client's
    # work): between it and do_command is what checking a signature costs the server per command.
    (signed_table,) = data.make_tables(f"{prefix}-signed", 1, 2, system="wyrm", signed=True)
    signed = Campaign.objects.get(slug=signed_table["slug"])
    signed_gm = data.membership(signed, signed.memberships.get(role="gm").user)
    signer = data.signer(signed_table, signed_table["members"][0])
    do_command(signed_gm, signer.envelope("floor-prepare", {"type": "roll", "notation": "2d6"}))
    per_round = max(1, n // rounds)
    roll = {"type": "roll", "notation": "2d6"}
    # Counted on a connection's second command: its first prepares the lock and the write (a round trip each, once).
    do_command(gm, {"id": "floor-prepare", "action": roll})
    trips = round_trips(lambda: do_command(gm, {"id": "floor-count", "action": roll}))
    lock_sql, _, write_sql, _ = _command_statements(gm)
    sql = ("INSERT INTO campaign_event (campaign_id, seq, type, version, payload, actor_id, character_id, session, "
           "scene, visibility, command_id, created_at, prev_hash, hash, format) "
           "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)")
    sides = ("do_command", "bare", "same_statements", "do_command_signed")
    times = {side: [] for side in sides}
    walls = {side: 0.0 for side in sides}
    cpu = {side: 0.0 for side in sides}
    head, head_hash = bare.last_seq, bare.head_hash
    same_head, same_hash = same.last_seq, same.head_hash
    # The floors use a connection of their own, planned as the server's are (campaign/settings.py).
    with psycopg.connect(_dsn(), options="-c plan_cache_mode=force_generic_plan") as conn:
        for r in range(rounds):
            first = Campaign.objects.get(pk=campaign.pk).last_seq + 1
            t0, c0 = perf(), time.thread_time()
            for i in range(per_round):
                t = perf()
                do_command(gm, {"id": f"floor-{r}-{i}", "action": roll})
                times["do_command"].append(perf() - t)
            walls["do_command"] += perf() - t0
            cpu["do_command"] += time.thread_time() - c0
            envelopes = [signer.envelope(f"floor-{r}-{i}", roll) for i in range(per_round)]
            t0, c0 = perf(), time.thread_time()
            for envelope in envelopes:
                t = perf()
                do_command(signed_gm, envelope)
                times["do_command_signed"].append(perf() - t)
            walls["do_command_signed"] += perf() - t0
            cpu["do_command_signed"] += time.thread_time() - c0
            params, statements = [], []
            rows = list(Event.objects.filter(campaign=campaign, seq__gte=first).select_related("command").order_by("seq"))
            for e in rows:
                head += 1
                e.campaign_id, e.seq, e.prev_hash = bare.id, head, head_hash
                e.hash = head_hash = event_hash(head_hash, hashed_fields(e), e.format)
                params.append((e.campaign_id, e.seq, e.type, e.version, Jsonb(e.payload), e.actor_id, e.character_id,
                               e.session, e.scene, e.visibility, None, e.created_at, e.prev_hash, e.hash, e.format))
            for e in rows:
                same_head += 1
                e.campaign_id, e.seq, e.actor_id, e.prev_hash = same.id, same_head, same_gm.user_id, same_hash
                e.hash = same_hash = event_hash(same_hash, hashed_fields(e), e.format)
                client_id = f"same-{r}-{e.seq}"
                statements.append((
                    [same_gm.pk, same_gm.user_id, client_id, same.id],
                    [same.id, same_gm.user_id, client_id, e.command.body_hash, e.command.created_at,
                     same.id, e.seq, e.type, e.version, canonical_json(e.payload).decode("utf-8"), e.actor_id,
                     e.character_id, e.session, e.scene, e.visibility, e.created_at, e.prev_hash, e.hash, e.format,
                     *head_values(same, same_head, same_hash), same.id]))
            t0, c0 = perf(), time.thread_time()
            for p in params:
                t = perf()
                with conn.transaction():  # BEGIN, the lock, the insert, COMMIT: 4 round trips
                    conn.execute("SELECT last_seq, head_hash FROM campaign_campaign WHERE id = %s FOR UPDATE",
                                 [bare.id])
                    conn.execute(sql, p)
                times["bare"].append(perf() - t)
            walls["bare"] += perf() - t0
            cpu["bare"] += time.thread_time() - c0
            t0, c0 = perf(), time.thread_time()
            for lock_params, write_params in statements:
                t = perf()
                with conn.transaction():  # BEGIN, do_command's lock, its write, COMMIT: 4 round trips
                    conn.execute(lock_sql, lock_params, prepare=True).fetchone()
                    conn.execute(write_sql, write_params, prepare=True).fetchall()
                times["same_statements"].append(perf() - t)
            walls["same_statements"] += perf() - t0
            cpu["same_statements"] += time.thread_time() - c0
        with conn.transaction():
            conn.execute("UPDATE campaign_campaign SET last_seq = %s, head_hash = %s WHERE id = %s",
                         [head, head_hash, bare.id])
    out = {side: {"n": len(times[side]), "per_s": round(len(times[side]) / walls[side], 1),
                  "ms": summary_ms(times[side]), "cpu_ms_per_append": round(cpu[side] / len(times[side]) * 1000, 3)}
           for side in times}
    out["do_command"]["round_trips"] = trips  # BEGIN and COMMIT included
    out["bare"]["round_trips"] = 4  # psycopg's BEGIN, the lock, the insert, COMMIT
    out["same_statements"]["round_trips"] = 4
    out["rounds"] = rounds
    out["ratio_do_command_over_bare"] = ratio(out["do_command"]["per_s"], out["bare"]["per_s"])
    out["ratio_same_statements_over_bare"] = ratio(out["same_statements"]["per_s"], out["bare"]["per_s"])
    out["ratio_do_command_over_same_statements"] = ratio(out["do_command"]["per_s"], out["same_statements"]["per_s"])
    out["do_command_signed"]["round_trips"] = round_trips(
        lambda: do_command(signed_gm, signer.envelope("floor-count", roll)))
    out["signature_check"] = {
        "cpu_ms_per_command": round(out["do_command_signed"]["cpu_ms_per_append"]
                                    - out["do_command"]["cpu_ms_per_append"], 3),
        "ratio_cpu_signed_over_unsigned": ratio(out["do_command_signed"]["cpu_ms_per_append"],
                                                out["do_command"]["cpu_ms_per_append"]),
        "ratio_per_s_signed_over_unsigned": ratio(out["do_command_signed"]["per_s"], out["do_command"]["per_s"]),
        "ed25519_verify_cpu_ms": _verify_cpu_ms(envelopes[-1], signed.id)}
    return out


def head_values(campaign: Campaign, seq: int, head_hash: str) -> list:
    """The stream row's columns as ``record`` writes them with its events (``campaign.eventlog.STREAM_COLUMNS``,
    the head at ``seq``/``head_hash``, the rest as the row holds them)."""
    now = {"last_seq": seq, "head_hash": head_hash}
    return [now[c] if c in now else getattr(campaign, c) for c in STREAM_COLUMNS]


def _verify_cpu_ms(envelope: dict, campaign_id: int, count: int = 2000) -> float:
    """This process's CPU for one Ed25519 verification of a command's signature, as the server makes it
    (``campaign.member_keys.verifies`` over ``command_message``): the check's own cryptography."""
    from campaign.member_keys import command_message, verifies

    signature = envelope["signature"]
    c0 = time.thread_time()
    for _ in range(count):
        message = command_message(campaign_id, signature["session"], signature["commitment"], envelope["id"],
                                  envelope["action"])
        assert verifies(signature["key"], signature["sig"], message)
    return round((time.thread_time() - c0) / count * 1000, 4)


@contextlib.contextmanager
def _heap_frozen():
    """As a server process is (campaign/asgi.py): what this process holds so far (the other
    benchmarks' rows and results) frozen, so the collector's full passes do not walk it. Unfrozen,
    one such pass inside one replay of :func:`bench_as_of` made it 88 ms of CPU (run bd4f382,
    docs/performance.md)."""
    gc.collect()
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


def bench_as_of(n: int, count: int, seed: int = 1, progress=None) -> dict:
    """A character's sheet as of random seqs of the ``n``-event log.

    Directly (``projections.state_as_of``), then through the API as the GM and
    as a player who may not see one secret roll of that character. The
    snapshots were written by the rebuild (``bench_rebuild``) or are written
    here by the first replays; ``snapshots`` says how many there were before.
    """
    import random

    from campaign.models import CharacterSnapshot
    from campaign.projections import state_as_of

    log = data.ensure_log(n, progress=progress)
    campaign = Campaign.objects.get(slug=log["slug"])
    player, character_id = data.ensure_secret_roll(campaign)
    campaign.refresh_from_db()
    character = Character.objects.get(pk=character_id)
    before = CharacterSnapshot.objects.filter(character__campaign=campaign).count()
    rng = random.Random(seed)
    seqs = [rng.randint(1, campaign.last_seq) for _ in range(count)]
    with _heap_frozen():
        times, cpu = [], []
        for seq in seqs:
            t, c = perf(), time.thread_time()
            state_as_of(character, seq)
            times.append(perf() - t)
            cpu.append(time.thread_time() - c)  # this thread's CPU: what a busy machine does not inflate
        gm = Client()
        gm.force_login(campaign.memberships.get(role="gm").user)
        as_player = Client()
        as_player.force_login(player)
        sheet = f"/api/campaigns/{campaign.slug}/characters/{character_id}"
        for client in (gm, as_player):  # warm up Django (URLs, templates, the connection), not the sheet
            assert client.get(sheet).status_code == 200
        api = {"gm": [], "player_one_secret_roll": [], "now_gm_floor": []}
        for seq in seqs[: max(5, count // 4)]:
            for who, client, url in (("gm", gm, f"{sheet}?as_of={seq}"),
                                     ("player_one_secret_roll", as_player, f"{sheet}?as_of={seq}"),
                                     ("now_gm_floor", gm, sheet)):  # the floor: the same sheet now, from its projection
                t = perf()
                response = client.get(url)
                api[who].append(perf() - t)
                assert response.status_code == 200, response.content[:300]
    return {"events": campaign.last_seq, "snapshots_before": before, "seqs": seqs,
            "state_as_of_ms": summary_ms(times), "state_as_of_cpu_ms": summary_ms(cpu),
            **{f"api_{who}_ms": summary_ms(values) for who, values in api.items()}}


def targets(result: dict) -> list[dict]:
    """Each store target against its floor, from this run's numbers."""
    out = []
    floor = result.get("append_floor")
    if floor:
        # Reported, not scored: the bare loop writes less than a command must (docs/performance.md).
        out.append({"target": "appends through do_command, one campaign (reported): CPU per command, rate "
                              "against the bare loop and against the command's own statements",
                    "floor": f"bare lock+insert {floor['bare']['per_s']}/s, "
                             f"{floor['bare']['round_trips']} round trips",
                    "measured": f"{floor['do_command']['per_s']}/s ({floor['ratio_do_command_over_bare']}x bare, "
                                f"{floor['do_command']['round_trips']} round trips, "
                                f"{floor['do_command']['cpu_ms_per_append']} ms CPU here per command)"
                                + (f"; do_command's own statements from raw psycopg "
                                   f"{floor['same_statements']['per_s']}/s = {floor['ratio_same_statements_over_bare']}x "
                                   f"bare, {floor['same_statements']['cpu_ms_per_append']} ms CPU; do_command "
                                   f"{floor['ratio_do_command_over_same_statements']}x of that"
                                   if "same_statements" in floor else ""),
                    "met": None})
    check = (floor or {}).get("signature_check")
    if check:
        signed = floor["do_command_signed"]
        out.append({"target": "checking members' signatures, per command (reported): a signed 2d6 through do_command "
                              "against the same unsigned",
                    "floor": f"unsigned do_command, same run: {floor['do_command']['cpu_ms_per_append']} ms CPU, "
                             f"{floor['do_command']['per_s']}/s",
                    "measured": f"{signed['cpu_ms_per_append']} ms CPU ({check['ratio_cpu_signed_over_unsigned']}x, "
                                f"+{check['cpu_ms_per_command']} ms per command), {signed['per_s']}/s "
                                f"({check['ratio_per_s_signed_over_unsigned']}x), {signed['round_trips']} round trips; "
                                f"one Ed25519 verification alone {check['ed25519_verify_cpu_ms']} ms CPU",
                    "met": None})
    big = result.get("rebuild", {}).get("100000")
    if big:
        out.append({"target": "rebuild of 100k events within 3 s",
                    "floor": f"reading its rows alone, same run: {min(big['read_floor_s'])} s",
                    "measured": f"{big['ratio_rebuild_over_read']}x the read floor = {big['best_s']} s "
                                f"({min(big['cpu_s'])} s CPU in this process; rebuild --check {big['check_s']} s)",
                    "met": big["best_s"] <= 3})
    as_of = result.get("as_of")
    if as_of:
        worst = max(as_of["state_as_of_ms"]["max"], as_of["api_gm_ms"]["max"],
                    as_of["api_player_one_secret_roll_ms"]["max"])
        now = as_of["api_now_gm_floor_ms"]
        out.append({"target": f"a sheet as of any seq at {as_of['events']} events within 50 ms, worst of "
                              f"{as_of['state_as_of_ms']['n']} random seqs direct and API",
                    "floor": f"the same sheet now through the API, same run: p50 {now['p50']} ms, max {now['max']} ms",
                    "measured": f"API p50 {ratio(as_of['api_gm_ms']['p50'], now['p50'])}x the sheet now "
                                f"({as_of['api_gm_ms']['p50']} ms); worst {worst} ms; directly p50 "
                                f"{as_of['state_as_of_ms']['p50']} ms, worst CPU "
                                f"{as_of.get('state_as_of_cpu_ms', {}).get('max', '?')} ms",
                    "met": worst <= 50})
    odds = result.get("odds")
    if odds:
        out.append({"target": f"every odds form's first call ({odds['count']} forms, 4 systems)",
                    "floor": "5 ms", "measured": f"{odds['max_ms']} ms wall, {odds['max_cpu_ms']} ms CPU (worst form)",
                    "met": odds["max_ms"] <= 5})
    return out


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
              read_requests: int, prefix: str | None = None, progress=print, as_of_count: int = 40) -> dict:
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
    result["append_floor"] = bench_append_floor(appends, prefix)
    progress(f"appends on one campaign: do_command {result['append_floor']['do_command']['per_s']}/s, bare "
             f"lock+insert {result['append_floor']['bare']['per_s']}/s")
    result["as_of"] = bench_as_of(max(read_sizes), as_of_count)
    progress(f"sheet as of any seq at {result['as_of']['events']} events: {result['as_of']['state_as_of_ms']}")
    from .odds import run_odds

    result["odds"] = run_odds()
    progress(f"odds first call: worst {result['odds']['max_ms']} ms of {result['odds']['count']} forms")
    result["targets"] = targets(result)
    for t in result["targets"]:
        verdict = "INFO" if t["met"] is None else "MET " if t["met"] else "MISSED"
        progress(f"TARGET {verdict} {t['target']}: {t['measured']} (floor {t['floor']})")
    return result
