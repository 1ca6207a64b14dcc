"""Publishing after commit: what the ``do_*`` layer hands the table's transport once it commits.

The ``do_*`` function that recorded events calls :func:`publish_on_commit` right after
``campaign.eventlog.record``, inside the same transaction: a rolled-back command publishes nothing. What
carries it to the sockets (Channels' groups, this process's sockets from memory: sessions/transport.py)
is the transport's, which registers itself at start-up (:func:`use_transport`, sessions/apps.py), so
campaign/ never imports sessions/. Without one (no live table in this process) nothing is sent.
"""

from __future__ import annotations

from typing import Protocol

from django.db import transaction

from .eventlog import serialize_event
from .sheets import changed_sheets, sheets_in_hand


class Transport(Protocol):
    """What carries a commit's news to the open tables (sessions/transport.py). Neither call raises: a
    lost message costs the sockets a read of the log, never a stored command."""

    def send(self, campaign_id: int, data: list[dict], sheets: dict[str, dict] | None = None) -> None:
        """Ring the table's doorbell: serialized events, and the sheets they changed (``None``: unknown)."""

    def revoke(self, user_id: int, campaign_id: int | None, tokens: list[str] | None = None) -> None:
        """Close the user's table sockets (of one campaign, or all; ``tokens``: only those opened with one)."""


_transport: Transport | None = None


def use_transport(transport: Transport) -> None:
    """Where :func:`publish_on_commit` and :func:`close_sockets_on_commit` send (sessions/apps.py, at start-up)."""
    global _transport
    _transport = transport


def publish_on_commit(campaign_id: int, events) -> None:
    """Ring the table's doorbell for ``events`` once the transaction commits.

    Called by the ``do_*`` function that recorded them (campaign/actions), right after
    ``campaign.eventlog.record``, inside the same transaction: a rolled-back command rings nothing."""
    if not events:
        return
    data = [serialize_event(e) for e in events]
    in_hand = sheets_in_hand(events)  # as the command leaves them, before anything else can change them
    # The characters whose state the events left as it was (campaign/projections.py project): no sheet to push.
    unchanged = getattr(events[-1], "unchanged", frozenset())
    transaction.on_commit(lambda: _send(campaign_id, data, in_hand, unchanged))


def _send(campaign_id: int, data: list[dict], in_hand: dict[int, dict], unchanged: frozenset = frozenset()) -> None:
    transport = _transport
    if transport is not None:
        transport.send(campaign_id, data, changed_sheets(campaign_id, data, in_hand, unchanged))


def close_sockets_on_commit(user_id: int, campaign_id: int | None = None, tokens: list[str] | None = None) -> None:
    """Once the transaction commits, close ``user_id``'s table sockets (of one campaign, or all).

    For a logout, a deactivation, a removal or a role change: a socket must not
    outlive the right it was opened with. Every command re-checks the right as
    well, so a lost message only delays the close, it never lets a write through. ``tokens``
    (digests of revoked API tokens): only the sockets opened with one of them close."""
    transaction.on_commit(lambda: _revoke(user_id, campaign_id, tokens))


def _revoke(user_id: int, campaign_id: int | None, tokens: list[str] | None) -> None:
    transport = _transport
    if transport is not None:
        transport.revoke(user_id, campaign_id, tokens)
