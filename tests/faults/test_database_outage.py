"""PostgreSQL stopped under a running server, then started again.

While it is down, the API answers JSON 503 ``database_unavailable`` (not Django's HTML 500,
and not after a long hang: each request here has a client-side timeout that would fail
the test), pages answer a short HTML 503, and a table socket's command gets a
``database_unavailable`` error frame. When PostgreSQL is back, the very next request
succeeds: no stale pooled connection is handed out.

The PostgreSQL cluster and redis-server are the test's own (tests/faults/conftest.py).
"""

from __future__ import annotations

import asyncio
import json
import urllib.error
import urllib.request

import pytest

from .helpers import SLUG, _opener, get_head, post_command

pytestmark = [pytest.mark.slow]

BOUND = 10  # seconds a request may take before the test fails: "fast", not "fast enough for a timer"


def get(base: str, path: str, headers: dict) -> tuple[int, str, str]:
    request = urllib.request.Request(f"http://{base}{path}", headers=headers)
    try:
        with _opener.open(request, timeout=BOUND) as response:
            return response.status, response.headers.get("Content-Type", ""), response.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.headers.get("Content-Type", ""), e.read().decode()


def test_a_database_outage_answers_503_quickly_and_the_next_request_after_it_succeeds(
        pg_cluster, own_db, own_daphnes):
    (server,) = own_daphnes(1)  # each refused request waits DB_POOL_TIMEOUT (2 s here) for a connection
    alice = own_db.tokens["alice"]
    bearer = {"Authorization": f"Bearer {alice}"}
    head = get_head(server.base, alice)
    events_path = f"/api/campaigns/{SLUG}/events?after=0&limit=1"
    assert get(server.base, events_path, bearer)[0] == 200  # the pool holds a connection PostgreSQL will drop

    async def scenario():
        import websockets

        async with websockets.connect(f"ws://{server.base}/ws/campaigns/{SLUG}/table/?after={head}",
                                      additional_headers={"Authorization": f"Bearer {alice}"},
                                      open_timeout=BOUND, ping_interval=None) as ws:
            # A pong comes after the connect handler is done (frames are handled in order).
            await ws.send(json.dumps({"type": "ping"}))
            while json.loads(await asyncio.wait_for(ws.recv(), BOUND))["type"] != "pong":
                pass
            pg_cluster.stop()
            await ws.send(json.dumps({"type": "command", "id": "during-outage-ws",
                                      "action": {"type": "roll", "notation": "2d6"}}))
            while True:
                frame = json.loads(await asyncio.wait_for(ws.recv(), BOUND))
                if frame["type"] in ("ack", "error"):
                    return frame

    frame = asyncio.run(scenario())
    assert frame["type"] == "error" and frame["code"] == "database_unavailable", frame
    assert frame["id"] == "during-outage-ws"

    status, content_type, body = get(server.base, events_path, bearer)
    assert (status, content_type) == (503, "application/json"), body
    assert json.loads(body)["error"]["code"] == "database_unavailable"

    status, answer = post_command(server.base, alice, "during-outage", timeout=BOUND)
    assert status == 503 and answer["error"]["code"] == "database_unavailable", answer

    # A page (here: a signed-in visitor's home page) gets a page, not JSON and not a 500.
    status, content_type, body = get(server.base, "/", {"Cookie": "sessionid=someone-signed-in"})
    assert status == 503 and content_type.startswith("text/html"), (status, body[:300])
    assert "can't reach its database" in body

    pg_cluster.start()
    status, content_type, body = get(server.base, events_path, bearer)
    assert status == 200, body[:300]
    # The command refused during the outage was not stored: sent again, it is stored now, once.
    status, answer = post_command(server.base, alice, "during-outage", timeout=BOUND)
    assert status == 201, answer
    assert own_db.events_of_command("during-outage") == [answer["seq"]]
    assert own_db.events_of_command("during-outage-ws") == []
    assert [seq for seq, _ in own_db.events()] == list(range(1, answer["seq"] + 1))
    log = server.log_text()
    assert "database unavailable for GET /api/" in log, log[-3000:]
