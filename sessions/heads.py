"""Heads: where a campaign's log ends, as ``{"seq": n, "hash": "<hex>"}``.

The server puts its head in every ``ready``, ``heartbeat``, ``ack`` and
``pong`` frame; each client checks it against the events it verified and
reports back the last head it verified itself (a ``{"type": "head", ...}``
frame), which presence frames pass on to everyone. A member whose log
differs from another's at the same seq sees it on the table
(docs/protocol.md, "Heads").

A reported head is checked against the log before it is relayed
(:func:`stored_hash`): a member whose client reports a head this log does not
have would otherwise set off every other member's "another member is shown a
different log" warning (docs/protocol.md, "Heads").

Small functions, so the consumer (and whoever reworks its heartbeat) only
calls them.
"""

from __future__ import annotations

import re

from campaign.actions import ActionError
from campaign.models import GENESIS_HASH, Campaign, Event

HASH = re.compile(r"[0-9a-f]{64}")
MAX_SEQ = 10**17  # the same bound as ``after``: nothing real comes near it


def log_head(campaign_id: int) -> dict:
    """The campaign's head now, read from its stream row."""
    seq, hash_ = Campaign.objects.values_list("last_seq", "head_hash").get(pk=campaign_id)
    return {"seq": seq, "hash": hash_}


def reported_head(frame: dict) -> dict:
    """The head a client reports in ``{"type": "head", "head": {"seq", "hash"}}``, checked.

    Raises ``ActionError("bad_frame")`` for anything but a whole seq and a
    lowercase SHA-256 hex digest, so presence never relays junk.
    """
    head = frame.get("head")
    seq = head.get("seq") if isinstance(head, dict) else None
    hash_ = head.get("hash") if isinstance(head, dict) else None
    if (isinstance(seq, bool) or not isinstance(seq, int) or not 0 <= seq <= MAX_SEQ
            or not isinstance(hash_, str) or not HASH.fullmatch(hash_)):
        raise ActionError('A head frame is {"type": "head", "head": {"seq": <whole number>, "hash": '
                          '"<64 lowercase hex digits>"}}.', "bad_frame")
    return {"seq": seq, "hash": hash_}


def stored_hash(campaign_id: int, seq: int) -> str | None:
    """The hash of event ``seq`` of the campaign's log (the genesis hash for 0), or None when the log
    has no such event: one read through the (campaign, seq) unique index."""
    if seq == 0:
        return GENESIS_HASH
    return Event.objects.filter(campaign_id=campaign_id, seq=seq).values_list("hash", flat=True).first()


def false_head_message(head: dict, hash_: str | None) -> str:
    """What the sender of a head this log does not have is told (its head is not passed on)."""
    where = (f"This log has no event #{head['seq']} yet" if hash_ is None
             else f"Event #{head['seq']} of this log has another hash")
    return (f"{where}: a head you report must be one of this log's, and this one was not passed on to the "
            "others.")
