"""The test database between transactional tests: emptied, not flushed.

A transactional test (``transactional_db``, ``django_db(transaction=True)``: the browser tests, the
socket and fault tests, anything whose servers or threads share the committed database) ends with
Django's flush. On PostgreSQL the flush TRUNCATEs every table (new files for each table and index),
drops and restores the event table's guard triggers (campaign/management/commands/flush.py), and fills
the content types and permissions again: about a tenth of a second a test on a quiet machine, half a
second on a loaded one. :func:`empty_tables` leaves the same database with a DELETE of the few rows a
test wrote, in milliseconds. tests/campaign/test_cleanup.py checks that it leaves what the flush leaves.
"""

from __future__ import annotations

# Every table of the app's models but the two the ``post_migrate`` signal fills (content types and
# permissions): no test changes them, and Django's flush would truncate them only to fill them again.
KEPT_TABLES = {"django_content_type", "auth_permission"}


def empty_tables(connection) -> None:
    """The database as Django's flush leaves it. The tables are locked as TRUNCATE locks them (a
    transaction still writing, a server's included, ends before they are emptied), and the guard
    triggers stay installed: ``session_replication_role = replica`` (a superuser's setting, as the test
    database's owner is) skips them and the foreign-key checks for this transaction only, every table
    being emptied in it."""
    from django.apps import apps
    from django.db import transaction

    tables = [connection.ops.quote_name(table) for table in
              sorted({model._meta.db_table for model in apps.get_models(include_auto_created=True)} - KEPT_TABLES)]
    with transaction.atomic(using=connection.alias), connection.cursor() as cursor:
        cursor.execute(f"LOCK TABLE {', '.join(tables)} IN ACCESS EXCLUSIVE MODE")
        cursor.execute("SET LOCAL session_replication_role = replica")
        for table in tables:
            cursor.execute(f"DELETE FROM {table}")


def tables_emptied_not_truncated() -> None:
    """Every transactional test's teardown on PostgreSQL is :func:`empty_tables`; other databases, and
    a test asking for what only the flush does (``available_apps``, ``serialized_rollback``), keep the flush."""
    from django.db import connections
    from django.test import TransactionTestCase

    flush = TransactionTestCase._fixture_teardown

    def teardown(self):
        aliases = self._databases_names(include_mirrors=False)
        if self.available_apps is not None or self.serialized_rollback \
                or any(connections[alias].vendor != "postgresql" for alias in aliases):
            return flush(self)
        for alias in aliases:
            empty_tables(connections[alias])

    TransactionTestCase._fixture_teardown = teardown
