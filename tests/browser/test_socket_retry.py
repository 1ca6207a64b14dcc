"""A rolling restart seen from one tab: its socket is closed with ``4012`` (the process is stopping), the
next socket lands on the stopping process and gets ``4012`` too, the one after is refused with ``4429``
by the real server (the user's socket count still holds the stopping process's socket), and the page
keeps trying until that slot is freed, then is live again with every event in between, once each.

The server's side of each code is tested in tests/sessions (test_rolling_restart.py, test_presence.py);
here the page's: ``4012`` and ``4429`` are "try again" (static/talekeeper/socket.js), not refusals.
"""

from __future__ import annotations

import json

from django.conf import settings
from playwright.sync_api import expect
from websockets.sync.client import connect

from campaign.models import ApiToken
from tests.browser.conftest import SLUG, Seat, api_command, head_seq


def _open_socket(server: str, token: str):
    """One more table socket of the token's user, ready (the server counts it against SOCKETS_PER_USER).

    Nobody reads its frames after ``ready`` (presence, events, heartbeats pile up), so its queue is
    unbounded: with websockets' default of 16 frames the client stops reading past the 17th, never
    sees the server's close frame, and each ``close()`` waits out its 10 s close timeout."""
    ws = connect(f"ws://{server.removeprefix('http://')}/ws/campaigns/{SLUG}/table/?after=0",
                 additional_headers={"Authorization": f"Bearer {token}"}, open_timeout=10, ping_interval=None,
                 max_queue=None)
    for _ in range(1000):  # the backlog, then ``ready``
        frame = json.loads(ws.recv(timeout=10))
        assert frame["type"] != "error", frame
        if frame["type"] == "ready":
            return ws
    raise AssertionError("no ready frame")


def test_a_page_refused_in_a_rolling_restart_tries_again_until_it_is_live(table_of, browser, server, script_dice):
    table = table_of("tale")
    alice_token = ApiToken.objects.create(user=table.alice).key
    bob_token = ApiToken.objects.create(user=table.bob).key
    closed_with: list[int] = []  # the close codes the page's sockets got, in order
    upstreams = []  # (page side, server side) of each socket that reached the server
    arriving_at_stopping_process = [0]  # the next new sockets the stopping process closes at once

    def route(ws):
        if arriving_at_stopping_process[0]:
            arriving_at_stopping_process[0] -= 1
            closed_with.append(4012)
            ws.close(code=4012, reason="restarting")
            return
        upstream = ws.connect_to_server()
        pair = {"page": ws, "server": upstream, "page_closed": False}
        upstreams.append(pair)
        ws.on_message(upstream.send)
        upstream.on_message(lambda message: None if pair["page_closed"] else ws.send(message))
        ws.on_close(lambda code, reason: None if pair["page_closed"] else upstream.close(code=code, reason=reason))

        def server_closed(code, reason):
            if not pair["page_closed"]:
                pair["page_closed"] = True
                closed_with.append(code)
                ws.close(code=code, reason=reason)

        upstream.on_close(server_closed)

    alice = Seat(browser, server, "alice")
    extra = []
    try:
        alice.route_sockets(route)
        alice.login()
        # Alice's other tabs take every slot but the page's.
        extra = [_open_socket(server, alice_token) for _ in range(settings.SOCKETS_PER_USER - 1)]
        start = head_seq(table)

        # The process the page is on stops: the page's socket closes with 4012 while the server still
        # counts it (the stopping process has not released it yet), and the next socket lands there too.
        first = upstreams[0]
        arriving_at_stopping_process[0] = 1
        first["page_closed"] = True
        first["page"].close(code=4012, reason="restarting")
        closed_with.append(4012)

        # The socket after that reaches a process that refuses it: one socket too many.
        expect(alice.page.get_by_text(f"You already have {settings.SOCKETS_PER_USER} table connections open")) \
            .to_be_visible(timeout=10000)
        assert closed_with[:3] == [4012, 4012, 4429], closed_with
        expect(alice.page.locator("#conn")).not_to_have_attribute("data-state", "online")

        # The table goes on meanwhile.
        script_dice([1, 2, 3, 4, 5, 6])
        for i in range(3):
            api_command(server, bob_token, {"type": "roll", "notation": "2d6"}, f"meanwhile-{i}")

        # The stopping process lets its socket go: the page's next try takes the slot.
        first["server"].close(code=4012, reason="restarting")
        alice.wait_live()
        expect(alice.event(start + 3)).to_contain_text("= 11")
        assert alice.seqs() == list(range(1, start + 4))

        # Live for good: a new roll shows once, after every event it follows.
        script_dice([6, 6])
        api_command(server, bob_token, {"type": "roll", "notation": "2d6"}, "after")
        expect(alice.event(start + 4)).to_contain_text("= 12")
        assert alice.seqs() == list(range(1, start + 5))
        assert alice.page.locator("#log > li").count() == start + 4
        assert set(closed_with[2:]) == {4429}, closed_with  # refused as one too many until the slot was free
        assert not alice.errors, alice.errors
    finally:
        for ws in extra:
            ws.close()
        alice.close()
