"""Character projections: state folded from the log through the rules' ``evolve``.

One fold (:func:`fold`) serves the live update after each append, the full
rebuild, and "what did the sheet say at event N" (:func:`state_as_of`).
Voided events are skipped: a void changes which events count, so it triggers
a replay of the affected character.

Snapshots (``CharacterSnapshot``, about every ``PROJECTION_SNAPSHOT_EVERY``
events) make any replay of one character start near its end, so a sheet as of
any seq, or folded without a viewer's hidden rolls, costs about that many
events instead of the whole history. A snapshot at seq k is the state as of k:
it counts the voids appended up to k and skips the caller's skip set up to k.
That is a fact of the log's first k events, so it never goes stale; a fold
to seq s may start from it unless a void appended after k (and up to s)
voids an event at or before k. Snapshots are written by the append (when a
character's state enters a new block of the log), by any replay that passes
a block without one (so a skip set gets its own as it is asked for) and by
``rebuild_projections``, which drops and rewrites them all.
"""

from __future__ import annotations

import bisect
import hashlib
import json
from typing import Iterable, NamedTuple

from django.conf import settings
from django.db import DatabaseError, connection, transaction
from django.db.models import F, Q

# The fold itself is pure and shared with the members' standalone verifier (rules/replay.py).
from rules.replay import (  # noqa: F401  (re-exported: the server's modules read them here)
    BUNDLE,
    CAMPAIGN_WIDE,
    SIDES,
    VOID,
    rules_events,
    sides_of,
)
from rules.replay import fold_one as _fold_one  # (a module global: tests count the folds through it)
from rules.conditions import TURN_EVENTS, left_alone_by_turns

from .models import VISIBILITY_PUBLIC, Campaign, Character, CharacterProjection, CharacterSnapshot, Event

class Row(NamedTuple):
    """What the fold reads of an event (cheaper to load than a model instance)."""

    seq: int
    type: str
    version: int
    payload: dict
    character_id: int | None


ROW_FIELDS = Row._fields


def concerning(character_id: int) -> Q:
    """The events a character's state is folded from, besides campaign-wide ones: its own and
    the ones it is a side of."""
    return Q(character_id=character_id) | Q(**{f"payload__{SIDES}__has_key": str(character_id)})


# Event types that never change a character's state (evolve passes them through).
STATELESS = frozenset({"roll"})
# What no member's view of a character turns on: a plain roll, a void (it only takes back its
# target, whose own visibility says who saw it; a void is read by exactly its target's readers), and
# what the players are shown of an NPC (``npc_shown``: the GM's note when she hides it, no state; as a
# hidden change, an NPC hidden once and shown again kept a sheet "holding what she may not see"), and a
# side's sealed choice in a fight (it changes no state: the round reads it from the log, campaign/actions/fights.py).
NO_HIDDEN_CHANGE = STATELESS | {VOID, "npc_shown", "fight_choice_made"}


def hidden_changes(character: Character):
    """The events that may change ``character``'s state and that not every member sees (not
    ``public``; revealed or voided ones included): what campaign.visibility.hidden asks about first."""
    return (Event.objects.filter(concerning(character.id), campaign_id=character.campaign_id)
            .exclude(visibility=VISIBILITY_PUBLIC).exclude(type__in=NO_HIDDEN_CHANGE))


def fold(campaign: Campaign, events: Iterable[Event], states: dict[int, dict], seqs: dict[int, int],
         voided: set[int]) -> None:
    """Apply ``events`` (in seq order) to ``states``/``seqs`` in place, keyed by character id.

    The fold owns ``states`` and changes them in place (``rules.apply``): a
    copy per event was most of a rebuild's time. Callers pass states nobody
    else holds (fresh from the database, from ``initial_state`` or copied).
    """
    rules = campaign.rules
    for event in events:
        _fold_one(rules, event, states, seqs, voided)


def plain_json(state: dict | None) -> dict | None:
    """The state exactly as a JSON column gives it back (tuples become lists), copied."""
    return json.loads(json.dumps(state))


def snapshot_every() -> int:
    return max(1, settings.PROJECTION_SNAPSHOT_EVERY)


def voided_seqs(campaign: Campaign, upto: int | None = None) -> set[int]:
    return {target for _, target, _ in voids(campaign, upto)}


def voids(campaign: Campaign, upto: int | None = None) -> list[tuple[int, int, int | None]]:
    """``(void seq, voided seq, character id)`` of every void up to ``upto``."""
    qs = Event.objects.filter(campaign=campaign, type=VOID)
    if upto is not None:
        qs = qs.filter(seq__lte=upto)
    return [(seq, payload["seq"], character_id) for seq, payload, character_id
            in qs.values_list("seq", "payload", "character_id")]


def _by_character(all_voids) -> dict[int | None, list[tuple[int, int]]]:
    """``{character id: [(void seq, voided seq), ...]}``: a void only ever concerns its character."""
    out: dict[int | None, list[tuple[int, int]]] = {}
    for void_seq, target, character_id in all_voids:
        out.setdefault(character_id, []).append((void_seq, target))
    return out


def _unusable(voids_of_character: list[tuple[int, int]], seq: int) -> bool:
    """A snapshot at ``seq`` can't start a fold past a void that voids an event at or before it."""
    return any(target <= seq < void_seq for void_seq, target in voids_of_character)


class _SkipKeys:
    """``CharacterSnapshot.skipped`` for each seq: which members of a skip set lie up to it."""

    def __init__(self, skip: Iterable[int]):
        self.sorted = sorted(skip)
        self.keys: dict[int, str] = {0: ""}

    def at(self, seq: int) -> str:
        count = bisect.bisect_right(self.sorted, seq)
        if count not in self.keys:
            members = ",".join(map(str, self.sorted[:count]))
            self.keys[count] = hashlib.sha256(members.encode()).hexdigest()[:32]
        return self.keys[count]


def _start(character_id: int, upto: int, voids_of_character, keys: _SkipKeys) -> CharacterSnapshot | None:
    """The latest snapshot a fold of this character to ``upto`` may start from.

    Nearly always the latest one below ``upto``: read with its state in one query;
    otherwise page back through the candidates (without their states) to one that is."""
    latest = CharacterSnapshot.objects.filter(character_id=character_id, seq__lte=upto).order_by("-seq").first()
    if latest is None:
        return None
    if latest.skipped == keys.at(latest.seq) and not _unusable(voids_of_character, latest.seq):
        return latest
    below = latest.seq
    while True:
        page = list(CharacterSnapshot.objects.filter(character_id=character_id, seq__lt=below)
                    .order_by("-seq").values_list("pk", "seq", "skipped")[:100])
        for pk, seq, skipped in page:
            if skipped == keys.at(seq) and not _unusable(voids_of_character, seq):
                return CharacterSnapshot.objects.get(pk=pk)
        if len(page) < 100:
            return None
        below = page[-1][1]


def _save_snapshots(snapshots: list[CharacterSnapshot]) -> None:
    """Store snapshots a replay passed. Two replays may race to store the same
    one (equal by construction): the unique constraint keeps one. A failure only
    costs a later replay, so it never fails the read or command around it."""
    if not snapshots:
        return
    try:
        with transaction.atomic():
            CharacterSnapshot.objects.bulk_create(snapshots, ignore_conflicts=True, batch_size=500)
    except DatabaseError:
        pass


def _head_and_voids(campaign: Campaign, upto: int | None) -> tuple[int, list[tuple[int, int, int | None]]]:
    """The committed head, capped at ``upto``, and every void up to it (as :func:`voids`), in one query.

    The head is read, not taken from the (possibly stale) object: every event up
    to the committed head is committed, so the voids read with it are all of
    them, and an event appended meanwhile (past the head) is not folded without
    its void."""
    quote = connection.ops.quote_name
    event, stream = quote(Event._meta.db_table), quote(Campaign._meta.db_table)
    cap = "c.last_seq" if upto is None else "CASE WHEN c.last_seq < %s THEN c.last_seq ELSE %s END"
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT {cap}, e.seq, e.payload, e.character_id FROM {stream} c LEFT JOIN {event} e "
            f"ON e.campaign_id = c.id AND e.type = %s AND e.seq <= {cap} WHERE c.id = %s ORDER BY e.seq",
            ([] if upto is None else [upto, upto]) + [VOID] + ([] if upto is None else [upto, upto]) + [campaign.pk])
        rows = cursor.fetchall()
    found = []
    for _, seq, payload, character_id in rows:
        if seq is not None:
            found.append((seq, (json.loads(payload) if isinstance(payload, (str, bytes)) else payload)["seq"],
                          character_id))
    return rows[0][0], found


def replay(campaign: Campaign, upto: int | None = None, character_id: int | None = None,
           skip: frozenset[int] | set[int] = frozenset(), snapshots: bool = True) -> tuple[dict, dict]:
    """Fold a campaign's log (up to seq ``upto``), skipping the seqs in ``skip``.

    Returns ``(states, seqs)`` keyed by character id. With ``character_id``,
    only events that can touch that character are read, from its latest usable
    snapshot on. With ``snapshots=False`` the fold starts from seq 1 and
    stores nothing (how a rebuild checks the projections).
    """
    upto, all_voids = _head_and_voids(campaign, upto)
    voided = {target for _, target, _ in all_voids} | set(skip)
    by_character = _by_character(all_voids)
    keys = _SkipKeys(skip)
    states: dict[int, dict] = {}
    seqs: dict[int, int] = {}
    qs = Event.objects.filter(campaign=campaign, seq__lte=upto)
    rows = None
    if character_id is not None:
        qs = qs.filter(concerning(character_id) | Q(type__in=CAMPAIGN_WIDE))
        start = _start(character_id, upto, by_character.get(character_id, []), keys) if snapshots else None
        if start is not None:
            states[character_id], seqs[character_id] = start.state, start.seq
            # About one block of rows: one round trip, not a server-side cursor's three.
            rows = [Row(*values) for values in qs.filter(seq__gt=start.seq).order_by("seq").values_list(*ROW_FIELDS)]
    captured = fold_with_snapshots(campaign, _rows(qs) if rows is None else rows, states, seqs, voided,
                                   by_character, keys)
    if snapshots:
        _save_snapshots(captured)
    if character_id is not None:
        states = {k: v for k, v in states.items() if k == character_id}
    return states, seqs


def _rows(qs) -> Iterable[Row]:
    """Every row of ``qs`` in seq order, a chunk at a time (a whole log need not fit in memory).

    Read with a plain cursor (server-side on PostgreSQL): the ORM's per-row
    converters were a fifth of a rebuild's Python. JSON columns come as text
    here, decoded once."""
    sql, params = qs.order_by("seq").values_list(*ROW_FIELDS).query.sql_with_params()
    loads = json.loads
    with connection.chunked_cursor() as cursor:
        cursor.execute(sql, params)
        while chunk := cursor.fetchmany(5000):
            for seq, kind, version, payload, character_id in chunk:
                yield Row(seq, kind, version, loads(payload) if isinstance(payload, (str, bytes)) else payload,
                          character_id)


def fold_with_snapshots(campaign: Campaign, rows: Iterable[Row], states: dict[int, dict], seqs: dict[int, int],
                        voided: set[int], voids_by_character: dict, keys: _SkipKeys) -> list[CharacterSnapshot]:
    """:func:`fold`, and a snapshot of each character whenever its state enters
    a new block of ``snapshot_every()`` seqs (unless a later void forbids it)."""
    rules, every = campaign.rules, snapshot_every()
    block = {cid: seq // every for cid, seq in seqs.items()}
    captured = []
    for row in rows:
        sides = sides_of(row.payload)
        _fold_one(rules, row, states, seqs, voided, sides)
        now = row.seq // every
        if row.type in CAMPAIGN_WIDE:
            concerned = states
        elif not sides:
            # Nearly every event: one character. Most of them fall in a block it has a snapshot of.
            if block.get(row.character_id, -1) >= now:
                continue
            concerned = (row.character_id,)
        else:
            concerned = (row.character_id, *sides)
        for cid in concerned:
            if seqs.get(cid) != row.seq or block.get(cid, -1) >= now:
                continue
            if not _unusable(voids_by_character.get(cid, []), row.seq):
                captured.append(CharacterSnapshot(character_id=cid, seq=row.seq, skipped=keys.at(row.seq),
                                                  state=plain_json(states[cid])))
                block[cid] = now
    return captured


def state_as_of(character: Character, seq: int, skip: frozenset[int] | set[int] = frozenset()) -> dict | None:
    """The character's state as it stood right after event ``seq`` (None before it existed).

    ``skip``: seqs to leave out, as if never appended (a viewer's unseen hidden
    rolls). Costs about ``PROJECTION_SNAPSHOT_EVERY`` events, not the history.
    """
    states, _ = replay(character.campaign, upto=seq, character_id=character.id, skip=skip)
    return states.get(character.id)


class Projected(NamedTuple):
    """What events do to the projections: rows to store with them (``campaign.eventlog.record``)."""

    rows: list[tuple[int, str, int]]  # (character id, state as JSON text, last seq)
    snapshots: list[tuple[int, int, str]]  # (character id, seq, state as JSON text)
    # Characters whose state the events left as it was (an encounter's turn, no conditions): only their
    # last seq moves, by seq (unless a snapshot is due: then in ``rows``). ``Event.unchanged`` names every
    # such character, for the sheets pushed after commit.
    moved: dict[int, list[int]] = {}


NOTHING = Projected([], [])


def project(campaign: Campaign, events: list[Event]) -> Projected | None:
    """Fold ``events`` (chained, stored or about to be) into their characters' projections, in memory.

    Returns the rows that bring the projections up to date, for the statement that
    stores the events, or None when a void is among them: a void changes which
    events count, so its character is replayed from the log once the void is
    stored (:func:`apply`).
    """
    if any(e.type == VOID for e in events):
        return None
    touched = {e.character_id for e in events if e.character_id} | {cid for e in events for cid in sides_of(e.payload)}
    wide = any(e.type in CAMPAIGN_WIDE for e in events)
    if not touched and not wide:
        return NOTHING
    created = {e.character_id for e in events if e.type == "character_created"}
    # A command read its character's projection under the same lock
    # (campaign.eventlog.lock_stream): fold into that row instead of reading it again.
    projections = {} if wide else {
        e.character_id: e.character.projection for e in events
        if e.character_id and e.character_id not in created and Event.character.is_cached(e)
        and Character.projection.is_cached(e.character)}
    missing = touched - set(projections) - created
    if wide or missing:
        qs = CharacterProjection.objects.filter(character__campaign=campaign)
        if not wide:
            qs = qs.filter(character_id__in=missing)
        projections.update({p.character_id: p for p in qs})
    states = {cid: p.state for cid, p in projections.items()}
    seqs = {cid: p.last_seq for cid, p in projections.items()}
    # An encounter's turn changes only the states holding conditions (rules/conditions.py): the others
    # keep their stored state, their last seq alone moves, and no sheet of theirs is pushed again.
    alone = {cid for cid, state in states.items() if left_alone_by_turns(state)} \
        if all(e.type in TURN_EVENTS for e in events) else set()
    fold(campaign, events, states, seqs, set())
    every = snapshot_every()
    rows, snapshots, moved = [], [], {}
    for character_id, state in states.items():
        projection = projections.get(character_id)
        before = projection.last_seq if projection is not None else -1
        if seqs[character_id] == before:
            continue
        if character_id in alone and seqs[character_id] // every == before // every:
            moved.setdefault(seqs[character_id], []).append(character_id)
            projection.last_seq = seqs[character_id]
            continue
        text = json.dumps(state)
        rows.append((character_id, text, seqs[character_id]))
        if seqs[character_id] // every > before // every:
            # The projection is the state as of its last_seq: a void of this
            # character's events would have moved last_seq past it.
            snapshots.append((character_id, seqs[character_id], text))
        if projection is not None:
            projection.state, projection.last_seq = state, seqs[character_id]
    # Written whole or not (a new snapshot block), their states are as they were: no sheet to push.
    for event in events:
        event.unchanged = frozenset(alone)
    return Projected(rows, snapshots, moved)


def statements(projected: Projected, vendor: str) -> list[tuple[str, str, list]]:
    """``projected`` as ``(name, sql, params)`` parts: an upsert of the projection rows and an
    insert of the snapshots (equal by construction to any a replay stored first: the first stays)."""
    quote = connection.ops.quote_name
    as_json = "%s::jsonb" if vendor == "postgresql" else "%s"
    parts = []
    if projected.rows:
        parts.append(("proj", f"INSERT INTO {quote(CharacterProjection._meta.db_table)} (character_id, state, last_seq) "
                              "VALUES " + ", ".join([f"(%s, {as_json}, %s)"] * len(projected.rows))
                              + " ON CONFLICT (character_id) DO UPDATE SET state = excluded.state, "
                                "last_seq = excluded.last_seq",
                      [value for row in projected.rows for value in row]))
    for seq, ids in projected.moved.items():
        parts.append((f"moved{seq}", f"UPDATE {quote(CharacterProjection._meta.db_table)} SET last_seq = %s "
                               f"WHERE character_id IN ({', '.join(['%s'] * len(ids))})", [seq, *ids]))
    if projected.snapshots:
        parts.append(("snap", f"INSERT INTO {quote(CharacterSnapshot._meta.db_table)} (character_id, seq, skipped, "
                              "state) VALUES " + ", ".join([f"(%s, %s, '', {as_json})"] * len(projected.snapshots))
                              + " ON CONFLICT DO NOTHING",
                      [value for row in projected.snapshots for value in row]))
    return parts


def apply(campaign: Campaign, events: list[Event]) -> None:
    """Fold a run of events already stored: a void alone, or a run without one (``campaign.eventlog.record``
    when a void is among the events it records).

    A void replays the one character it concerns (a void event carries the voided
    event's character) from its last snapshot before the voided event, up to the
    void, not the whole campaign, inside the append lock; any other run folds
    onto the projections as they then stand."""
    voids_ = [e for e in events if e.type == VOID]
    if not voids_:
        with connection.cursor() as cursor:
            for _, sql, params in statements(project(campaign, events), connection.vendor):
                cursor.execute(sql, params)
        return
    upto = max(e.seq for e in voids_)
    for character_id in {e.character_id for e in voids_ if e.character_id}:
        states, seqs = replay(campaign, upto=upto, character_id=character_id)
        CharacterProjection.objects.filter(character_id=character_id).update(
            state=plain_json(states[character_id]), last_seq=seqs[character_id])


def rebuild(campaign: Campaign, check: bool = False) -> list[str]:
    """Rebuild every projection (and every snapshot) of ``campaign`` from its log.

    Returns the names of characters whose stored projection or snapshots
    differed from the rebuilt ones. With ``check=True`` nothing is written.
    """
    head, all_voids = _head_and_voids(campaign, None)
    by_character = _by_character(all_voids)
    states: dict[int, dict] = {}
    seqs: dict[int, int] = {}
    captured = fold_with_snapshots(campaign, _rows(Event.objects.filter(campaign=campaign, seq__lte=head)),
                                   states, seqs, {target for _, target, _ in all_voids}, by_character, _SkipKeys(()))
    states = {cid: plain_json(state) for cid, state in states.items()}
    stored = {p.character_id: p for p in CharacterProjection.objects.filter(character__campaign=campaign)}
    names = dict(Character.objects.filter(campaign=campaign).values_list("id", "name"))
    snapshots = CharacterSnapshot.objects.filter(character__campaign=campaign)
    # Every stored snapshot of the full log must be one the rebuild passes, with the same state.
    rebuilt = {(s.character_id, s.seq): s.state for s in captured}
    stale = {cid for cid, seq, state in snapshots.filter(skipped="").values_list("character_id", "seq", "state")
             if (cid, seq) in rebuilt and rebuilt[cid, seq] != state}
    differing = []
    for character_id in sorted(set(states) | set(stored)):
        projection = stored.get(character_id)
        state = states.get(character_id)
        same = projection is not None and state is not None and projection.state == state
        if same and projection.last_seq == seqs.get(character_id) and character_id not in stale:
            continue
        differing.append(f"{names.get(character_id, '?')} (id {character_id})")
        if check:
            continue
        if state is None:
            projection.state, projection.last_seq = {}, 0
            projection.save(update_fields=["state", "last_seq"])
        elif projection is None:
            CharacterProjection.objects.create(character_id=character_id, state=state, last_seq=seqs[character_id])
        else:
            projection.state, projection.last_seq = state, seqs[character_id]
            projection.save(update_fields=["state", "last_seq"])
    if not check:
        # A new version of the locked stream row, the head unchanged: a command that waited for
        # this lock reads the sheets again instead of folding onto the ones it read before
        # (campaign.eventlog.lock_stream), which would write the old sheet back.
        Campaign.objects.filter(pk=campaign.pk).update(last_seq=F("last_seq"))
        # A cache of the log: whatever the rules' code was when they were
        # written, they are rewritten from the log as it folds today.
        snapshots.delete()
        # As the append writes them (statements): a multi-row INSERT of JSON text. bulk_create
        # escaped every state into an array literal, a tenth of a rebuild.
        rows = [(s.character_id, s.seq, json.dumps(s.state)) for s in captured]
        with connection.cursor() as cursor:
            for start in range(0, len(rows), 500):
                for _, sql, params in statements(Projected([], rows[start:start + 500]), connection.vendor):
                    cursor.execute(sql, params)
    return differing
