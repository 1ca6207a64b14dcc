"""Members' keys for tests, and their signatures on commands (docs/fair-dice.md, "Signed commands").

Keys are deterministic: a member's key on a device is derived from her username and the device's
name, so a test can name "alice's laptop" again and get the same key, and a host's key is just another
device name (``public_key("alice", "the host's")``). Keys and signatures are encoded as the browser's
(static/talekeeper/keys.js): base64url without padding.
"""

from __future__ import annotations

import base64
import hashlib
import uuid

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from campaign.member_keys import command_message


def b64url(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def private_key(name: str, device: str | None = None) -> Ed25519PrivateKey:
    """``name``'s key on ``device`` (her first device when None: the key tests/campaign/signed_log.py gives her)."""
    seed = f"talekeeper-test-key|{name}" + (f"|{device}" if device is not None else "")
    return Ed25519PrivateKey.from_private_bytes(hashlib.sha256(seed.encode()).digest())


def public_key(name: str, device: str | None = None) -> str:
    raw = private_key(name, device).public_key().public_bytes(serialization.Encoding.Raw,
                                                               serialization.PublicFormat.Raw)
    return b64url(raw)


def signature(name: str, campaign_id: int, command_id: str, action: dict, session: int | None = None,
              commitment: str | None = None, device: str | None = None) -> dict:
    """The ``signature`` object of an envelope, by ``name``'s key on ``device``."""
    sig = private_key(name, device).sign(command_message(campaign_id, session, commitment, command_id, action))
    return {"key": public_key(name, device), "session": session, "commitment": commitment, "sig": b64url(sig)}


def now(campaign) -> tuple[int | None, str | None]:
    """The session running in ``campaign`` and its dice commitment, as a member's page knows them."""
    from campaign.fairdice import current_commitment

    campaign.refresh_from_db()
    return campaign.current_session, current_commitment(campaign)


def signed(campaign, name: str, envelope: dict, device: str | None = None) -> dict:
    """``envelope`` ({"id", "action"}) with ``name``'s signature for the session running now."""
    session, commitment = now(campaign)
    return {**envelope, "signature": signature(name, campaign.id, envelope["id"], envelope["action"], session,
                                               commitment, device)}


def add_key_envelope(campaign, name: str, device: str | None = None, label: str = "laptop",
                     command_id: str | None = None) -> dict:
    """The self-signed command that registers ``name``'s key on ``device`` (under a new id unless given)."""
    action = {"type": "add_member_key", "key": public_key(name, device), "label": label}
    return signed(campaign, name, {"id": command_id or uuid.uuid4().hex, "action": action}, device)
