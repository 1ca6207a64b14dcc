"""A server process killed (SIGKILL) mid-session, and commands whose answer was lost.

Sockets on the killed process reconnect (to the restarted process on the same
port) with ``?after=<last seq>`` and miss nothing, while another process keeps
taking commands. A command retried after its answer was lost returns the
original event and never rolls again.
"""

from __future__ import annotations

import asyncio
import json
import select
import socket
import threading

import pytest

from campaign.eventlog import verify_chain
from campaign.models import Command, Event

from .helpers import (
    SLUG, Daphne, TableClient, assert_exactly_the_log, describe, get_head, post_command, wait_until,
)

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.redis]

HEARTBEAT = {"TABLE_HEARTBEAT_SECONDS": "1"}


@pytest.fixture
def servers(tmp_path, require_redis):
    made = []

    def make(n):
        for _ in range(n):
            made.append(Daphne(tmp_path, require_redis, **HEARTBEAT))
            made[-1].start()
        return made

    yield make
    for server in made:
        server.close()


class Poster(threading.Thread):
    """Posts rolls through one process until told to stop; records every answer."""

    def __init__(self, base, token, prefix):
        super().__init__(daemon=True)
        self.base, self.token, self.prefix = base, token, prefix
        self.answers: list[tuple[str, int, dict]] = []
        self.errors: list[str] = []
        self.halt = threading.Event()

    def run(self):
        n = 0
        while not self.halt.is_set() and n < 400:
            client_id = f"{self.prefix}-{n}"
            n += 1
            try:
                self.answers.append((client_id, *post_command(self.base, self.token, client_id)))
            except Exception as e:  # recorded; the test asserts there are none
                self.errors.append(f"{client_id}: {e!r}")
            self.halt.wait(0.05)

    def stop(self):
        self.halt.set()
        if self.ident is None:  # never started
            return
        self.join(15)
        assert not self.is_alive(), "poster thread did not stop"


def test_a_killed_server_restarts_and_its_sockets_catch_up(transactional_table, servers):
    table = transactional_table
    key = table.tokens()
    a, b = servers(2)

    async def scenario():
        clients = [TableClient("gm@a", key["gm"], a.base), TableClient("watcher@a", key["watcher"], a.base),
                   TableClient("bob@b", key["bob"], b.base)]
        for c in clients:
            c.start()
        poster = Poster(b.base, key["alice"], "through-b")
        try:
            await wait_until(lambda: all(c.readies for c in clients), 10, "every socket ready", clients=clients)
            poster.start()

            async def answered(more: int, what: str) -> None:
                """Wait until the poster has ``more`` answers than now."""
                goal = len(poster.answers) + more
                await wait_until(lambda: len(poster.answers) >= goal or poster.errors, 20, what, poll=0.05)

            await answered(3, "rolls stored through b")
            a.kill()
            await answered(3, "rolls stored through b while a is dead")
            a.start()  # same port
            await wait_until(lambda: all(c.readies >= 2 for c in clients[:2]), 20,
                             "a's sockets back: " + "; ".join(map(describe, clients)), clients=clients)
            await answered(3, "rolls stored through b after a is back")
            await asyncio.to_thread(poster.stop)
            assert poster.answers, poster.errors[:3]
            head = max(body.get("seq", 0) for _, _, body in poster.answers)
            await wait_until(lambda: all(c.last == head for c in clients), 10,
                             "every socket caught up: " + "; ".join(map(describe, clients)), clients=clients)
        finally:
            await asyncio.to_thread(poster.stop)
            for c in clients:
                await c.stop()
        return clients, poster

    clients, poster = asyncio.run(scenario())
    assert not poster.errors, poster.errors[:5]
    assert poster.answers and all(status == 201 for _, status, _ in poster.answers), poster.answers[:3]
    assert len(poster.answers) >= 10
    for c in clients[:2]:
        assert c.readies >= 2, f"{c.name} should have reconnected to the restarted server: {describe(c)}"
    assert clients[2].readies == 1, f"bob's socket on the surviving server should not have dropped: {describe(clients[2])}"
    assert_exactly_the_log(clients, table.campaign)
    assert b.alive() and a.alive()


def _send_without_reading(base: str, token: str, client_id: str, action: dict) -> socket.socket:
    """Write a whole POST and return the socket unread: the answer will be lost."""
    host, port = base.split(":")
    body = json.dumps({"id": client_id, "action": action}).encode()
    request = (f"POST /api/campaigns/{SLUG}/commands HTTP/1.1\r\nHost: {base}\r\n"
               f"Authorization: Bearer {token}\r\nContent-Type: application/json\r\n"
               f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n").encode() + body
    sock = socket.create_connection((host, int(port)), timeout=5)
    sock.sendall(request)
    return sock


def test_a_command_retried_after_a_lost_answer_never_rolls_twice(transactional_table, servers):
    table = transactional_table
    key = table.tokens()
    a, b = servers(2)
    action = {"type": "roll", "notation": "8d20"}
    head_before = get_head(b.base, key["alice"])

    # The command reaches a, is stored, and a dies before anyone reads the answer. The answer
    # is written after the COMMIT: once it can be read, the command is stored.
    sock = _send_without_reading(a.base, key["alice"], "lost-answer", action)
    answered, _, _ = select.select([sock], [], [], 10)
    assert answered, "a never answered the command"
    a.kill()
    sock.close()

    stored = Event.objects.get(command__client_id="lost-answer")
    assert stored.seq == head_before + 1
    # The client retries the same id on the other process: the original, not a new roll.
    status, retried = post_command(b.base, key["alice"], "lost-answer", action)
    assert status == 200, retried
    assert (retried["seq"], retried["payload"], retried["hash"]) == (stored.seq, stored.payload, stored.hash)
    # ... and again on the restarted process, and over a socket.
    a.start()
    status, again = post_command(a.base, key["alice"], "lost-answer", action)
    assert status == 200 and again["seq"] == stored.seq and again["payload"] == stored.payload

    async def over_socket():
        import websockets

        async with websockets.connect(f"ws://{a.base}/ws/campaigns/{SLUG}/table/?after={stored.seq}",
                                      additional_headers={"Authorization": f"Bearer {key['alice']}"},
                                      open_timeout=5, ping_interval=None) as ws:
            await ws.send(json.dumps({"type": "command", "id": "lost-answer", "action": action}))
            while True:
                frame = json.loads(await asyncio.wait_for(ws.recv(), 5))
                if frame["type"] in ("ack", "error"):
                    return frame

    ack = asyncio.run(over_socket())
    head = ack.pop("head")  # the log's head rides on every ack (docs/protocol.md)
    assert ack == {"type": "ack", "id": "lost-answer", "seq": stored.seq, "seqs": [stored.seq], "replayed": True}
    assert head["seq"] >= stored.seq
    # The same id with another action is refused, not rolled.
    status, conflict = post_command(b.base, key["alice"], "lost-answer", {"type": "roll", "notation": "1d4"})
    assert status == 409, conflict

    table.campaign.refresh_from_db()
    assert table.campaign.last_seq == stored.seq
    assert Event.objects.filter(campaign=table.campaign, command__client_id="lost-answer").count() == 1
    assert Command.objects.filter(client_id="lost-answer").count() == 1
    assert verify_chain(table.campaign).ok
