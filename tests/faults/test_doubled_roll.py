"""The connection to PostgreSQL dies at COMMIT: the roll may be stored, and nobody may roll twice.

The server used to answer 500 (or, over the socket, "nothing was stored") although the roll
was stored, and the browser told the player to roll again: two rolls in the log. Now the
answer is ``outcome_unknown`` (HTTP 503 JSON, or a socket error frame), and the client sends
the same command id again, which returns the stored roll instead of rolling anew.

The fault is exact: a proxy between daphne and the test's own PostgreSQL lets the COMMIT
through, lets PostgreSQL answer, and drops the connection instead of passing the answer on
(tests/faults/pgproxy.py).
"""

from __future__ import annotations

import asyncio
import json

import pytest

from .helpers import SLUG, get_head, post_command
from .pgproxy import CommitProxy

pytestmark = [pytest.mark.slow]

ROLL = {"type": "roll", "notation": "8d20"}


@pytest.fixture
def commit_proxy(pg_cluster):
    proxy = CommitProxy(pg_cluster.port)
    yield proxy
    proxy.close()


def test_a_roll_whose_commit_answer_is_lost_is_stored_once_however_often_it_is_resent(
        own_db, own_daphnes, commit_proxy):
    (server,) = own_daphnes(1, database_url=commit_proxy.url(own_db.name))
    alice = own_db.tokens["alice"]
    head = get_head(server.base, alice)

    # Over HTTP: 503 outcome_unknown, though PostgreSQL has stored it.
    commit_proxy.lose_next_commit()
    status, answer = post_command(server.base, alice, "lost-commit", ROLL)
    assert commit_proxy.lost.is_set(), "the proxy never saw the command's COMMIT"
    assert status == 503 and answer["error"]["code"] == "outcome_unknown", (status, answer)
    assert "nothing was stored" not in answer["error"]["message"]
    assert own_db.events_of_command("lost-commit") == [head + 1]

    # The client resends the same id: the stored roll comes back, nothing is rolled again.
    status, resent = post_command(server.base, alice, "lost-commit", ROLL)
    assert status == 200 and resent["seq"] == head + 1, (status, resent)
    assert len(resent["payload"]["terms"][0]["dice"]) == 8
    status, again = post_command(server.base, alice, "lost-commit", ROLL)
    assert status == 200 and again["payload"] == resent["payload"]

    # Over the socket: an outcome_unknown error frame, then the resend's ack is the stored roll.
    async def over_socket():
        import websockets

        async with websockets.connect(f"ws://{server.base}/ws/campaigns/{SLUG}/table/?after={head + 1}",
                                      additional_headers={"Authorization": f"Bearer {alice}"},
                                      open_timeout=10, ping_interval=None) as ws:

            async def answer_to(frame: dict) -> dict:
                await ws.send(json.dumps(frame))
                while True:
                    reply = json.loads(await asyncio.wait_for(ws.recv(), 10))
                    if reply["type"] in ("ack", "error", "pong"):
                        return reply

            await answer_to({"type": "ping"})  # answered once the connect handler is done
            command = {"type": "command", "id": "lost-commit-ws", "action": ROLL}
            commit_proxy.lose_next_commit()
            first = await answer_to(command)
            assert commit_proxy.lost.is_set(), "the proxy never saw the command's COMMIT"
            return first, await answer_to(command)

    first, second = asyncio.run(over_socket())
    assert first["type"] == "error" and first["code"] == "outcome_unknown" and first["id"] == "lost-commit-ws", first
    assert second["type"] == "ack" and second["replayed"] is True and second["seq"] == head + 2, second

    assert own_db.events_of_command("lost-commit") == [head + 1]
    assert own_db.events_of_command("lost-commit-ws") == [head + 2]
    assert [seq for seq, _ in own_db.events()] == list(range(1, head + 3))
