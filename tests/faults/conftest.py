"""Fixtures for fault tests that own every server they break.

* ``pg_cluster``: one private PostgreSQL cluster for the whole run (tests/faults/cluster.py),
  with the personas' table migrated and seeded once into a template;
* ``own_db``: a fresh copy of that template for one test (``own_db.tokens`` are the
  personas' API tokens, ``own_db.events()`` the stored log); the cluster is running again
  when the test ends, whatever the test did to it;
* ``own_redis``: a private ``redis-server`` (no persistence) on a spare port;
* ``own_daphnes(n, **env)``: n daphne processes on those two, stopped at the end.

None of them touch the machine's shared PostgreSQL or Redis, and none needs the test run's
own database (no ``django_db`` mark).
"""

from __future__ import annotations

import pytest

from .cluster import PostgresCluster
from .helpers import Daphne, RedisServer


@pytest.fixture(scope="session")
def pg_cluster():
    cluster = PostgresCluster()
    try:
        cluster.init()
        cluster.start()
        cluster.seed_template()
        yield cluster
    finally:
        cluster.close()


class OwnDatabase:
    def __init__(self, cluster: PostgresCluster, name: str):
        self.cluster, self.name = cluster, name
        self.url = cluster.url(name)
        self.tokens = cluster.tokens

    def sql(self, query: str, params=()) -> list[tuple]:
        return self.cluster.sql(self.name, query, params)

    def events(self) -> list[tuple[int, str]]:
        """(seq, hash) of every stored event of the personas' campaign, in order."""
        return self.sql("SELECT e.seq, e.hash FROM campaign_event e JOIN campaign_campaign c ON c.id = e.campaign_id "
                        "WHERE c.slug = 'torn-road' ORDER BY e.seq")

    def events_of_command(self, client_id: str) -> list[int]:
        return [seq for (seq,) in self.sql(
            "SELECT e.seq FROM campaign_event e JOIN campaign_command c ON c.id = e.command_id "
            "WHERE c.client_id = %s ORDER BY e.seq", (client_id,))]


@pytest.fixture
def own_db(pg_cluster):
    pg_cluster.ensure_running()
    database = OwnDatabase(pg_cluster, pg_cluster.fresh_database())
    yield database
    pg_cluster.ensure_running()  # the databases go with the cluster at the end of the run


@pytest.fixture
def own_redis(tmp_path):
    redis = RedisServer(tmp_path)
    try:
        redis.start()
        yield redis
    finally:
        redis.close()


@pytest.fixture
def own_daphnes(tmp_path, own_db, own_redis):
    made: list[Daphne] = []

    def make(n: int = 1, database_url: str | None = None, **env) -> list[Daphne]:
        # Heartbeats every second and a short wait for a pooled connection: outages show quickly.
        # The wait stays longer than the pool's reconnect interval (1 s, campaign/outages.py): the
        # first request after PostgreSQL is back waits for that reconnect, and must get it.
        env = {"TABLE_HEARTBEAT_SECONDS": "1", "DB_POOL_TIMEOUT": "2", **env}
        for _ in range(n):
            made.append(Daphne(tmp_path, own_redis.url, database_url=database_url or own_db.url, **env))
            made[-1].start()
        return made[-n:]

    try:
        yield make
    finally:
        for server in made:
            server.kill()  # nothing to shut down gracefully: the database is thrown away
