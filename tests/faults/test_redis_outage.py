"""Redis stopped in the middle of a session, then started again on the same port.

Redis is only the doorbell: commands must keep being stored (201) while it is
down, the failed broadcasts must be logged and not fatal, and every socket must
end up with exactly the log, 1..N, nothing missing and nothing twice.
"""

from __future__ import annotations

import asyncio
import itertools

import pytest

from campaign.models import ApiToken, Command, Event

from .helpers import Daphne, RedisServer, TableClient, assert_exactly_the_log, describe, post_command, wait_until

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.redis]

HEARTBEAT = {"TABLE_HEARTBEAT_SECONDS": "1"}


@pytest.fixture
def private_redis(tmp_path):
    redis = RedisServer(tmp_path)
    redis.start()
    yield redis
    redis.close()


@pytest.fixture
def two_servers(tmp_path, private_redis):
    servers = [Daphne(tmp_path, private_redis.url, **HEARTBEAT) for _ in range(2)]
    try:
        for server in servers:
            server.start()
        yield servers
    finally:
        for server in servers:
            server.close()


def tokens(table):
    return {name: ApiToken.objects.create(user=getattr(table, name)).key
            for name in ("gm", "alice", "bob", "watcher")}


def test_commands_are_stored_and_every_socket_converges_across_a_redis_outage(
        transactional_table, private_redis, two_servers):
    table = transactional_table
    key = tokens(table)
    a, b = two_servers
    ids = (f"outage-{n}" for n in itertools.count())
    results = []

    async def post(server, who="alice"):
        client_id = next(ids)
        status, body = await asyncio.to_thread(post_command, server.base, key[who], client_id)
        results.append((client_id, status, body))
        assert status == 201, (client_id, status, body)
        return body["seq"]

    async def scenario():
        clients = [TableClient("gm@a", key["gm"], a.base), TableClient("bob@b", key["bob"], b.base),
                   TableClient("watcher@a", key["watcher"], a.base)]
        for c in clients:
            c.start()
        try:
            await wait_until(lambda: all(c.readies for c in clients), 10, "every socket ready")
            for server in (a, b, a):
                head = await post(server)
            await wait_until(lambda: all(c.last == head for c in clients), 5, "live events with Redis up")

            private_redis.stop()
            for server in (a, b, a, b, a):
                head = await post(server, "bob" if server is b else "alice")

            private_redis.start()  # same port, empty: every group membership is gone
            for server in (b, a, b):
                head = await post(server)
            await wait_until(lambda: all(c.last == head for c in clients), 15,
                             "every socket caught up after Redis came back: " + "; ".join(map(describe, clients)))
        finally:
            for c in clients:
                await c.stop()
        return clients

    clients = asyncio.run(scenario())
    assert all(server.alive() for server in two_servers), [s.log_text()[-2000:] for s in two_servers]
    stored = assert_exactly_the_log(clients, table.campaign)
    # Every command stored exactly once, with the seq and dice its answer gave.
    for client_id, _, body in results:
        event = Event.objects.get(command__client_id=client_id)
        assert (event.seq, event.payload) == (body["seq"], body["payload"])
    assert Command.objects.filter(client_id__startswith="outage-").count() == len(results) == 11
    assert len(stored) == table.campaign.last_seq
    logs = a.log_text() + b.log_text()
    assert "broadcast failed" in logs, logs[-3000:]


def test_sockets_keep_in_sync_and_new_ones_connect_while_redis_is_down(
        transactional_table, private_redis, two_servers):
    """The doorbell is down, not the table: the heartbeat reads new events from the database."""
    table = transactional_table
    key = tokens(table)
    a, b = two_servers

    async def scenario():
        before = [TableClient("gm@a", key["gm"], a.base), TableClient("bob@b", key["bob"], b.base)]
        for c in before:
            c.start()
        try:
            await wait_until(lambda: all(c.readies for c in before), 10, "every socket ready")
            private_redis.stop()
            await asyncio.sleep(0.5)
            status, body = await asyncio.to_thread(post_command, a.base, key["alice"], "down-1")
            assert status == 201, body
            await wait_until(lambda: all(c.last == body["seq"] for c in before), 5,
                             "sockets opened before the outage to hear of a roll made during it: "
                             + "; ".join(map(describe, before)))
            late = TableClient("watcher@b", key["watcher"], b.base)
            late.start()
            before.append(late)
            await wait_until(lambda: late.readies and late.last == body["seq"], 5,
                             "a socket opened during the outage to get the backlog: " + describe(late))
            status, body = await asyncio.to_thread(post_command, b.base, key["bob"], "down-2")
            assert status == 201, body
            await wait_until(lambda: all(c.last == body["seq"] for c in before), 5,
                             "every socket to hear of a second roll during the outage: "
                             + "; ".join(map(describe, before)))
            assert all(c.opened == 1 for c in before), "; ".join(map(describe, before))
        finally:
            for c in before:
                await c.stop()
            private_redis.start()
        return before

    clients = asyncio.run(scenario())
    assert_exactly_the_log(clients, table.campaign)
