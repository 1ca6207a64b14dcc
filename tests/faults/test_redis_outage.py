"""Redis stopped in the middle of a session, then started again on the same port.

Redis is only the doorbell: commands must keep being stored (201) while it is
down, the failed broadcasts must be logged and not fatal, sockets must keep in
sync through the heartbeat, and every socket must end up with exactly the log,
1..N, nothing missing and nothing twice. Each test runs its own redis-server on
a spare port; the machine's shared Redis is never touched.
"""

from __future__ import annotations

import asyncio
import itertools
import time

import pytest
from channels_redis.core import RedisChannelLayer

from sessions.transport import group_name
from campaign.models import Command, Event

from .helpers import Daphne, RedisServer, TableClient, assert_exactly_the_log, describe, post_command, wait_until

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.redis]

# Heartbeats every second: Redis outages show quickly. PostgreSQL stays up here, so a command may wait
# as long for a pooled connection as the test waits for its answer (the pool's 3 s passed on a loaded
# machine, and a database_unavailable answer is not what these tests check).
HEARTBEAT = {"TABLE_HEARTBEAT_SECONDS": "1", "DB_POOL_TIMEOUT": "60"}


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


def everyone(clients) -> str:
    return "; ".join(map(describe, clients))


async def doorbell_rings(redis_url: str, campaign_id: int, post, servers) -> None:
    """Each server's broadcast reaches the layer again: listen to the group ourselves."""
    layer = RedisChannelLayer(hosts=[redis_url])
    channel = await layer.new_channel()
    await layer.group_add(group_name(campaign_id), channel)
    try:
        for server in servers:
            seq = await post(server)
            deadline = time.monotonic() + 5
            while True:
                left = deadline - time.monotonic()
                assert left > 0, f"no doorbell for seq {seq} from {server.base} after Redis came back"
                message = await asyncio.wait_for(layer.receive(channel), left)
                if message["type"] == "table.events" and message["events"][-1]["seq"] == seq:
                    break
    finally:
        await layer.close_pools()


def test_commands_are_stored_and_every_socket_converges_across_a_redis_outage(
        transactional_table, private_redis, two_servers):
    table = transactional_table
    key = table.tokens()
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
            await wait_until(lambda: all(c.readies for c in clients), 10, "every socket ready", clients=clients)
            for server in (a, b, a):
                head = await post(server)
            await wait_until(lambda: all(c.last == head for c in clients), 5, "live events with Redis up", clients=clients)

            private_redis.stop()
            for server in (a, b, a, b, a):
                head = await post(server, "bob" if server is b else "alice")

            private_redis.start()  # same port, empty: every group membership is gone
            await doorbell_rings(private_redis.url, table.campaign.id, post, (a, b))
            for server in (b, a):
                head = await post(server)
            await wait_until(lambda: all(c.last == head for c in clients), 15,
                             "every socket caught up after Redis came back: " + everyone(clients), clients=clients)
        finally:
            for c in clients:
                await c.stop()
        return clients

    clients = asyncio.run(scenario())
    assert all(server.alive() for server in two_servers), [s.log_text()[-2000:] for s in two_servers]
    assert_exactly_the_log(clients, table.campaign)
    # Every command stored exactly once, with the seq and dice its answer gave.
    assert Command.objects.filter(client_id__startswith="outage-").count() == len(results) == 12
    for client_id, _, body in results:
        event = Event.objects.get(command__client_id=client_id)
        assert (event.seq, event.payload, event.hash) == (body["seq"], body["payload"], body["hash"])
    logs = a.log_text() + b.log_text()
    assert "broadcast failed" in logs, logs[-3000:]


def test_sockets_stay_open_and_in_sync_while_redis_is_down(transactional_table, private_redis, two_servers):
    """The doorbell is down, not the table: the heartbeat reads new events from the database."""
    table = transactional_table
    key = table.tokens()
    a, b = two_servers

    async def scenario():
        clients = [TableClient("gm@a", key["gm"], a.base), TableClient("bob@b", key["bob"], b.base)]
        for c in clients:
            c.start()
        try:
            await wait_until(lambda: all(c.readies for c in clients), 10, "every socket ready", clients=clients)
            private_redis.stop()
            for n, server in enumerate((a, b)):
                status, body = await asyncio.to_thread(post_command, server.base, key["alice"], f"down-{n}")
                assert status == 201, body
                await wait_until(lambda: all(c.last == body["seq"] for c in clients), 5,
                                 f"every socket to hear of roll {n} made during the outage: " + everyone(clients),
                                 clients=clients)
            late = TableClient("watcher@b", key["watcher"], b.base)
            late.start()
            clients.append(late)
            await wait_until(lambda: late.readies and late.last == body["seq"], 5,
                             "a socket opened during the outage to get the backlog: " + describe(late), clients=[late])
            # Two more heartbeats on every socket with Redis still down (each checks the log).
            seen = [c.heartbeats for c in clients]
            await wait_until(lambda: all(c.heartbeats >= n + 2 for c, n in zip(clients, seen)), 10,
                             "two more heartbeats with Redis down: " + everyone(clients), clients=clients)
        finally:
            for c in clients:
                await c.stop()
        return clients

    clients = asyncio.run(scenario())
    assert all(c.opened == 1 and not c.closes for c in clients), (
        "the server dropped sockets while Redis was down (the docs promise the heartbeat keeps them in sync): "
        + everyone(clients))
    assert_exactly_the_log(clients, table.campaign)


def test_a_frozen_redis_neither_hangs_connects_nor_silences_sockets(transactional_table, private_redis, two_servers):
    """SIGSTOP: Redis accepts nothing and answers nothing, like a host gone off the network."""
    table = transactional_table
    key = table.tokens()
    a, b = two_servers

    async def scenario():
        clients = [TableClient("gm@a", key["gm"], a.base)]
        clients[0].start()
        try:
            await wait_until(lambda: clients[0].readies, 10, "the socket ready", clients=clients)
            private_redis.freeze()
            for n in range(2):
                # post_command's own timeout fails the test if the command path hangs on the
                # frozen Redis (no timing assertion: a loaded machine is slow, not wrong).
                status, body = await asyncio.to_thread(post_command, b.base, key["alice"], f"frozen-{n}")
                assert status == 201, body
                await wait_until(lambda: clients[0].last == body["seq"], 6,
                                 f"the socket to hear of roll {n} made while Redis is frozen: " + everyone(clients),
                                 clients=clients)
            late = TableClient("bob@a", key["bob"], a.base)
            late.start()
            clients.append(late)
            await wait_until(lambda: late.readies and late.last == body["seq"], 6,
                             "a socket opened while Redis is frozen to get ready and the backlog: " + describe(late),
                             clients=[late])
        finally:
            private_redis.thaw()
            for c in clients:
                await c.stop()
        return clients

    clients = asyncio.run(scenario())
    assert all(c.opened == 1 and not c.closes for c in clients), everyone(clients)
    assert_exactly_the_log(clients, table.campaign)
