"""A table whose stream lock another connection holds: its commands give up after ``DB_LOCK_TIMEOUT``.

A command used to wait for its campaign's lock as long as the holder kept it (a stalled
transaction, a host's ``psql`` session left open), each one with a database thread and a pooled
connection of the process, until every table of that process waited with it. Now it waits
``DB_LOCK_TIMEOUT`` seconds and is answered ``table_busy``: nothing was stored (it never got the
lock), over HTTP a JSON 503 with ``Retry-After``, over the socket an error frame; once the holder
lets go, the same command id is stored, once.
"""

from __future__ import annotations

import asyncio
import json

import psycopg
import pytest

from .helpers import SLUG, get_head, post_command

pytestmark = [pytest.mark.slow]

ROLL = {"type": "roll", "notation": "2d6"}


def test_a_command_waiting_too_long_for_its_tables_lock_is_told_the_table_is_busy_and_stores_nothing(
        own_db, own_daphnes):
    (server,) = own_daphnes(1, DB_LOCK_TIMEOUT="1")
    alice = own_db.tokens["alice"]
    head = get_head(server.base, alice)

    async def over_socket(client_id: str) -> dict:
        import websockets

        async with websockets.connect(f"ws://{server.base}/ws/campaigns/{SLUG}/table/?after={head}",
                                      additional_headers={"Authorization": f"Bearer {alice}"},
                                      open_timeout=10, ping_interval=None) as ws:
            await ws.send(json.dumps({"type": "command", "id": client_id, "action": ROLL}))
            while True:
                reply = json.loads(await asyncio.wait_for(ws.recv(), 30))
                if reply["type"] in ("ack", "error"):
                    return reply

    with psycopg.connect(own_db.url) as holder:  # a transaction that keeps the table's stream row
        holder.execute("SELECT id FROM campaign_campaign WHERE slug = %s FOR UPDATE", [SLUG])
        status, answer = post_command(server.base, alice, "while-held", ROLL, timeout=30)
        assert status == 503 and answer["error"]["code"] == "table_busy", (status, answer)
        assert "nothing was stored" in answer["error"]["message"]
        frame = asyncio.run(over_socket("while-held-ws"))
        assert frame["type"] == "error" and frame["code"] == "table_busy" and frame["id"] == "while-held-ws", frame
        assert own_db.events_of_command("while-held") == own_db.events_of_command("while-held-ws") == []
        holder.rollback()

    assert [seq for seq, _ in own_db.events()] == list(range(1, head + 1))  # the log untouched
    status, stored = post_command(server.base, alice, "while-held", ROLL)
    assert status == 201 and stored["seq"] == head + 1, (status, stored)
    frame = asyncio.run(over_socket("while-held-ws"))
    assert frame["type"] == "ack" and frame["seq"] == head + 2, frame
    assert own_db.events_of_command("while-held") == [head + 1]
    assert own_db.events_of_command("while-held-ws") == [head + 2]
    assert "Traceback" not in server.log_text()
