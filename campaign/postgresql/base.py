"""Django's PostgreSQL backend, with a pooled connection checked without a round trip.

Django hands psycopg_pool ``ConnectionPool.check_connection`` when ``CONN_HEALTH_CHECKS``
is on: an empty query before every checkout. Under ASGI every database call checks a
connection out, so every command paid one more round trip to PostgreSQL, and on a busy
process each wait costs the thread a turn at the GIL (docs/performance.md).

:func:`check_without_round_trip` asks the socket instead. A connection PostgreSQL dropped
(a restart, a stop, an administrator's ``pg_terminate_backend``) has something to read: the
server's "terminating connection" notice, or the end of the stream. Then, and only then,
the pool's own check runs, fails, and the pool throws the connection away and hands out
another; a healthy idle connection has nothing to read, and is handed out at once. What
it cannot see (a connection cut without a word, as a dead network would) fails on its
first statement, which answers ``database_unavailable`` as any outage does
(campaign/outages.py).

Measured (``bench/patches.py --only pool_check``, Django's check and this one in alternating rounds
of one run on the shared 2-core machine, load average about 19): a database call (check out, one
``SELECT 1``, give back) took 157 µs with Django's and 126 µs with this one (medians), and 75 against
55 µs of PostgreSQL's CPU.

Everything else is Django's backend (``ENGINE`` is set in campaign/settings.py). The ``pool``
property below is Django 5.2's with the ``check`` changed: tests/test_patched_internals.py pins
Django's, to read again on an upgrade.
"""

from __future__ import annotations

import select

from django.core.exceptions import ImproperlyConfigured
from django.db.backends.base.base import NO_DB_ALIAS
from django.db.backends.postgresql import base
from psycopg import OperationalError
from psycopg.pq import ConnStatus
from psycopg_pool import ConnectionPool


def check_without_round_trip(conn) -> None:
    """psycopg_pool's ``check``: raise if ``conn`` is broken, without a round trip when it is not."""
    if conn.closed or conn.pgconn.status != ConnStatus.OK:
        raise OperationalError("the connection is closed")
    if _readable(conn.fileno()):
        ConnectionPool.check_connection(conn)  # something came unasked: see what it says


def checked_sweeping(pool_of):
    """The pool's ``check``: :func:`check_without_round_trip`, and when it finds a connection
    PostgreSQL dropped, every idle one of the pool checked at once (``ConnectionPool.check``, a
    round trip each). A restart drops them all, and the pool's checkout loop would otherwise find
    them one by one, a second's backoff each: with the socket threads' connections idle in the
    pool, every request for a while after PostgreSQL is back would wait out ``DB_POOL_TIMEOUT``
    and answer 503."""

    def check(conn) -> None:
        try:
            check_without_round_trip(conn)
        except Exception:
            pool_of().check()
            raise

    return check


def _readable(fd: int) -> bool:
    if hasattr(select, "poll"):  # no limit on the descriptor's number, unlike select()
        poller = select.poll()
        poller.register(fd, select.POLLIN | select.POLLERR | select.POLLHUP)
        return bool(poller.poll(0))
    return bool(select.select([fd], [], [], 0)[0])


class DatabaseWrapper(base.DatabaseWrapper):
    @property
    def pool(self):
        """Django 5.2's property, with :func:`check_without_round_trip` as the pool's ``check``
        when ``CONN_HEALTH_CHECKS`` is on (Django passes ``check=`` itself, so it can't be an option)."""
        pool_options = self.settings_dict["OPTIONS"].get("pool")
        if self.alias == NO_DB_ALIAS or not pool_options:
            return None
        if self.alias not in self._connection_pools:
            if self.settings_dict.get("CONN_MAX_AGE", 0) != 0:
                raise ImproperlyConfigured("Pooling doesn't support persistent connections.")
            connect_kwargs = self.get_connection_params()
            connect_kwargs["autocommit"] = True  # as Django: it sets autocommit itself later
            made: list[ConnectionPool] = []
            pool = ConnectionPool(
                kwargs=connect_kwargs,
                open=False,
                configure=self._configure_connection,
                check=checked_sweeping(lambda: made[0]) if self.settings_dict["CONN_HEALTH_CHECKS"] else None,
                **({} if pool_options is True else pool_options),
            )
            made.append(pool)
            self._connection_pools.setdefault(self.alias, pool)  # the first thread's pool wins, as Django's
        return self._connection_pools[self.alias]
