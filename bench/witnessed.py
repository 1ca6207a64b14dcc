"""The ``witnessed`` live scenario: a GM's roll to its result on every screen, witnessed and plain.

Tables of signed members (each with an Ed25519 key registered in the log, a session running) on one
set of daphnes. Each table's GM rolls ``2d6`` at ``rate`` rolls/s (Poisson, open loop) over her socket;
every other member's socket is a bot that does what static/talekeeper/witnessing.js does: on an event
``roll_pending`` listing her, it sends a signed ``witness_commit`` to 32 random bytes at once, and on the
roll's ``commitments_closed`` holding it, a signed ``witness_roll`` revealing them. Latency
of a roll = when the LAST socket of its table received the event that shows its result (the decision
of a witnessed roll; the roll itself of a plain one) minus when the GM's frame was handed to her socket.
The same load runs twice on fresh processes: the campaigns' ``witnessed_rolls`` "off" (the plain roll,
the floor it is compared with) and then "gm", each in a session of its own.

Django must be set up before this is imported (``common.setup_django``).
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import time
from collections import Counter

import websockets

import rules.witness as witnessed
from bench import data
from bench.common import cpu_seconds, summary_ms
from bench.signing import b64url

perf = time.perf_counter


def make_tables(prefix: str, tables: int, clients: int) -> list[dict]:
    """``tables`` signed campaigns of ``clients`` members (member 0 the GM), each member's key registered
    (``bench.data.make_tables``) and a session started; witnessed rolls "off" until :func:`set_mode`."""
    from django.contrib.auth import get_user_model

    made = data.make_tables(prefix, tables, clients, signed=True)
    users = dict(get_user_model().objects.filter(username__startswith=f"{prefix}-").values_list("username", "pk"))
    for table in made:
        for member in table["members"]:
            member["user_id"] = users[member["username"]]
        _gm_sends(table, {"type": "start_session"})
    return made


def _gm_sends(table: dict, action: dict) -> None:
    """The table's GM sends ``action``, signed for the session running now; the table then records the
    session its bots sign for (``bench.data.signer``)."""
    from campaign.fairdice import current_commitment
    from campaign.models import Campaign

    campaign = Campaign.objects.get(pk=table["campaign"])
    data.send(data.membership(campaign, table["members"][0]["user_id"]), {"id": os.urandom(16).hex(), "action": action})
    campaign.refresh_from_db()
    table.update(session=campaign.current_session, commitment=current_commitment(campaign))


def set_mode(tables: list[dict], mode: str) -> None:
    """Every table's ``witnessed_rolls``, changed by its GM's signed ``configure_campaign`` between two
    sessions (it changes between sessions only)."""
    from campaign.models import Campaign

    for table in tables:
        if Campaign.objects.get(pk=table["campaign"]).witnessed_rolls == mode:
            continue
        _gm_sends(table, {"type": "end_session"})
        _gm_sends(table, {"type": "configure_campaign", "settings": {"witnessed_rolls": mode}})
        _gm_sends(table, {"type": "start_session"})


async def run(tables: list[dict], port: int, rate: float, duration: float, warmup: float, seed: int = 1,
              pid: int | None = None) -> dict:
    """One round of the load on the daphne at ``port`` (process ``pid``, whose CPU per roll is reported);
    see the module doc."""
    rng = random.Random(seed)
    sent: dict[str, float] = {}  # GM command id -> when its frame was handed to the socket
    shown: dict[tuple[int, int], list[float]] = {}  # (table, seq of the result event) -> arrival per socket
    result_of: dict[tuple[int, int], str] = {}  # (table, seq of the result event) -> the GM's command id
    pending_of: dict[str, tuple[int, int]] = {}  # GM command id -> (table, seq of its roll_pending)
    came: dict[tuple[int, int], set[int]] = {}  # (table, pending seq) -> the seqs of its contributions
    errors: Counter = Counter()
    examples: dict[str, str] = {}
    contributions = unwitnessed = 0
    conns: list[tuple[int, dict, object]] = []
    readers = []
    signers = {(t, m["username"]): data.signer(table, m) for t, table in enumerate(tables) for m in table["members"]}

    async def reader(t: int, member: dict, ws, ready: asyncio.Event):
        try:
            await read(t, member, ws, ready)
        except websockets.ConnectionClosed as e:  # counted: a socket the server closed shows nothing more
            errors["socket_closed"] += 1
            examples.setdefault("socket_closed", repr(e)[:200])

    async def read(t: int, member: dict, ws, ready: asyncio.Event):
        nonlocal contributions, unwitnessed
        pendings: dict[int, str] = {}
        kept: dict[int, str] = {}  # pending seq -> the entropy this bot committed to, until the close
        async for raw in ws:
            now = perf()
            frame = json.loads(raw)
            kind = frame.get("type")
            if kind == "ready":
                ready.set()
            elif kind == "error":
                errors[frame.get("code", "error")] += 1
                examples.setdefault(frame.get("code", "error"), frame.get("message", "")[:200])
            elif kind == "event":
                ev = frame["event"]
                p = ev.get("payload") or {}
                shown.setdefault((t, ev["seq"]), []).append(now)
                if ev["type"] == "roll_pending":
                    pendings[ev["seq"]] = p.get("command_id")
                    pending_of[p.get("command_id")] = (t, ev["seq"])
                    if member["user_id"] in p.get("witnesses", []):
                        kept[ev["seq"]] = entropy = b64url(os.urandom(32))
                        action = {"type": "witness_commit", "roll": ev["seq"],
                                  "commitment": witnessed.commitment(ev["seq"], member["user_id"], entropy)}
                        envelope = signers[t, member["username"]].envelope(os.urandom(16).hex(), action)
                        await ws.send(json.dumps({"type": "command", **envelope}))
                elif ev["type"] == "commitments_closed" and p.get("command_of") in kept:
                    # Revealed whether or not the close holds its commitment: a refusal is counted.
                    action = {"type": "witness_roll", "roll": p["command_of"], "entropy": kept.pop(p["command_of"])}
                    envelope = signers[t, member["username"]].envelope(os.urandom(16).hex(), action)
                    await ws.send(json.dumps({"type": "command", **envelope}))
                    contributions += 1
                elif ev["type"] == "roll_witnessed":
                    came.setdefault((t, p.get("roll")), set()).add(ev["seq"])
                elif "witness_digest" in p:
                    result_of[(t, ev["seq"])] = pendings.get(p.get("command_of"))
                    unwitnessed += member["role"] == "gm" and p.get("unwitnessed") is True
                elif ev["type"] == "roll" and isinstance(p.get("command_id"), str):
                    result_of[(t, ev["seq"])] = p["command_id"]

    async def connect(t: int, member: dict):
        url = f"ws://127.0.0.1:{port}/ws/campaigns/{tables[t]['slug']}/table/"
        try:
            ws = await websockets.connect(url, additional_headers={"Authorization": f"Bearer {member['token']}"},
                                          open_timeout=60, ping_interval=None, close_timeout=2, max_size=2**22)
            ready = asyncio.Event()
            readers.append(asyncio.create_task(reader(t, member, ws, ready)))
            await asyncio.wait_for(ready.wait(), 60)
        except (OSError, asyncio.TimeoutError, websockets.WebSocketException) as e:
            errors["connect_failed"] += 1
            examples.setdefault("connect_failed", repr(e)[:200])
            return
        conns.append((t, member, ws))

    sem = asyncio.Semaphore(25)

    async def bounded(t, member):
        async with sem:
            await connect(t, member)

    await asyncio.gather(*(bounded(t, m) for t, table in enumerate(tables) for m in table["members"]))
    await asyncio.sleep(0.5)  # presence: every socket's arrival is in before the first roll lists witnesses
    start = perf()
    measured_from, end = start + warmup, start + duration
    cpu_before = cpu_seconds(pid) if pid else None

    async def gm_loop(t: int):
        ws = next((w for tt, m, w in conns if tt == t and m["role"] == "gm"), None)
        if ws is None:
            return  # its GM's socket never got in (counted as connect_failed)
        gm = signers[t, tables[t]["members"][0]["username"]]
        at = start + rng.expovariate(rate)
        while at < end:
            await asyncio.sleep(max(0.0, at - perf()))
            cid = os.urandom(16).hex()
            frame = json.dumps({"type": "command", **gm.envelope(cid, {"type": "roll", "notation": "2d6"})})
            sent[cid] = perf()
            await ws.send(frame)
            at += rng.expovariate(rate)

    await asyncio.gather(*(gm_loop(t) for t in range(len(tables))))
    members = Counter(t for t, _, _ in conns)  # the sockets of each table that got in
    drain_until = perf() + 10
    while perf() < drain_until:  # until every roll sent is on every screen of its table (bounded)
        done = {cid for key, cid in result_of.items() if cid and len(shown.get(key, ())) >= members[key[0]]}
        if done >= set(sent):
            break
        await asyncio.sleep(0.05)
    cpu = cpu_seconds(pid) - cpu_before if cpu_before is not None else None
    for _, _, ws in conns:
        await ws.close()
    for task in readers:
        task.cancel()
    latencies = []
    # Where a witnessed roll's time went, each from the GM's frame: its pending event on every screen, its
    # last contribution on the first screen (all stored), its result on every screen.
    phases: dict[str, list[float]] = {"pending_on_every_screen": [], "contributions_stored": [],
                                      "result_on_every_screen": []}
    for key, cid in result_of.items():
        if cid in sent and sent[cid] >= measured_from and len(shown.get(key, ())) >= members[key[0]]:
            latencies.append(max(shown[key]) - sent[cid])
            pending = pending_of.get(cid)
            if pending is not None and came.get(pending):
                phases["pending_on_every_screen"].append(max(shown[pending]) - sent[cid])
                phases["contributions_stored"].append(max(min(shown[key[0], seq]) for seq in came[pending]) - sent[cid])
                phases["result_on_every_screen"].append(latencies[-1])
    measured = sum(1 for cid, at in sent.items() if at >= measured_from)
    return {"tables": len(tables), "clients": len(tables[0]["members"]), "sockets": len(conns), "rate": rate, "rolls_sent": len(sent),
            "rolls_measured": measured, "on_every_screen": len(latencies), "lost": measured - len(latencies),
            "all_screens_ms": summary_ms(latencies),
            "phases_ms": {name: summary_ms(values) for name, values in phases.items() if values},
            "daphne_cpu_ms_per_roll": round(cpu * 1000 / len(sent), 2) if cpu is not None and sent else None,
            "contributions_sent": contributions, "unwitnessed": unwitnessed,
            "errors": dict(errors), "error_examples": examples}
