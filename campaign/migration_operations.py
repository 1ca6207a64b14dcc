"""Migration operations for a running system (docs/operations.md, "Upgrades").

``AddIndexOnline``/``RemoveIndexOnline``: on PostgreSQL an index on a big table (the event log) is
built and dropped ``CONCURRENTLY``, so commands keep being stored meanwhile instead of waiting behind
the table's lock for as long as the build takes; on SQLite (one process on a laptop) they are the
plain operations. ``CONCURRENTLY`` can't run in a transaction: a migration using them says
``atomic = False``, and holds nothing else that needs one.
"""

from django.contrib.postgres.operations import AddIndexConcurrently, RemoveIndexConcurrently
from django.db import migrations


class AddIndexOnline(AddIndexConcurrently):
    def database_forwards(self, app_label, schema_editor, from_state, to_state):
        if schema_editor.connection.vendor == "postgresql":
            return super().database_forwards(app_label, schema_editor, from_state, to_state)
        return migrations.AddIndex.database_forwards(self, app_label, schema_editor, from_state, to_state)

    def database_backwards(self, app_label, schema_editor, from_state, to_state):
        if schema_editor.connection.vendor == "postgresql":
            return super().database_backwards(app_label, schema_editor, from_state, to_state)
        return migrations.AddIndex.database_backwards(self, app_label, schema_editor, from_state, to_state)


class RemoveIndexOnline(RemoveIndexConcurrently):
    def database_forwards(self, app_label, schema_editor, from_state, to_state):
        if schema_editor.connection.vendor == "postgresql":
            return super().database_forwards(app_label, schema_editor, from_state, to_state)
        return migrations.RemoveIndex.database_forwards(self, app_label, schema_editor, from_state, to_state)

    def database_backwards(self, app_label, schema_editor, from_state, to_state):
        if schema_editor.connection.vendor == "postgresql":
            return super().database_backwards(app_label, schema_editor, from_state, to_state)
        return migrations.RemoveIndex.database_backwards(self, app_label, schema_editor, from_state, to_state)
