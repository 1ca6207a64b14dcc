"""Signed checkpoints: receipts of the log's head that members keep (docs/fair-dice.md).

The server's Ed25519 key, and the retired ones older receipts are signed by,
are campaign/signing.py's. A checkpoint signs the JCS of ``{"campaign": slug,
"seq", "hash", "created_at"}``. A member who keeps one can later show that the log they are
served no longer extends it: truncated, reordered or rewritten from any seq up
to the receipt's.
"""

from __future__ import annotations

import base64

from django.db.models import Min
from django.utils import timezone

from . import signing
from .canonical import jcs
from .eventlog import timestamp
from .models import Campaign, Checkpoint, Event
from .signing import ALGORITHM, public_key_b64, signing_key  # noqa: F401  (the names callers use)


def message(data: dict) -> bytes:
    """What a checkpoint's signature covers."""
    return jcs({"campaign": data["campaign"], "seq": data["seq"], "hash": data["hash"],
                "created_at": data["created_at"]})


def sign_head(campaign: Campaign) -> Checkpoint:
    """Sign the locked ``campaign``'s current head (call inside the append transaction)."""
    data = {"campaign": campaign.slug, "seq": campaign.last_seq, "hash": campaign.head_hash,
            "created_at": timestamp(timezone.now())}
    signature = base64.b64encode(signing_key().sign(message(data))).decode("ascii")
    return Checkpoint.objects.create(campaign=campaign, seq=data["seq"], hash=data["hash"],
                                     created_at=data["created_at"], signature=signature)


def as_json(checkpoint: Checkpoint, slug: str) -> dict:
    return {"campaign": slug, "seq": checkpoint.seq, "hash": checkpoint.hash,
            "created_at": checkpoint.created_at, "signature": checkpoint.signature}


def page(campaign: Campaign, *, after: int = 0, before: int | None = None, limit: int) -> tuple[list[Checkpoint], bool]:
    """Up to ``limit`` checkpoints with ``after < seq`` in seq order, or, given ``before``, with
    ``seq < before`` newest first; and whether more lie beyond. One per seq, the first signed at it:
    a head is signed once now (campaign/actions/campaigns.py), and a repeat from before that is the
    same statement, so seq is a cursor that never splits or repeats a checkpoint."""
    heads = campaign.checkpoints.values("seq").annotate(first=Min("id"))
    heads = heads.filter(seq__lt=before).order_by("-seq") if before is not None else \
        heads.filter(seq__gt=after).order_by("seq")
    ids = [row["first"] for row in heads[:limit + 1]]
    rows = sorted(Checkpoint.objects.filter(id__in=ids[:limit]), key=lambda c: c.seq, reverse=before is not None)
    return rows, len(ids) > limit


def signature_ok(data: dict) -> bool:
    """Whether the checkpoint ``data`` is signed by the server key that was valid at its ``created_at``."""
    try:
        return signing.signature_ok(message(data), data["signature"], data["created_at"])
    except (KeyError, TypeError):
        return False


def receipt_problem(campaign: Campaign, receipt) -> tuple[int | None, str] | None:
    """``(seq, why)`` when the stored log does not extend ``receipt`` or its signature is not the server's."""
    if not isinstance(receipt, dict) or not all(k in receipt for k in ("campaign", "seq", "hash", "created_at",
                                                                          "signature")):
        return None, "a receipt must be a checkpoint: {campaign, seq, hash, created_at, signature}"
    seq = receipt["seq"]
    if receipt["campaign"] != campaign.slug:
        return seq, f"the receipt is for campaign {str(receipt['campaign'])[:60]!r}, not {campaign.slug!r}"
    if not signature_ok(receipt):
        return seq, "the receipt's signature is not this server's key"
    if isinstance(seq, bool) or not isinstance(seq, int) or seq < 0:
        return None, "the receipt's seq is not a number"
    if seq == 0:
        return None
    stored = Event.objects.filter(campaign=campaign, seq=seq).values_list("hash", flat=True).first()
    if stored is None:
        last = Event.objects.filter(campaign=campaign, seq__lt=seq).order_by("-seq").values_list("seq", flat=True).first() or 0
        # Named as missing, not as rewritten: a restore from a backup older than the receipt looks
        # exactly like this (docs/operations.md, "What a restore means for receipts").
        missing = f"event {seq}" if last + 1 == seq else f"events {last + 1}-{seq}"
        return seq, (f"the log ends before the receipt's seq {seq}: {missing} missing (restored from a backup "
                     "older than the receipt, or truncated)")
    if stored != receipt["hash"]:
        return seq, "the stored event's hash differs from the receipt's: the log was rewritten up to here"
    return None
