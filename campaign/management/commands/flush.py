"""``flush``, which can wipe a database whose event table refuses DELETE.

Django's flush empties tables with DELETE on SQLite and TRUNCATE on
PostgreSQL, and the guard triggers refuse both. Tests flush between
transactional test cases, so this drops the guard triggers for the wipe and
puts them back afterwards. Wiping a whole database is the one sanctioned way an event
ever leaves it.
"""

from django.core.management.commands.flush import Command as DjangoFlush
from django.db import connections

from campaign import triggers


class Command(DjangoFlush):
    def handle(self, **options):
        connection = connections[options["database"]]
        triggers.uninstall(connection)
        try:
            return super().handle(**options)
        finally:
            triggers.install(connection)
