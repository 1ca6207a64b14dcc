"""What a dishonest host can do with their own database, for the attack tests of #9.

Each helper lifts the append-only triggers, changes rows with raw SQL, and
recomputes every hash after the change and the stream head, so the chain is
self-consistent again: exactly the attack ``verify_log`` alone can't see.
"""

from __future__ import annotations

import json

from django.db import connection

from campaign import triggers
from campaign.eventlog import event_hash, hashed_fields
from campaign.models import GENESIS_HASH, Campaign, Event


def _sql(statement: str, params=()) -> None:
    with connection.cursor() as cursor:
        cursor.execute(statement, params)


def _rehash(campaign: Campaign, start: int) -> None:
    """Recompute prev_hash and hash from ``start`` on, and the campaign's head."""
    events = list(Event.objects.filter(campaign=campaign).order_by("seq"))
    prev = GENESIS_HASH
    for event in events:
        if event.seq >= start:
            event.prev_hash = prev
            event.hash = event_hash(prev, hashed_fields(event), event.format)
            _sql("UPDATE campaign_event SET prev_hash = %s, hash = %s WHERE id = %s",
                 [event.prev_hash, event.hash, event.pk])
        prev = event.hash
    _sql("UPDATE campaign_campaign SET last_seq = %s, head_hash = %s WHERE id = %s",
         [events[-1].seq if events else 0, prev, campaign.pk])
    campaign.refresh_from_db()


class _Unlocked:
    def __enter__(self):
        triggers.uninstall(connection)

    def __exit__(self, *exc):
        triggers.install(connection)


def edit_payload(campaign: Campaign, seq: int, payload: dict) -> None:
    with _Unlocked():
        _sql("UPDATE campaign_event SET payload = %s WHERE campaign_id = %s AND seq = %s",
             [json.dumps(payload), campaign.pk, seq])
        _rehash(campaign, seq)


def edit_row(campaign: Campaign, seq: int, payload: dict, session: int | None, scene: int | None) -> None:
    """Change event ``seq``'s payload and the session and scene it is stamped with."""
    with _Unlocked():
        _sql("UPDATE campaign_event SET payload = %s, session = %s, scene = %s WHERE campaign_id = %s AND seq = %s",
             [json.dumps(payload), session, scene, campaign.pk, seq])
        _rehash(campaign, seq)


def truncate(campaign: Campaign, keep: int) -> None:
    """Drop every event after ``keep`` and fix the campaign row to match."""
    with _Unlocked():
        _sql("DELETE FROM campaign_event WHERE campaign_id = %s AND seq > %s", [campaign.pk, keep])
        _rehash(campaign, keep + 1)


def swap(campaign: Campaign, a: int, b: int) -> None:
    """Exchange the places of events ``a`` and ``b`` (renumbering both)."""
    with _Unlocked():
        _sql("UPDATE campaign_event SET seq = 0 WHERE campaign_id = %s AND seq = %s", [campaign.pk, a])
        _sql("UPDATE campaign_event SET seq = %s WHERE campaign_id = %s AND seq = %s", [a, campaign.pk, b])
        _sql("UPDATE campaign_event SET seq = %s WHERE campaign_id = %s AND seq = 0", [b, campaign.pk])
        _rehash(campaign, min(a, b))


def delete_and_renumber(campaign: Campaign, seq: int) -> None:
    """Remove event ``seq`` and move every later one down by one."""
    with _Unlocked():
        _sql("DELETE FROM campaign_event WHERE campaign_id = %s AND seq = %s", [campaign.pk, seq])
        later = Event.objects.filter(campaign=campaign, seq__gt=seq).order_by("seq").values_list("pk", flat=True)
        for pk in list(later):
            _sql("UPDATE campaign_event SET seq = seq - 1 WHERE id = %s", [pk])
        _rehash(campaign, seq)


def seal(campaign: Campaign, seq: int, visibility: str = "gm") -> None:
    """Store event ``seq`` with another visibility (the GM's alone, say): members who may not read it
    receive it sealed, its hash still checks through its body digest."""
    with _Unlocked():
        _sql("UPDATE campaign_event SET visibility = %s WHERE campaign_id = %s AND seq = %s",
             [visibility, campaign.pk, seq])
        _rehash(campaign, seq)


def set_format(campaign: Campaign, seq: int, format: int) -> None:
    """Hash event ``seq`` in another format (format 1, say, as the log's oldest events are)."""
    with _Unlocked():
        _sql("UPDATE campaign_event SET format = %s WHERE campaign_id = %s AND seq = %s", [format, campaign.pk, seq])
        _rehash(campaign, seq)
