"""A database that only reads: a standby after a failover, before it is promoted.

PostgreSQL answers every write with SQLSTATE 25006 (read-only transaction), which Django raises
as an ``InternalError``, not as the ``OperationalError`` of a lost connection. It is an outage
all the same (campaign/outages.py): the API answers JSON ``503 database_unavailable``, a page a
short HTML 503, a socket's command an ``error`` frame, never a 500. Reading with an API token
keeps working: the token's last use is written when it can be, never at the read's cost.

The PostgreSQL cluster and redis-server are the test's own (tests/faults/conftest.py).
"""

from __future__ import annotations

import asyncio
import http.cookiejar
import json
import re
import urllib.error
import urllib.parse
import urllib.request

import pytest

from .helpers import SLUG, _NoRedirects, get_head, post_command

pytestmark = [pytest.mark.slow]

BOUND = 10  # seconds a request or a frame may take before the test fails (a bound on a hang)
HANG = 30  # seconds a terminated backend may take to exit (a bound on a hang)


def open_(opener, request) -> tuple[int, str, str]:
    try:
        with opener.open(request, timeout=BOUND) as response:
            return response.status, response.headers.get("Content-Type", ""), response.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.headers.get("Content-Type", ""), e.read().decode()


def test_a_read_only_database_is_an_outage_for_writes_and_reads_still_work(pg_cluster, own_db, own_daphnes):
    # The read after the failover waits for the pool to replace its connections: on a loaded machine
    # that may take longer than the fixture's 2 s, still well inside a request's BOUND.
    (server,) = own_daphnes(1, DB_POOL_TIMEOUT="5")
    alice = own_db.tokens["alice"]
    bearer = {"Authorization": f"Bearer {alice}"}
    head = get_head(server.base, alice)

    own_db.sql("UPDATE campaign_apitoken SET last_used_at = NULL")  # due to be written (once a minute at most)
    # The failover: every new transaction reads only; the pool's connections are replaced. Each
    # terminate waits (up to HANG) until its backend has exited: one still exiting would be handed out
    # by the pool as sound and fail the read below with it.
    own_db.cluster.sql("postgres", f"ALTER DATABASE {own_db.name} SET default_transaction_read_only = on")
    ended = own_db.cluster.sql("postgres", "SELECT pg_terminate_backend(pid, %s) FROM pg_stat_activity "
                               "WHERE datname = %s", (HANG * 1000, own_db.name))
    assert ended and all(done for (done,) in ended), ended

    plain = urllib.request.build_opener(_NoRedirects)
    status, _, body = open_(plain, urllib.request.Request(
        f"http://{server.base}/api/campaigns/{SLUG}/events?after=0&limit=1", headers=bearer))
    assert status == 200, body[:500]
    assert json.loads(body)["head"] == head

    status, answer = post_command(server.base, alice, "on-a-standby", timeout=BOUND)
    assert status == 503 and answer["error"]["code"] == "database_unavailable", answer

    # A page that writes (logging in saves a session): a short 503 page, not Django's 500.
    jar = http.cookiejar.CookieJar()
    browser = urllib.request.build_opener(_NoRedirects, urllib.request.HTTPCookieProcessor(jar))
    status, _, form = open_(browser, urllib.request.Request(f"http://{server.base}/login/"))
    assert status == 200, form[:500]
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', form).group(1)
    data = urllib.parse.urlencode({"csrfmiddlewaretoken": token, "username": "alice",
                                   "password": "pw-alice-123456"}).encode()
    status, content_type, body = open_(browser, urllib.request.Request(f"http://{server.base}/login/", data=data))
    assert status == 503 and content_type.startswith("text/html"), (status, body[:500])
    assert "can't reach its database" in body

    async def socket_command():
        import websockets

        async with websockets.connect(f"ws://{server.base}/ws/campaigns/{SLUG}/table/?after={head}",
                                      additional_headers=bearer, open_timeout=BOUND, ping_interval=None) as ws:
            await ws.send(json.dumps({"type": "command", "id": "on-a-standby-ws",
                                      "action": {"type": "roll", "notation": "2d6"}}))
            while True:
                frame = json.loads(await asyncio.wait_for(ws.recv(), BOUND))
                if frame["type"] in ("ack", "error"):
                    return frame

    frame = asyncio.run(socket_command())
    assert (frame["type"], frame["code"], frame["id"]) == ("error", "database_unavailable", "on-a-standby-ws"), frame

    assert [seq for seq, _ in own_db.events()][-1] == head  # nothing stored
    log = server.log_text()
    assert "Traceback" not in log, log[-3000:]
