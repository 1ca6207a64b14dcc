"""Broadcasting appended events to open tables, after commit.

A broadcast is a doorbell, not the log: the channel layer may drop a message
(a full channel, an expired group, Redis down), so consumers that see a seq
jump, or learn a newer seq from a heartbeat, read the missing events from the
database. A failed broadcast is logged and never fails the command.

From synchronous code ``async_to_sync(group_send)`` per call has leaked
Redis connections (a new event loop and pool each time), so with Redis the
broadcasts go through one long-lived loop per process. The in-memory layer
only reaches consumers of this process, so it is called on their loop.
"""

from __future__ import annotations

import asyncio
import logging
import threading

from asgiref.sync import async_to_sync
from channels.layers import InMemoryChannelLayer, get_channel_layer
from django.db import transaction

log = logging.getLogger(__name__)


def group_name(campaign_id: int) -> str:
    return f"campaign-{campaign_id}"


def broadcast_on_commit(campaign_id: int, events) -> None:
    """Ring the table's doorbell for ``events`` once the transaction commits."""
    if not events:
        return
    from .log import serialize_event
    from .sheets import sheets_in_hand

    data = [serialize_event(e) for e in events]
    in_hand = sheets_in_hand(events)  # as the command leaves them, before anything else can change them
    transaction.on_commit(lambda: send(campaign_id, data, changed_sheets(campaign_id, data, in_hand)))


def changed_sheets(campaign_id: int, data: list[dict],
                   in_hand: dict[int, dict] | None = None) -> dict[str, dict] | None:
    """The sheets ``data`` (serialized events) changed, once per sheet class (campaign/sheets.py): those a
    command holds (``in_hand``: campaign.sheets.sheets_in_hand), the others read now: after commit for a
    doorbell, after the page for a socket's backlog (sessions/consumers.py).

    A failed read only costs the browsers a fetch each (no sheets: they ask)."""
    from .sheets import characters_changed, pushed_sheets

    try:
        changed = characters_changed(campaign_id, data)
        sheets = {cid: in_hand[cid] for cid in changed if in_hand and cid in in_hand}
        sheets.update(pushed_sheets(campaign_id, changed - sheets.keys()))
        return {str(cid): classes for cid, classes in sheets.items()}
    except Exception:
        log.exception("reading the sheets changed by seq %s failed", data[-1]["seq"])
        return None


def user_group(user_id: int) -> str:
    """Every table socket of one user, whatever the campaign (to close them from HTTP)."""
    return f"user-{user_id}"


def close_sockets_on_commit(user_id: int, campaign_id: int | None = None) -> None:
    """Once the transaction commits, close ``user_id``'s table sockets (of one campaign, or all).

    For a logout, a deactivation, a removal or a role change: a socket must not
    outlive the right it was opened with. Every command re-checks the right as
    well, so a lost message only delays the close, it never lets a write through."""
    transaction.on_commit(lambda: _revoke(user_id, campaign_id))


def _revoke(user_id: int, campaign_id: int | None) -> None:
    try:
        _group_send(user_group(user_id), {"type": "table.revoke", "campaign": campaign_id})
    except Exception as e:  # the socket's next command is refused anyway (it re-checks)
        log.warning("closing the sockets of user %s failed: %r", user_id, e)


def send(campaign_id: int, data: list[dict], sheets: dict[str, dict] | None = None) -> None:
    """Ring the doorbell: the events, and the sheets they changed (``None``: not known, browsers fetch)."""
    message = {"type": "table.events", "events": data}
    if sheets is not None:
        message["sheets"] = sheets
    try:
        _group_send(group_name(campaign_id), message)
    except Exception:  # never fail a stored command because a doorbell failed
        log.exception("broadcast of seq %s failed", data[-1]["seq"])


def _group_send(group: str, message: dict) -> None:
    layer = get_channel_layer()
    if layer is None:
        return
    if isinstance(layer, InMemoryChannelLayer):
        # It reaches only this process's sockets: with none in the group there is no one to ring
        # for, and async_to_sync from a thread without a loop starts a thread and a loop per call
        # (most of a management command's or a test's append, issue #12).
        if group in layer.groups:
            async_to_sync(layer.group_send)(group, message)
    else:
        _Sender.get().submit(group, message)


class _Sender:
    """One background event loop per process that owns its own channel layer."""

    _instance: "_Sender | None" = None
    _lock = threading.Lock()

    def __init__(self):
        from channels.layers import channel_layers
        from django.conf import settings

        self.loop = asyncio.new_event_loop()
        self.layer = channel_layers.make_backend("default") if settings.CHANNEL_LAYERS else None
        self.thread = threading.Thread(target=self.loop.run_forever, name="talekeeper-broadcast", daemon=True)
        self.thread.start()

    @classmethod
    def get(cls) -> "_Sender":
        with cls._lock:
            if cls._instance is None:
                cls._instance = cls()
            return cls._instance

    def submit(self, group: str, message: dict) -> None:
        future = asyncio.run_coroutine_threadsafe(self._send(group, message), self.loop)
        future.add_done_callback(_log_failure)

    async def _send(self, group: str, message: dict) -> None:
        await asyncio.wait_for(self.layer.group_send(group, message), timeout=5)



def _log_failure(future) -> None:
    if future.exception() is not None:
        log.warning("broadcast failed (clients will catch up from the log): %r", future.exception())

