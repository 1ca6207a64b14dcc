"""The ``witnessed`` live scenario: a GM's roll to its result on every screen, witnessed and plain.

Tables of signed members (each with an Ed25519 key registered in the log, a session running) on one
set of daphnes. Each table's GM rolls ``2d6`` at ``rate`` rolls/s (Poisson, open loop) over her socket;
every other member's socket is a bot that does what static/talekeeper/witnessing.js does: on an event
``roll_pending`` listing her, it sends a signed ``witness_roll`` with 32 random bytes at once. Latency
of a roll = when the LAST socket of its table received the event that shows its result (the decision
of a witnessed roll; the roll itself of a plain one) minus when the GM's frame was handed to her socket.
The same load runs twice on fresh processes: the campaigns' ``witnessed_rolls`` "gm" and then "off"
(the plain roll, the floor it is compared with).

Django must be set up before this is imported (``common.setup_django``).
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import random
import time
from collections import Counter

import websockets
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from bench.common import summary_ms

perf = time.perf_counter


def b64url(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def sign(member: dict, table: dict, command_id: str, action: dict) -> dict:
    """The envelope of a command ``member`` signs in the table's running session (docs/fair-dice.md)."""
    from campaign.member_keys import command_message

    message = command_message(table["campaign_id"], table["session"], table["commitment"], command_id, action)
    sig = member["private"].sign(message)
    return {"id": command_id, "action": action,
            "signature": {"key": member["public"], "session": table["session"], "commitment": table["commitment"],
                          "sig": b64url(sig)}}


def make_tables(prefix: str, tables: int, clients: int) -> list[dict]:
    """``tables`` signed campaigns of ``clients`` members (member 0 the GM), each member's key registered
    and a session started; witnessed rolls "gm"."""
    from campaign.actions import do_add_member, do_command, do_create_campaign
    from campaign.fairdice import current_commitment
    from campaign.models import ApiToken, Membership

    from bench.data import _user

    made = []
    for t in range(tables):
        people = [_user(f"{prefix}-t{t}-c{c}") for c in range(clients)]
        campaign = do_create_campaign(people[0], f"Witnessed table {t}", "tote", slug=f"{prefix}-t{t}", signed=True,
                                      witnessed="gm")
        for person in people[1:]:
            do_add_member(campaign, person, "player", actor=people[0])
        table = {"slug": campaign.slug, "campaign_id": campaign.id, "session": None, "commitment": None, "members": []}
        for i, person in enumerate(people):
            private = Ed25519PrivateKey.generate()
            public = b64url(private.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw))
            member = {"user_id": person.pk, "username": person.username, "role": "gm" if i == 0 else "player",
                      "token": ApiToken.objects.create(user=person).key, "private": private, "public": public}
            table["members"].append(member)
            membership = Membership.objects.select_related("user", "campaign").get(campaign=campaign, user=person)
            do_command(membership, sign(member, table, os.urandom(16).hex(),
                                        {"type": "add_member_key", "key": public, "label": "bench"}))
        gm = Membership.objects.select_related("user", "campaign").get(campaign=campaign, user=people[0])
        do_command(gm, sign(table["members"][0], table, os.urandom(16).hex(), {"type": "start_session"}))
        campaign.refresh_from_db()
        table.update(session=campaign.current_session, commitment=current_commitment(campaign))
        made.append(table)
    return made


def set_mode(tables: list[dict], mode: str) -> None:
    """Every table's ``witnessed_rolls``, changed by its GM's signed ``configure_campaign``."""
    from campaign.actions import do_command
    from campaign.models import Campaign, Membership

    for table in tables:
        campaign = Campaign.objects.get(slug=table["slug"])
        if campaign.witnessed_rolls == mode:
            continue
        gm = Membership.objects.select_related("user", "campaign").get(campaign=campaign, user_id=table["members"][0]["user_id"])
        do_command(gm, sign(table["members"][0], table, os.urandom(16).hex(),
                            {"type": "configure_campaign", "settings": {"witnessed_rolls": mode}}))


async def run(tables: list[dict], port: int, rate: float, duration: float, warmup: float, seed: int = 1) -> dict:
    """One round of the load on the daphne at ``port``; see the module doc."""
    rng = random.Random(seed)
    sent: dict[str, float] = {}  # GM command id -> when its frame was handed to the socket
    shown: dict[tuple[int, int], list[float]] = {}  # (table, seq of the result event) -> arrival per socket
    result_of: dict[tuple[int, int], str] = {}  # (table, seq of the result event) -> the GM's command id
    errors: Counter = Counter()
    examples: dict[str, str] = {}
    contributions = unwitnessed = 0
    conns: list[tuple[int, dict, object]] = []
    readers = []

    async def reader(t: int, member: dict, ws, ready: asyncio.Event):
        try:
            await read(t, member, ws, ready)
        except websockets.ConnectionClosed as e:  # counted: a socket the server closed shows nothing more
            errors["socket_closed"] += 1
            examples.setdefault("socket_closed", repr(e)[:200])

    async def read(t: int, member: dict, ws, ready: asyncio.Event):
        nonlocal contributions, unwitnessed
        pendings: dict[int, str] = {}
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
                    if member["user_id"] in p.get("witnesses", []):
                        action = {"type": "witness_roll", "roll": ev["seq"], "entropy": b64url(os.urandom(32))}
                        await ws.send(json.dumps({"type": "command", **sign(member, tables[t], os.urandom(16).hex(), action)}))
                        contributions += 1
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

    async def gm_loop(t: int):
        ws = next((w for tt, m, w in conns if tt == t and m["role"] == "gm"), None)
        if ws is None:
            return  # its GM's socket never got in (counted as connect_failed)
        gm = tables[t]["members"][0]
        at = start + rng.expovariate(rate)
        while at < end:
            await asyncio.sleep(max(0.0, at - perf()))
            cid = os.urandom(16).hex()
            frame = json.dumps({"type": "command", **sign(gm, tables[t], cid, {"type": "roll", "notation": "2d6"})})
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
    for _, _, ws in conns:
        await ws.close()
    for task in readers:
        task.cancel()
    latencies = []
    for key, cid in result_of.items():
        if cid in sent and sent[cid] >= measured_from and len(shown.get(key, ())) >= members[key[0]]:
            latencies.append(max(shown[key]) - sent[cid])
    measured = sum(1 for cid, at in sent.items() if at >= measured_from)
    return {"tables": len(tables), "clients": len(tables[0]["members"]), "sockets": len(conns), "rate": rate, "rolls_sent": len(sent),
            "rolls_measured": measured, "on_every_screen": len(latencies), "lost": measured - len(latencies),
            "all_screens_ms": summary_ms(latencies), "contributions_sent": contributions, "unwitnessed": unwitnessed,
            "errors": dict(errors), "error_examples": examples}
