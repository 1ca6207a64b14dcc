"""A PostgreSQL outage, then a Redis restart: no socket is left open, looking live, and deaf.

Each socket's heartbeat is what catches it up when a doorbell is missed. It used to end at
the first database error, so after a PostgreSQL outage (every heartbeat fails) and a Redis
restart (every group membership is gone, so no doorbell rings) the sockets stayed open
and missed every later roll, with nothing logged. Now the heartbeat logs the error, keeps
beating, re-joins its groups and catches up from its last seq.

Everything broken here is the test's own: a private PostgreSQL cluster and redis-server.
"""

from __future__ import annotations

import asyncio

import pytest

from .helpers import TableClient, describe, post_command, wait_until

pytestmark = [pytest.mark.slow]


def everyone(clients) -> str:
    return "; ".join(map(describe, clients))


def assert_exactly_the_stored_log(clients, own_db) -> None:
    stored = own_db.events()
    assert [seq for seq, _ in stored] == list(range(1, len(stored) + 1))
    for client in clients:
        assert not client.problems, describe(client)
        assert [(e["seq"], e["hash"]) for e in client.events] == stored, describe(client)


def test_after_a_database_outage_and_a_redis_restart_every_socket_hears_the_next_roll(
        pg_cluster, own_db, own_redis, own_daphnes):
    (server,) = own_daphnes(1)  # one process is enough: each socket has its own heartbeat
    key = own_db.tokens

    async def roll(server, client_id):
        status, body = await asyncio.to_thread(post_command, server.base, key["alice"], client_id)
        assert status == 201, (client_id, status, body)
        return body["seq"]

    async def scenario():
        clients = [TableClient(name, key[name], server.base) for name in ("gm", "bob", "watcher")]
        for c in clients:
            c.start()
        try:
            await wait_until(lambda: all(c.readies for c in clients), 10, "every socket ready", clients=clients)
            head = await roll(server, "before-outage")
            await wait_until(lambda: all(c.last == head for c in clients), 5, "the first roll everywhere", clients=clients)

            pg_cluster.stop()
            # The heartbeats meet the outage (and say so, instead of dying silently).
            await wait_until(lambda: "heartbeat failed" in server.log_text(), 15,
                             "the heartbeats to log the database outage", poll=0.1)
            own_redis.stop()
            own_redis.start()  # same port, empty: every group membership is gone
            pg_cluster.start()

            for n in range(2):
                head = await roll(server, f"after-outage-{n}")
                await wait_until(lambda: all(c.last == head for c in clients), 15,
                                 f"roll {n} after the outage to reach every socket: " + everyone(clients),
                                 clients=clients)
        finally:
            for c in clients:
                await c.stop()
        return clients

    clients = asyncio.run(scenario())
    # The sockets stayed open all along: they were caught up, not rescued by reconnecting.
    assert all(c.opened == 1 and not c.closes for c in clients), everyone(clients)
    assert_exactly_the_stored_log(clients, own_db)
    assert server.alive()
