"""The campaign event log: the one record path, the hash chain, the one serializer.

Everything that enters a log goes through :func:`record` (a live command, a new
campaign or member, and ``import_log`` alike): :func:`append` chains and stores
the events and moves the stream's counters, then the characters' projections
fold them and, once the transaction commits, open tables hear of them. It must
be called inside ``transaction.atomic()`` with the campaign row locked by
:func:`lock_campaign`, which is what makes seq gap-free and commit-ordered.
Only ``campaign.actions.do_*`` functions and ``import_log`` call it.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from datetime import timezone as dt_timezone
from typing import Any, Iterable, Mapping

from django.db import transaction
from django.utils import timezone

from . import projections
from .broadcast import broadcast_on_commit
from .canonical import jcs
from .models import GENESIS_HASH, VISIBILITY_PUBLIC, Campaign, Character, Command, Event

# Hash formats (docs/event-log.md). Format 1 hashed the payload itself with
# Python's JSON encoding; format 2 hashes an RFC 8785 envelope holding the
# digest of the body, so a member can check a hidden event's link without its
# payload. Old events keep format 1 forever: the chain is never rewritten.
FORMAT_1 = 1
FORMAT_2 = 2
CURRENT_FORMAT = FORMAT_2


@dataclass(frozen=True)
class Draft:
    """An event about to be appended: what the rules decided plus who it concerns."""

    type: str
    payload: Mapping[str, Any] = field(default_factory=dict)
    version: int = 1
    character: Character | None = None
    visibility: str = VISIBILITY_PUBLIC


def canonical_json(value: Any) -> bytes:
    """Format 1's encoding (events stored before format 2): sorted keys, no spaces, UTF-8.

    Python's float formatting makes it hard to reproduce elsewhere, which is
    why new events use :func:`campaign.canonical.jcs`."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode(
        "utf-8"
    )


def timestamp(value) -> str:
    """Event timestamps as hashed and served: UTC ISO 8601 with microseconds."""
    return value.astimezone(dt_timezone.utc).isoformat(timespec="microseconds")


def hashed_fields(event: Event) -> dict:
    """Exactly the fields the chain covers (documented in docs/event-log.md)."""
    return {
        "campaign": event.campaign_id,
        "seq": event.seq,
        "type": event.type,
        "version": event.version,
        "payload": event.payload,
        "actor": event.actor_id,
        "character": event.character_id,
        "session": event.session,
        "scene": event.scene,
        "visibility": event.visibility,
        "created_at": timestamp(event.created_at),
    }


def event_body(fields: Mapping[str, Any]) -> dict:
    """What a format-2 event's ``body_digest`` covers: what happened, to whom."""
    return {"type": fields["type"], "version": fields["version"], "character": fields["character"],
            "payload": fields["payload"]}


def body_digest(body: Mapping[str, Any]) -> str:
    """SHA-256 (hex) of the JCS of an event body; a hidden event's commitment."""
    return hashlib.sha256(jcs(dict(body))).hexdigest()


def event_hash(prev_hash: str, fields: Mapping[str, Any], format: int = FORMAT_1) -> str:
    """SHA-256 over the previous hash and the encoding ``format`` prescribes for the fields.

    ``fields`` is :func:`hashed_fields`' dict; the format picks the encoder,
    so an event stored in format 1 verifies as it was made (upcasting without
    rewriting)."""
    digest = hashlib.sha256()
    digest.update(prev_hash.encode("ascii"))
    if format == FORMAT_1:
        digest.update(canonical_json(fields))
    elif format == FORMAT_2:
        envelope = {key: fields[key] for key in ("campaign", "seq", "actor", "session", "scene", "visibility",
                                                 "created_at")}
        digest.update(jcs({**envelope, "format": FORMAT_2, "body": body_digest(event_body(fields))}))
    else:
        raise ValueError(f"unknown event hash format {format!r}")
    return digest.hexdigest()


def lock_campaign(campaign_id: int) -> Campaign:
    """Lock and return the campaign's stream row. Call inside ``atomic()``.

    On PostgreSQL this is ``SELECT ... FOR UPDATE``: a second appender waits
    here until the first commits, so seq order is commit order. On SQLite the
    IMMEDIATE transaction already holds the database's single write lock.
    """
    return Campaign.objects.select_for_update().get(pk=campaign_id)


class ChainBroken(ValueError):
    """An event given to :func:`append` ready-made (an imported export's line) that is not
    exactly the next event of the log: the message names its seq and what is wrong."""


def record(campaign: Campaign, entries: Iterable[Draft | Event], *, actor=None, command: Command | None = None,
           broadcast: bool = True) -> list[Event]:
    """The one way into a log: append ``entries``, fold them into the projections, and
    ring the table's doorbell once the transaction commits. Returns the stored events.

    Call inside ``atomic()`` on the row :func:`lock_campaign` returned. A void is
    folded on its own (it replays its character from the log as it then stood), so any
    run of entries folds exactly as if each had been recorded by itself.
    ``broadcast=False`` is for a campaign no table can have open yet (an import)."""
    events = append(campaign, entries, actor=actor, command=command)
    for run in _runs_around_voids(events):
        projections.apply(campaign, run)
    if broadcast:
        broadcast_on_commit(campaign.id, events)
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
    """Chain ``entries`` onto a locked campaign's log and store them; return them, stored.

    A :class:`Draft` becomes the next event: its seq, the stream's session and
    scene, its link and hash are stamped here. An :class:`Event` (an imported
    export's line) must already be the next event, stamps, link and hash
    included, or :class:`ChainBroken` names what is wrong. Either way the
    stream's counters move the same way, and all rows go in with one INSERT and
    one UPDATE of the stream row (``campaign``, the locked row, is updated in
    place: ``last_seq``, ``head_hash``, the session and scene counters).
    Most callers want :func:`record`, which also folds and broadcasts.
    """
    assert transaction.get_connection().in_atomic_block, "append() needs a transaction"
    stored = []
    now = timezone.now()
    for entry in entries:
        _open_session_or_scene(campaign, entry)
        if isinstance(entry, Draft):
            event = _next_event(campaign, entry, actor, command, now)
        else:
            event = _check_next(campaign, entry)
        campaign.last_seq = event.seq
        campaign.head_hash = event.hash
        _close_session_or_scene(campaign, entry)
        stored.append(event)
    Event.objects.bulk_create(stored)  # one INSERT for all of a command's events
    Campaign.objects.filter(pk=campaign.pk).update(
        last_seq=campaign.last_seq,
        head_hash=campaign.head_hash,
        session_count=campaign.session_count,
        current_session=campaign.current_session,
        scene_count=campaign.scene_count,
        current_scene=campaign.current_scene,
    )
    return stored


def _next_event(campaign: Campaign, draft: Draft, actor, command: Command | None, now) -> Event:
    event = Event(
        campaign=campaign,
        seq=campaign.last_seq + 1,
        type=draft.type,
        version=draft.version,
        payload=json.loads(canonical_json(dict(draft.payload))),  # plain JSON, exactly as stored
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
    event.hash = event_hash(event.prev_hash, hashed_fields(event), event.format)
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


def _open_session_or_scene(campaign: Campaign, entry: Draft | Event) -> None:
    # A start event is stamped with the session/scene it opens...
    if entry.type == "session_started":
        campaign.session_count += 1
        campaign.current_session = campaign.session_count
    elif entry.type == "scene_started":
        campaign.scene_count += 1
        campaign.current_scene = campaign.scene_count


def _close_session_or_scene(campaign: Campaign, entry: Draft | Event) -> None:
    # ...and an end event with the one it closes; what follows carries none.
    if entry.type == "session_ended":
        campaign.current_session = None
    elif entry.type == "scene_ended":
        campaign.current_scene = None


@dataclass
class ChainReport:
    ok: bool
    count: int
    bad_seq: int | None = None
    reason: str = ""


def verify_chain(campaign: Campaign, batch: int = 2000) -> ChainReport:
    """Check every link and hash of a campaign's log, in seq order.

    Names the first seq whose seq, link or hash is wrong.
    """
    prev_hash = GENESIS_HASH
    expected_seq = 1
    count = 0
    events = Event.objects.filter(campaign=campaign).order_by("seq")
    for event in events.iterator(chunk_size=batch):
        if event.seq != expected_seq:
            return ChainReport(False, count, expected_seq, f"seq {expected_seq} is missing (next stored is {event.seq})")
        if event.prev_hash != prev_hash:
            return ChainReport(False, count, event.seq, "its prev_hash does not match the previous event's hash")
        if event_hash(prev_hash, hashed_fields(event), event.format) != event.hash:
            return ChainReport(False, count, event.seq, "its hash does not match its contents")
        prev_hash = event.hash
        expected_seq += 1
        count += 1
    if count != campaign.last_seq:
        return ChainReport(False, count, count + 1, f"the stream head says {campaign.last_seq} events")
    if campaign.head_hash != prev_hash:
        return ChainReport(False, count, count, "the stream head hash does not match the last event")
    return ChainReport(True, count)


def serialize_event(event: Event) -> dict:
    """The one JSON form of an event, as stored (before any visibility filter).

    A format-2 event carries its ``body_digest``: with it, a member who may not
    see the payload still recomputes the event's hash."""
    data = {
        "seq": event.seq,
        "format": event.format,
        "type": event.type,
        "version": event.version,
        "payload": event.payload,
        "actor": event.actor.username if event.actor_id else None,
        "actor_id": event.actor_id,
        "character": event.character_id,
        "character_name": event.character.name if event.character_id else None,
        "session": event.session,
        "scene": event.scene,
        "visibility": event.visibility,
        "created_at": timestamp(event.created_at),
        "prev_hash": event.prev_hash,
        "hash": event.hash,
    }
    if event.format >= FORMAT_2:
        data["body_digest"] = body_digest(event_body(hashed_fields(event)))
    return data


def marks_after(campaign_id: int, after: int) -> tuple[set[int], set[int]]:
    """(voided, revealed): seqs after ``after`` that a later void or reveal names.

    A void or reveal always comes after its target, so looking at marks with
    seq > ``after`` finds every mark on the events after ``after``.
    """
    voided, revealed = set(), set()
    marks = Event.objects.filter(campaign_id=campaign_id, seq__gt=after, type__in=("event_voided", "roll_revealed"))
    for kind, payload in marks.values_list("type", "payload"):
        (voided if kind == "event_voided" else revealed).add(payload["seq"])
    return voided, revealed


def events_after(campaign_id: int, after: int, limit: int) -> tuple[list[dict], set[int]]:
    """Stored events with seq > ``after``, in order, at most ``limit``, serialized.

    Returns ``(events, revealed)``: each event carries ``"voided": true`` if a
    later event voided it; ``revealed`` is the set of hidden seqs since made
    public (pass it to the visibility filter).
    """
    rows = (
        Event.objects.filter(campaign_id=campaign_id, seq__gt=after)
        .select_related("actor", "character")
        .order_by("seq")[:limit]
    )
    voided, revealed = marks_after(campaign_id, after)
    events = []
    for row in rows:
        data = serialize_event(row)
        if row.seq in voided:
            data["voided"] = True
        events.append(data)
    return events, revealed
