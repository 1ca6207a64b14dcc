"""Database triggers that refuse UPDATE and DELETE (and TRUNCATE) on the event table.

The model and queryset already refuse; the triggers also stop raw SQL, the
admin, a shell or a bug elsewhere. They are the third wall, not the only one:
the hash chain is what detects an edit made by someone who drops them.
"""

EVENT_TABLE = "campaign_event"
MESSAGE = "campaign_event is append-only: events are never updated or deleted"

SQLITE_CREATE = [
    f"""CREATE TRIGGER IF NOT EXISTS campaign_event_no_update BEFORE UPDATE ON {EVENT_TABLE}
        BEGIN SELECT RAISE(ABORT, '{MESSAGE}'); END""",
    f"""CREATE TRIGGER IF NOT EXISTS campaign_event_no_delete BEFORE DELETE ON {EVENT_TABLE}
        BEGIN SELECT RAISE(ABORT, '{MESSAGE}'); END""",
]
SQLITE_DROP = [
    "DROP TRIGGER IF EXISTS campaign_event_no_update",
    "DROP TRIGGER IF EXISTS campaign_event_no_delete",
]

POSTGRES_CREATE = [
    f"""CREATE OR REPLACE FUNCTION campaign_event_refuse_change() RETURNS trigger AS $$
        BEGIN RAISE EXCEPTION '{MESSAGE}' USING ERRCODE = 'insufficient_privilege'; END;
        $$ LANGUAGE plpgsql""",
    f"""CREATE OR REPLACE TRIGGER campaign_event_no_update BEFORE UPDATE ON {EVENT_TABLE}
        FOR EACH ROW EXECUTE FUNCTION campaign_event_refuse_change()""",
    f"""CREATE OR REPLACE TRIGGER campaign_event_no_delete BEFORE DELETE ON {EVENT_TABLE}
        FOR EACH ROW EXECUTE FUNCTION campaign_event_refuse_change()""",
    # Row triggers never see TRUNCATE, which empties a table in one statement.
    f"""CREATE OR REPLACE TRIGGER campaign_event_no_truncate BEFORE TRUNCATE ON {EVENT_TABLE}
        FOR EACH STATEMENT EXECUTE FUNCTION campaign_event_refuse_change()""",
]
POSTGRES_DROP = [
    f"DROP TRIGGER IF EXISTS campaign_event_no_truncate ON {EVENT_TABLE}",
    f"DROP TRIGGER IF EXISTS campaign_event_no_update ON {EVENT_TABLE}",
    f"DROP TRIGGER IF EXISTS campaign_event_no_delete ON {EVENT_TABLE}",
    "DROP FUNCTION IF EXISTS campaign_event_refuse_change()",
]


def _statements(vendor: str, create: bool) -> list[str]:
    if vendor == "sqlite":
        return SQLITE_CREATE if create else SQLITE_DROP
    if vendor == "postgresql":
        return POSTGRES_CREATE if create else POSTGRES_DROP
    raise RuntimeError(f"Talekeeper supports SQLite and PostgreSQL, not {vendor}")


def install(connection) -> None:
    with connection.cursor() as cursor:
        for sql in _statements(connection.vendor, True):
            cursor.execute(sql)


def uninstall(connection) -> None:
    with connection.cursor() as cursor:
        for sql in _statements(connection.vendor, False):
            cursor.execute(sql)
