"""Members' signed commands, the server's side (docs/fair-dice.md, "Signed commands").

In a campaign whose members sign (``Campaign.signed_from``), every command a member sends carries
``signature``: ``{"key", "session", "commitment", "sig"}``, an Ed25519 signature (base64url, no
padding) by one of her keys over :func:`command_message`: the JCS of the campaign's id, the session
she sent it in and that session's dice commitment (both null outside a session), the command id and
the action exactly as sent. Her keys are in the log itself: ``member_key_added`` (signed by the key
it adds) and ``member_key_revoked`` events, so every verifier knows them from her export.

The server checks each signature before it decides anything (:func:`check`), and the command's
first event keeps the envelope verbatim (``command_id``, ``action``, ``signature``): the host can't
act in her name, change what she sent, or store it in another session, without every member's
tools seeing it. This module only reads; the events are recorded by ``campaign.actions``.
"""

from __future__ import annotations

import base64
import binascii
import re

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from .canonical import jcs
from .models import Campaign, Event

COMMAND_SCHEME = "talekeeper-command-v1"
KEY_ADDED, KEY_REVOKED = "member_key_added", "member_key_revoked"
ADD_KEY, REVOKE_KEY = "add_member_key", "revoke_member_key"
MAX_LIVE_KEYS = 20  # per member and campaign: devices, scripts and a spare or two
MAX_LABEL = 60
SIGNATURE_FIELDS = frozenset({"key", "session", "commitment", "sig"})
_B64URL = re.compile(r"^[A-Za-z0-9_-]+$")


def unb64url(text) -> bytes | None:
    """The bytes of unpadded base64url ``text``; None if it is not that."""
    if not isinstance(text, str) or not _B64URL.match(text) or len(text) % 4 == 1 or len(text) > 200:
        return None
    try:
        return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except (ValueError, binascii.Error):
        return None


def is_public_key(text) -> bool:
    raw = unb64url(text)
    return raw is not None and len(raw) == 32


def command_message(campaign_id: int, session, commitment, command_id: str, action: dict) -> bytes:
    """The bytes a member signs for one command."""
    return jcs({"scheme": COMMAND_SCHEME, "campaign": campaign_id, "session": session, "commitment": commitment,
                "id": command_id, "action": action})


def verifies(key: str, sig: str, message: bytes) -> bool:
    raw, signature = unb64url(key), unb64url(sig)
    if raw is None or len(raw) != 32 or signature is None or len(signature) != 64:
        return False
    try:
        Ed25519PublicKey.from_public_bytes(raw).verify(signature, message)
    except (InvalidSignature, ValueError):
        return False
    return True


def shape_problem(signature) -> str:
    """Why ``signature`` is not a signature object ('' when it is one)."""
    if not isinstance(signature, dict) or set(signature) != SIGNATURE_FIELDS:
        return "'signature' must be an object {\"key\", \"session\", \"commitment\", \"sig\"}."
    if not is_public_key(signature["key"]):
        return "'signature.key' must be an Ed25519 public key: 32 bytes in base64url."
    raw = unb64url(signature["sig"])
    if raw is None or len(raw) != 64:
        return "'signature.sig' must be an Ed25519 signature: 64 bytes in base64url."
    session = signature["session"]
    if session is not None and (isinstance(session, bool) or not isinstance(session, int)):
        return "'signature.session' must be the session's number, or null outside a session."
    commitment = signature["commitment"]
    if commitment is not None and (not isinstance(commitment, str) or len(commitment) != 64):
        return "'signature.commitment' must be the session's dice commitment, or null outside a session."
    return ""


# --- the keys the log holds ------------------------------------------------------------------------

def key_events(campaign_id: int, actor_id: int | None = None):
    rows = Event.objects.filter(campaign_id=campaign_id, type__in=(KEY_ADDED, KEY_REVOKED))
    if actor_id is not None:
        rows = rows.filter(actor_id=actor_id)
    return rows.order_by("seq")


def keys_of(campaign_id: int, actor_id: int | None = None) -> dict[str, dict]:
    """Every key the log registered (for ``actor_id``, or anyone), in the order added:
    ``{key: {"actor_id", "member", "label", "added_seq", "revoked_seq"}}``."""
    keys: dict[str, dict] = {}
    for event in key_events(campaign_id, actor_id).select_related("actor"):
        key = event.payload.get("key")
        if event.type == KEY_ADDED and isinstance(key, str) and key not in keys:
            keys[key] = {"actor_id": event.actor_id, "member": event.actor.username if event.actor else None,
                         "label": event.payload.get("label"), "added_seq": event.seq, "revoked_seq": None}
        elif event.type == KEY_REVOKED and key in keys and keys[key]["actor_id"] == event.actor_id \
                and keys[key]["revoked_seq"] is None:
            keys[key]["revoked_seq"] = event.seq
    return keys


def any_holds(campaign_id: int, key: str) -> bool:
    """Whether the log ever registered ``key``, for anyone (a key is registered once, ever)."""
    return Event.objects.filter(campaign_id=campaign_id, type=KEY_ADDED, payload__key=key).exists()


def keys_json(campaign: Campaign) -> dict:
    """``GET /api/campaigns/<slug>/keys``: what static/talekeeper/keys.js reads."""
    return {"signed_from": campaign.signed_from,
            "keys": [{"member": k["member"], "key": key, "label": k["label"], "added_seq": k["added_seq"],
                      "revoked_seq": k["revoked_seq"]} for key, k in keys_of(campaign.id).items()]}
