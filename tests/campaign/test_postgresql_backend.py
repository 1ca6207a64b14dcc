"""campaign/postgresql: the pool hands out a healthy connection without a round trip, and never
one PostgreSQL dropped (the stopped-cluster case is tests/faults/test_database_outage.py)."""

from __future__ import annotations

import select
from unittest import mock

import psycopg
import pytest
from django.db import connection

from campaign.postgresql.base import check_without_round_trip

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]

BOUND_MS = 10_000  # how long the server may take to drop a terminated connection: a bound, not a timer


def terminate(pid: int) -> None:
    """Drop one backend, as a PostgreSQL restart drops them all (:func:`wait_readable` waits until its
    client's socket says so: the server's notice or the end of the stream)."""
    with psycopg.connect(**connection.get_connection_params(), autocommit=True) as admin:
        assert admin.execute("SELECT pg_terminate_backend(%s)", [pid]).fetchone() == (True,)


def wait_readable(conn) -> None:
    """Until PostgreSQL's word of the drop reaches ``conn``: an event, bounded by ``BOUND_MS``, not a sleep."""
    poller = select.poll()
    poller.register(conn.fileno(), select.POLLIN | select.POLLHUP)
    assert poller.poll(BOUND_MS), "the server never dropped the connection"


def test_a_healthy_pooled_connection_is_handed_out_without_the_round_trip_check(require_postgres):
    pool = connection.pool
    assert pool is not None, "the pool is on unless DB_POOL_MAX=0"
    with mock.patch.object(psycopg.Connection, "execute", autospec=True,
                           side_effect=psycopg.Connection.execute) as sent:
        for _ in range(3):
            conn = pool.getconn()
            pool.putconn(conn)
    assert sent.call_count == 0  # psycopg_pool's own check sends an empty query on every checkout


def test_a_connection_postgresql_dropped_is_never_handed_out(require_postgres):
    pool = connection.pool
    conn = pool.getconn()
    dropped = conn.info.backend_pid
    pool.putconn(conn)
    terminate(dropped)
    wait_readable(conn)
    # Every idle connection of the pool is the dropped one or healthy: the one handed out works.
    for _ in range(pool.get_stats()["pool_size"] + 1):
        conn = pool.getconn()
        try:
            assert conn.info.backend_pid != dropped
            assert conn.execute("SELECT 1").fetchone() == (1,)
        finally:
            pool.putconn(conn)


def test_the_check_raises_for_a_dropped_connection_and_passes_a_healthy_one(require_postgres):
    with psycopg.connect(**connection.get_connection_params(), autocommit=True) as conn:
        check_without_round_trip(conn)
        terminate(conn.info.backend_pid)
        wait_readable(conn)
        with pytest.raises(psycopg.OperationalError):
            check_without_round_trip(conn)
    with pytest.raises(psycopg.OperationalError):
        check_without_round_trip(conn)  # closed


def test_a_server_connection_notices_a_postgresql_gone_without_a_word(require_postgres):
    """TCP keepalives and a user timeout (DB_TCP_KEEPALIVE, campaign/settings.py): without them a
    connection whose server host died or whose network was cut waits on its socket for ever, with its
    thread and pooled connection. What is checked is the socket the server's pool hands out; a
    dead network itself can't be made here without privileges."""
    import socket

    from django.conf import settings

    pool = connection.pool
    conn = pool.getconn()
    try:
        sock = socket.fromfd(conn.fileno(), socket.AF_INET, socket.SOCK_STREAM)  # a duplicate: closing it keeps conn's
        try:
            assert sock.getsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE) == 1
            idle = settings.DB_TCP_KEEPALIVE
            assert (sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPIDLE),
                    sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPINTVL),
                    sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPCNT),
                    sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_USER_TIMEOUT)) == (idle, idle // 3, 3, 2 * idle * 1000)
        finally:
            sock.close()
    finally:
        pool.putconn(conn)
