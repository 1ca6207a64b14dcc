"""The log's store: the one record path, and the lock every command reads its context with.

Everything that enters a log goes through :func:`record` (a live command, a new
campaign or member, and ``import_log`` alike): it chains the events and moves the
stream's counters, folds them into the characters' projections and stores it all in
one statement. It must be called inside ``transaction.atomic()`` with the campaign
row locked by :func:`lock_campaign` (or :func:`lock_stream`, which reads a command's
context in the same round trip), which is what makes seq gap-free and commit-ordered.
Only ``campaign.actions.do_*`` functions and ``import_log`` call it.

The log only stores: telling open tables (``campaign.publish.publish_on_commit``)
is the caller's, the ``do_*`` function that recorded, so this module knows nothing of
the transport above it.
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping

import psycopg
from django.contrib.auth import get_user_model
from django.db import connection, transaction
from django.utils import timezone

from .. import projections, roster
from ..models import VISIBILITY_PUBLIC, Campaign, Character, CharacterProjection, Command, DiceSeed, Event, Membership
from .chain import FORMAT_2, body_digest, canonical_json, event_body, event_hash, hashed_fields

# The hash format new events are stored in; older events keep theirs (.chain).
CURRENT_FORMAT = FORMAT_2


@dataclass(frozen=True)
class Draft:
    """An event about to be appended: what the rules decided plus who it concerns."""

    type: str
    payload: Mapping[str, Any] = field(default_factory=dict)
    version: int = 1
    character: Character | None = None
    visibility: str = VISIBILITY_PUBLIC


def lock_campaign(campaign_id: int) -> Campaign:
    """Lock and return the campaign's stream row. Call inside ``atomic()``.

    On PostgreSQL this is ``SELECT ... FOR UPDATE``: a second appender waits
    here until the first commits, so seq order is commit order. On SQLite the
    IMMEDIATE transaction already holds the database's single write lock.
    """
    return Campaign.objects.select_for_update().get(pk=campaign_id)


class _Columns:
    """Reads one model's row out of a hand-written join: its columns under an alias, and
    the instance Django would have built from them (the same converters as the ORM's)."""

    def __init__(self, model, alias: str):
        self.model, self.alias = model, alias
        self.fields = model._meta.concrete_fields
        self.attnames = [f.attname for f in self.fields]
        self._converters = None

    def sql(self) -> str:
        quote = connection.ops.quote_name
        return ", ".join(f"{self.alias}.{quote(f.column)}" for f in self.fields)

    def build(self, values):
        if self._converters is None:
            self._converters = [
                connection.ops.get_db_converters(f.get_col(self.alias)) + f.get_db_converters(connection)
                for f in self.fields]
        values = list(values)
        for i, converters in enumerate(self._converters):
            for convert in converters:
                values[i] = convert(values[i], self.fields[i], connection)
        return self.model.from_db(connection.alias, self.attnames, values)

    def __len__(self) -> int:
        return len(self.fields)


def _cursor():
    """A cursor for the lock and the write, which every command runs.

    On PostgreSQL it binds parameters on the server and prepares each statement
    once per connection: Django's cursors put the parameters into the text, so
    PostgreSQL would parse and plan the lock's join again for every command
    (two thirds of its time in the server). Still Django's cursor wrapper:
    counted by ``CaptureQueriesContext``, passed through
    ``connection.execute_wrapper`` like every other query. (Behind PgBouncer in
    transaction mode this needs its ``max_prepared_statements``, 1.21+.)

    Measured (``bench/patches.py --only prepared``, Django's cursor and this one in alternating
    rounds of one run on the shared 2-core machine, load average about 19): a ``2d6`` command used
    2.58 ms of PostgreSQL's CPU through Django's cursor and 1.48 ms prepared, and took 24.2 against
    20.5 ms (medians). ``PreparingCursor`` overrides psycopg's private ``_send_query_prepared``:
    pinned by tests/test_patched_internals.py.
    """
    db = transaction.get_connection()
    if db.vendor != "postgresql":
        return db.cursor()
    db.ensure_connection()
    if db.connection.prepare_threshold is None:
        # Django opens connections with preparing switched off (for poolers), and psycopg
        # then ignores ``prepare=True`` too: every command's lock and write were parsed
        # and planned again. Django's own cursors never prepare, so
        # only the statements that ask for it (these) are prepared.
        db.connection.prepare_threshold = ONLY_WHEN_ASKED
        # Each is planned once per connection, too (plan_cache_mode, campaign/settings.py).
    raw = _preparing_cursor()(db.connection)
    return db.make_debug_cursor(raw) if db.queries_logged else db.make_cursor(raw)


ONLY_WHEN_ASKED = 2**31 - 1  # a psycopg prepare threshold no statement reaches by being run often


@functools.cache
def _preparing_cursor():
    class PreparingCursor(psycopg.Cursor):
        def execute(self, query, params=None, *, prepare=None, binary=None):
            return super().execute(query, params, prepare=True, binary=binary)

        def _send_query_prepared(self, name, pgq, *, binary=None):
            # psycopg notes the query it sent only when it did not prepare it; Django's debug
            # cursor (CaptureQueriesContext, DEBUG's connection.queries) reads it from there.
            self._query = pgq
            return super()._send_query_prepared(name, pgq, binary=binary)

    return PreparingCursor


@dataclass
class Stream:
    """What a command reads under its campaign's lock, in the lock's own round trip."""

    campaign: Campaign
    membership: Membership | None  # None: no longer an active member of the campaign
    previous: tuple[int, str] | None  # (id, body hash) of an earlier command with this client id
    seed: str | None  # the running session's dice seed (docs/fair-dice.md)
    character: Character | None  # the character asked for, with its projection (None if not in the campaign)


_STREAM_SQL: dict[tuple[str, bool], tuple[str, list]] = {}
_READERS = {}
# Stand-ins the lock's query is compiled with once, replaced by the command's own ids at each run.
_SOME_CAMPAIGN, _SOME_CHARACTER = -(2**62) + 1, -(2**62) + 2


def _readers():
    if not _READERS:  # built at the first command: the user model is known once the apps are loaded
        _READERS.update(campaign=_Columns(Campaign, "c"), membership=_Columns(Membership, "m"),
                        user=_Columns(get_user_model(), "u"), character=_Columns(Character, "ch"),
                        projection=_Columns(CharacterProjection, "p"))
    return _READERS


def _stream_sql(with_character: bool) -> tuple[str, list]:
    """The lock's query and the parameters of its hidden-changes test (with the stand-ins)."""
    key = (connection.vendor, with_character)
    if key not in _STREAM_SQL:
        r, quote = _readers(), connection.ops.quote_name
        table = {name: quote(reader.model._meta.db_table) for name, reader in r.items()}
        command, seed = quote(Command._meta.db_table), quote(DiceSeed._meta.db_table)
        lock = " FOR UPDATE OF c" if connection.features.has_select_for_update_of else ""
        hidden, hidden_params = "", []
        if with_character:
            # campaign.visibility.hidden asks first whether the character has any hidden change at all; the
            # lock answers it in its own round trip (most characters have none: then no query).
            some = Character(id=_SOME_CHARACTER, campaign_id=_SOME_CAMPAIGN)
            hidden, hidden_params = _inline_constants(
                *projections.hidden_changes(some).order_by().values("pk").query.sql_with_params())
            hidden = f", EXISTS ({hidden})"
        _STREAM_SQL[key] = (
            f"SELECT {r['campaign'].sql()}, {r['membership'].sql()}, {r['user'].sql()}, cmd.id, cmd.body_hash, s.seed"
            # Whether the locked row is a newer version than this statement's snapshot saw (see
            # lock_stream): on PostgreSQL its xmin, which any update of the row changes, the head or not.
            + (f", c.xmin::text <> (SELECT old.xmin::text FROM {table['campaign']} old WHERE old.id = c.id)"
               if connection.vendor == "postgresql" else
               f", c.last_seq <> (SELECT old.last_seq FROM {table['campaign']} old WHERE old.id = c.id)")
            + (f", {r['character'].sql()}, {r['projection'].sql()}, owner.{quote('username')}{hidden}"
               if with_character else "")
            + f" FROM {table['campaign']} c "
            # The membership as it stands now: a socket opened before a removal, a role change or
            # a deactivation acts with today's rights or not at all.
            f"LEFT JOIN ({table['membership']} m JOIN {table['user']} u ON u.id = m.user_id AND u.is_active) "
            "ON m.id = %s AND m.campaign_id = c.id "
            f"LEFT JOIN {command} cmd ON cmd.campaign_id = c.id AND cmd.actor_id = %s AND cmd.client_id = %s "
            f"LEFT JOIN {seed} s ON s.campaign_id = c.id AND s.session = c.current_session "
            + (f"LEFT JOIN ({table['character']} ch LEFT JOIN {table['projection']} p ON p.character_id = ch.id) "
               f"ON ch.id = %s AND ch.campaign_id = c.id LEFT JOIN {table['user']} owner ON owner.id = ch.owner_id "
               if with_character else "")
            + f"WHERE c.id = %s{lock}", list(hidden_params))
    return _STREAM_SQL[key]


# Words of our own the lock's query compares with, written into its text: PostgreSQL plans the
# prepared lock once per connection (see _cursor), and only a constant "not public" lets that plan
# use the hidden events' partial index (campaign_event_hidden_by_camp).
_CONSTANTS = frozenset({VISIBILITY_PUBLIC, *projections.NO_HIDDEN_CHANGE})


def _inline_constants(sql: str, params) -> tuple[str, list]:
    """``sql`` with the parameters that are one of :data:`_CONSTANTS` written in as literals."""
    parts = sql.split("%s")
    assert len(parts) == len(params) + 1 and "%%" not in sql, sql
    text, kept = [parts[0]], []
    for value, part in zip(params, parts[1:]):
        if isinstance(value, str) and value in _CONSTANTS:
            assert value.isascii() and value.replace("_", "").isalnum(), value  # nothing to quote
            text.append(f"'{value}'")
        else:
            text.append("%s")
            kept.append(value)
        text.append(part)
    return "".join(text), kept


def _with_ids(value, campaign_id: int, character_id: int):
    """A parameter of the hidden-changes test with the command's ids in place of the stand-ins.

    An id may be a parameter of its own or part of one: SQLite's test for a key of ``sides``
    is a JSON path holding the id (``$."sides"."12"``), PostgreSQL's the key alone (``"12"``)."""
    ids = {_SOME_CAMPAIGN: campaign_id, _SOME_CHARACTER: character_id}
    if isinstance(value, str):  # in one pass: an id given may look like the other stand-in
        return _STAND_INS.sub(lambda m: str(ids[int(m[0])]), value)
    if isinstance(value, int) and not isinstance(value, bool):
        return ids.get(value, value)
    return value


_STAND_INS = re.compile("|".join(re.escape(str(n)) for n in (_SOME_CAMPAIGN, _SOME_CHARACTER)))


def lock_stream(membership: Membership, client_id: str, character_id: int | None = None) -> Stream:
    """Lock the campaign's stream row (as :func:`lock_campaign`) and read, in the same round
    trip, what a command needs under that lock: the membership now, whether ``client_id``
    was used before, the session's dice seed, the character it names and whether that
    character has any hidden change (set on it as ``any_hidden_changes``, for campaign.visibility.hidden and
    campaign.sheets), and its owner's name (``owner_name``, for campaign.sheets).

    On PostgreSQL a statement that waited for the lock reads the locked row as the command it
    waited for left it, but every other row as it stood when the statement began (READ
    COMMITTED): the sheet, the hidden events, an earlier use of the id would be from before that
    command. Then the locked row is a newer version than the one the statement's snapshot saw,
    and the query runs again: with the lock held, it waits for nothing and sees everything
    committed. (A holder of the lock that changes what a command reads without appending, such
    as ``projections.rebuild``, updates the row too, so that a command that waited for it notices.)"""
    assert transaction.get_connection().in_atomic_block, "lock_stream() needs a transaction"
    r = _readers()
    with_character = character_id is not None
    sql, hidden_params = _stream_sql(with_character)
    if with_character:
        hidden_params = [_with_ids(value, membership.campaign_id, character_id) for value in hidden_params]
    params = [*hidden_params, membership.pk, membership.user_id, client_id,
              *([character_id] if with_character else []), membership.campaign_id]
    with _cursor() as cursor:
        cursor.execute(sql, params)
        row = cursor.fetchone()
        moved = len(r["campaign"]) + len(r["membership"]) + len(r["user"]) + 3
        if row is not None and row[moved]:
            cursor.execute(sql, params)  # it waited behind another holder of the lock: read it all again
            row = cursor.fetchone()
    if row is None:
        raise Campaign.DoesNotExist(f"campaign {membership.campaign_id}")
    parts, at = {}, 0
    for name in ("campaign", "membership", "user"):
        parts[name] = row[at:at + len(r[name])]
        at += len(r[name])
    command_id, body_hash, seed = row[at:at + 3]
    at += 4  # and whether the locked row had moved
    campaign = r["campaign"].build(parts["campaign"])
    current = None
    if parts["membership"][0] is not None:
        current = r["membership"].build(parts["membership"])
        current.user = r["user"].build(parts["user"])
        current.campaign = campaign
    character = None
    if with_character and row[at] is not None:
        character = r["character"].build(row[at:at + len(r["character"])])
        character.campaign = campaign
        at += len(r["character"])
        if row[at] is not None:
            character.projection = r["projection"].build(row[at:at + len(r["projection"])])
        character.owner_name = row[-2]
        character.any_hidden_changes = bool(row[-1])
    return Stream(campaign, current, (command_id, body_hash) if command_id is not None else None, seed, character)


class ChainBroken(ValueError):
    """An event given to :func:`append` ready-made (an imported export's line) that is not
    exactly the next event of the log: the message names its seq and what is wrong."""


def record(campaign: Campaign, entries: Iterable[Draft | Event], *, actor=None,
           command: Command | None = None) -> list[Event]:
    """The one way into a log: append ``entries`` and fold them into the projections.
    Returns the stored events; the caller rings the table's doorbell with them
    (``campaign.publish.publish_on_commit``) if a table may have the campaign open.

    Call inside ``atomic()`` on the row :func:`lock_campaign` (or :func:`lock_stream`)
    returned. ``command``, if given, is an unsaved :class:`Command` stored with the
    events (its unique constraint is what makes a client id act once).

    The events are folded in memory first (``projections.project``), so the command
    row, the events, the stream head and the projection rows (and snapshots) go in
    with **one statement** on PostgreSQL: a command costs the log one round trip. A
    void is folded on its own, after the events are stored (it replays its
    character from the log as it stood at the void), so any run of entries folds
    exactly as if each had been recorded by itself."""
    events = _chain(campaign, entries, actor, command)
    roster.apply(campaign, events)  # the memberships and characters they change (rarely any)
    projected = projections.project(campaign, events)  # None when a void is among them
    _write(campaign, events, command, projected)
    if projected is None:
        for run in _runs_around_voids(events):
            projections.apply(campaign, run)
    return events


def _runs_around_voids(events: list[Event]) -> list[list[Event]]:
    runs, run = [], []
    for event in events:
        if event.type == projections.VOID:
            runs += [run, [event]] if run else [[event]]
            run = []
        else:
            run.append(event)
    return runs + [run] if run else runs


def append(campaign: Campaign, entries: Iterable[Draft | Event], *, actor=None,
           command: Command | None = None) -> list[Event]:
    """Chain ``entries`` onto a locked campaign's log and store them, without folding them
    into the projections; return them, stored. Most callers want :func:`record`."""
    events = _chain(campaign, entries, actor, command)
    _write(campaign, events, command, None)
    return events


def _chain(campaign: Campaign, entries: Iterable[Draft | Event], actor, command: Command | None) -> list[Event]:
    """Chain ``entries`` onto the locked campaign's log, in memory (:func:`_write` stores them).

    A :class:`Draft` becomes the next event: its seq, the stream's session and
    scene, its link and hash are stamped here. An :class:`Event` (an imported
    export's line) must already be the next event, stamps, link and hash
    included, or :class:`ChainBroken` names what is wrong. Either way the
    stream's counters move the same way (``campaign``, the locked row, is
    updated in place: ``last_seq``, ``head_hash``, the session and scene counters).
    """
    assert transaction.get_connection().in_atomic_block, "append() needs a transaction"
    stored = []
    now = timezone.now()
    for entry in entries:
        roster.open_session_or_scene(campaign, entry.type)
        if isinstance(entry, Draft):
            event = _next_event(campaign, entry, actor, command, now)
        else:
            event = _check_next(campaign, entry)
        campaign.last_seq = event.seq
        campaign.head_hash = event.hash
        roster.close_session_or_scene(campaign, entry.type)
        roster.fold_campaign(campaign, event)
        stored.append(event)
    return stored


def _next_event(campaign: Campaign, draft: Draft, actor, command: Command | None, now) -> Event:
    payload = canonical_json(dict(draft.payload))
    event = Event(
        campaign=campaign,
        seq=campaign.last_seq + 1,
        type=draft.type,
        version=draft.version,
        payload=json.loads(payload),  # plain JSON, exactly as stored
        actor=actor,
        character=draft.character,
        session=campaign.current_session,
        scene=campaign.current_scene,
        visibility=draft.visibility,
        command=command,
        created_at=now,
        prev_hash=campaign.head_hash,
        format=CURRENT_FORMAT,
    )
    fields = hashed_fields(event)
    event.body_digest = body_digest(event_body(fields))  # kept for serialize_event
    event.hash = event_hash(event.prev_hash, fields, event.format, event.body_digest)
    event.stored_payload = payload.decode("utf-8")  # the JSON text _write stores
    return event


def _check_next(campaign: Campaign, event: Event) -> Event:
    """A ready-made event, checked to be exactly the one :func:`_next_event` would link next."""
    seq = event.seq
    if event.campaign_id != campaign.id:
        raise ChainBroken(f"Event {seq} belongs to another campaign.")
    if seq != campaign.last_seq + 1:
        raise ChainBroken(f"Event {campaign.last_seq + 1} is missing (the next one given is seq {seq}).")
    if event.prev_hash != campaign.head_hash:
        raise ChainBroken(f"Event {seq}'s prev_hash does not match the previous event's hash.")
    if (event.session, event.scene) != (campaign.current_session, campaign.current_scene):
        raise ChainBroken(f"Event {seq} says session {event.session}, scene {event.scene}, but the log before it "
                          f"has session {campaign.current_session}, scene {campaign.current_scene} running.")
    try:
        recomputed = event_hash(event.prev_hash, hashed_fields(event), event.format)
    except (TypeError, ValueError, OverflowError, RecursionError):
        raise ChainBroken(f"Event {seq}'s payload is not plain JSON.")
    if recomputed != event.hash:
        raise ChainBroken(f"Event {seq}'s hash does not match its contents: it was changed after it was "
                          "written (or chained in a campaign with another id).")
    return event


EVENT_COLUMNS = ("campaign_id", "seq", "type", "version", "payload", "actor_id", "character_id", "session", "scene",
                 "visibility", "command_id", "created_at", "prev_hash", "hash", "format")
# The stream head and the campaign's columns the events fold (campaign.roster), in one UPDATE.
STREAM_COLUMNS = roster.STREAM_COLUMNS + roster.CAMPAIGN_COLUMNS
ROWS_PER_STATEMENT = 500  # SQLite binds at most 32 766 values per statement


def _write(campaign: Campaign, events: list[Event], command: Command | None, projected) -> None:
    """Store a command's row, its events, the stream head and the projection rows.

    On PostgreSQL one statement (a data-modifying ``WITH``: each part runs
    once whatever the final ``SELECT`` reads, and all of it commits or none,
    with the transaction); SQLite, in process, runs the same parts in turn.
    """
    if not events:
        return
    ops, quote = connection.ops, connection.ops.quote_name
    pg = connection.vendor == "postgresql"
    as_json = "%s::jsonb" if pg else "%s"
    parts: list[tuple[str, str, list]] = []  # (name, sql, params)
    # A command stored earlier (a witnessed roll's resolution, campaign/actions/commands.py) is named
    # by its id; a new one goes in with its events.
    stored = command is not None and command.pk is not None
    if command is not None and not stored:
        parts.append(("cmd", f"INSERT INTO {quote(Command._meta.db_table)} "
                             "(campaign_id, actor_id, client_id, body_hash, created_at) "
                             "VALUES (%s, %s, %s, %s, %s) RETURNING id",
                      [campaign.id, command.actor_id, command.client_id, command.body_hash,
                       ops.adapt_datetimefield_value(command.created_at or timezone.now())]))
    # A command's events name its row: by a subquery of the same statement, or (SQLite) by
    # the id the insert before returned, filled into the slot.
    command_sql = "NULL" if command is None else "%s" if stored or not pg else "(SELECT id FROM cmd)"
    row_sql = "(" + ", ".join(as_json if c == "payload" else command_sql if c == "command_id" else "%s"
                              for c in EVENT_COLUMNS) + ")"
    per_statement = max(1, len(events)) if pg else ROWS_PER_STATEMENT
    for start in range(0, len(events), per_statement):
        batch = events[start:start + per_statement]
        params = []
        for e in batch:
            params += [e.campaign_id, e.seq, e.type, e.version, _payload_text(e), e.actor_id, e.character_id,
                       e.session, e.scene, e.visibility,
                       *([command.pk if stored else _SLOT] if command_sql == "%s" else []),
                       ops.adapt_datetimefield_value(e.created_at), e.prev_hash, e.hash, e.format]
        parts.append((f"ev{start}", f"INSERT INTO {quote(Event._meta.db_table)} ({', '.join(EVENT_COLUMNS)}) "
                                    f"VALUES {', '.join([row_sql] * len(batch))} RETURNING id, seq", params))
    parts.append(("head", f"UPDATE {quote(Campaign._meta.db_table)} SET "
                          + ", ".join(f"{c} = %s" for c in STREAM_COLUMNS) + " WHERE id = %s",
                  [getattr(campaign, c) for c in STREAM_COLUMNS] + [campaign.id]))
    if projected is not None:
        parts += projections.statements(projected, connection.vendor)
    ids: dict[int, int] = {}
    command_id = None
    with _cursor() as cursor:
        if pg:
            cursor.execute("WITH " + ", ".join(f"{name} AS ({sql})" for name, sql, _ in parts)
                           + f" SELECT {'(SELECT id FROM cmd)' if command is not None and not stored else 'NULL'}, id, seq FROM ev0",
                           [value for _, _, params in parts for value in params])
            rows = cursor.fetchall()
            command_id = rows[0][0] if rows else None
            ids = {seq: pk for _, pk, seq in rows}
        else:
            for name, sql, params in parts:
                cursor.execute(sql, [command_id if value is _SLOT else value for value in params])
                if name == "cmd":
                    command_id = cursor.fetchone()[0]
                elif name.startswith("ev"):
                    ids.update({seq: pk for pk, seq in cursor.fetchall()})
    if stored:
        command_id = command.pk
    elif command is not None:
        command.id = command_id
        command._state.adding = False
    for e in events:
        e.id = ids[e.seq]
        e.command_id = command_id
        e._state.adding = False


_SLOT = object()  # where the command's id goes once SQLite returned it


def _payload_text(event: Event) -> str:
    """The payload as the JSON text to store: the one hashed for a new event, an imported one's own."""
    text = getattr(event, "stored_payload", None)
    return text if text is not None else canonical_json(event.payload).decode("utf-8")
