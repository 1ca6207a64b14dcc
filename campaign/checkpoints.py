"""Signed checkpoints: receipts of the log's head that members keep (docs/fair-dice.md).

The server holds one Ed25519 key, outside the database (``SIGNING_KEY_PATH``,
made on first use with mode 0600), so a database dump alone can't forge a
receipt. A checkpoint signs the JCS of ``{"campaign": slug, "seq", "hash",
"created_at"}``. A member who keeps one can later show that the log they are
served no longer extends it: truncated, reordered or rewritten from any seq up
to the receipt's.
"""

from __future__ import annotations

import base64
import os
from pathlib import Path

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from django.conf import settings
from django.utils import timezone

from .canonical import jcs
from .log import timestamp
from .models import Campaign, Checkpoint, Event

ALGORITHM = "ed25519"
_KEYS: dict[str, Ed25519PrivateKey] = {}


def key_path() -> Path:
    return Path(os.environ.get("SIGNING_KEY_PATH") or Path(settings.BASE_DIR) / "talekeeper-signing.key")


def signing_key() -> Ed25519PrivateKey:
    """The server's key, read once per path; made (owner-only) the first time it is needed."""
    path = key_path()
    cached = _KEYS.get(str(path))
    if cached is not None:
        return cached
    if not path.exists():
        key = Ed25519PrivateKey.generate()
        pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                serialization.NoEncryption())
        try:
            # O_EXCL: two processes starting at once never overwrite each other's key.
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            pass
        else:
            with os.fdopen(fd, "wb") as f:
                f.write(pem)
    key = serialization.load_pem_private_key(path.read_bytes(), password=None)
    if not isinstance(key, Ed25519PrivateKey):
        raise RuntimeError(f"{path} does not hold an Ed25519 private key")
    _KEYS[str(path)] = key
    return key


def public_key_b64() -> str:
    raw = signing_key().public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return base64.b64encode(raw).decode("ascii")


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


def signature_ok(data: dict, public_key_b64_text: str) -> bool:
    try:
        key = Ed25519PublicKey.from_public_bytes(base64.b64decode(public_key_b64_text))
        key.verify(base64.b64decode(data["signature"], validate=True), message(data))
    except (InvalidSignature, ValueError, KeyError, TypeError):
        return False
    return True


def receipt_problem(campaign: Campaign, receipt) -> tuple[int | None, str] | None:
    """``(seq, why)`` when the stored log does not extend ``receipt`` or its signature is not the server's."""
    if not isinstance(receipt, dict) or not all(k in receipt for k in ("campaign", "seq", "hash", "created_at",
                                                                          "signature")):
        return None, "a receipt must be a checkpoint: {campaign, seq, hash, created_at, signature}"
    seq = receipt["seq"]
    if receipt["campaign"] != campaign.slug:
        return seq, f"the receipt is for campaign {str(receipt['campaign'])[:60]!r}, not {campaign.slug!r}"
    if not signature_ok(receipt, public_key_b64()):
        return seq, "the receipt's signature is not this server's key"
    if isinstance(seq, bool) or not isinstance(seq, int) or seq < 0:
        return None, "the receipt's seq is not a number"
    if seq == 0:
        return None
    stored = Event.objects.filter(campaign=campaign, seq=seq).values_list("hash", flat=True).first()
    if stored is None:
        return seq, f"the log ends before the receipt's seq {seq} (it was truncated)"
    if stored != receipt["hash"]:
        return seq, "the stored event's hash differs from the receipt's: the log was rewritten up to here"
    return None
