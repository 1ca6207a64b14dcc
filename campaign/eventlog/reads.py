"""Reading a log: its events in order, serialized once (the one serializer), with the marks later
events put on them (voids, reveals), and the check of its whole chain.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models.fields.json import KeyTransform

from ..models import GENESIS_HASH, Campaign, Event
from .chain import FORMAT_2, body_digest, event_body, event_hash, hashed_fields, timestamp


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
        data["body_digest"] = getattr(event, "body_digest", None) or body_digest(event_body(hashed_fields(event)))
    return data


# Where a stored event read from the log (:func:`events_after`) keeps the voids that voided it,
# as rows for may_see, until the filter turns them into its reader's ``"voided": true``: a void she
# may not read (only the GM's, of a roll revealed later or of an NPC's roll the GM hid again) must not
# mark the row she reads. Never sent: for_viewer and as_stored take it off.
VOIDS = "voids"


def marks_after(campaign_id: int, after: int) -> tuple[dict[int, list[dict]], set[int]]:
    """``(voids, revealed)``: for each seq after ``after`` that a later void names, those voids, as rows
    the visibility filter reads (seq, visibility, actor, the readers a ``gm`` one names: who may know
    the seq was voided); and the seqs after ``after`` that a later reveal made public.

    A void or reveal always comes after its target, so looking at marks with
    seq > ``after`` finds every mark on the events after ``after``. A mark naming no
    seq (an imported payload may hold anything) marks nothing.
    """
    voids, revealed = {}, set()
    marks = (Event.objects.filter(campaign_id=campaign_id, seq__gt=after, type__in=("event_voided", "roll_revealed"))
             .values_list("type", "seq", "visibility", "actor_id", KeyTransform("seq", "payload"),
                          KeyTransform("shared_with", "payload")))
    for kind, seq, visibility, actor_id, target, readers in marks:
        if not isinstance(target, int) or isinstance(target, bool):
            continue
        if kind == "event_voided":
            voids.setdefault(target, []).append({"seq": seq, "visibility": visibility, "actor_id": actor_id,
                                                 "shared_with": readers})
        else:
            revealed.add(target)
    return voids, revealed


def events_after(campaign_id: int, after: int, limit: int) -> tuple[list[dict], set[int]]:
    """Stored events with seq > ``after``, in order, at most ``limit``, serialized.

    Returns ``(events, revealed)``: an event a later one voided carries those voids
    (:data:`VOIDS`), which the visibility filter turns into ``"voided": true`` for
    a reader of one of them; ``revealed`` is the set of hidden seqs since made public
    (pass it to the visibility filter).
    """
    rows = (
        Event.objects.filter(campaign_id=campaign_id, seq__gt=after)
        .select_related("actor", "character")
        .order_by("seq")[:limit]
    )
    voids, revealed = marks_after(campaign_id, after)
    events = []
    for row in rows:
        data = serialize_event(row)
        if row.seq in voids:
            data[VOIDS] = voids[row.seq]
        events.append(data)
    return events, revealed
