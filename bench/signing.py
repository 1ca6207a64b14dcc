"""The bench's bots sign their commands as a script's client does (tools/talekeeper_client.py): an
Ed25519 key per member, registered in the log by a command signed by itself, and every command signed
over the bytes the standalone verifier defines (docs/fair-dice.md, "Signed commands").

No Django in here: the load generator (bench/load.py) signs each command as it sends it.
"""

from __future__ import annotations

import base64
import os
import sys
from dataclasses import dataclass, field

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

# What a member signs is defined once, by the verifier every member runs (as tools/talekeeper_client.py reads it).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tools"))
from talekeeper_verify import command_message  # noqa: E402


def b64url(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def new_key() -> str:
    """A new private key, as hex (kept in the bench's table dicts beside the member's API token)."""
    return Ed25519PrivateKey.generate().private_bytes(
        serialization.Encoding.Raw, serialization.PrivateFormat.Raw, serialization.NoEncryption()).hex()


@dataclass
class Signer:
    """One member's key in one campaign, signing for one session (``session``/``commitment`` None: outside one)."""

    key_hex: str
    campaign: int
    session: int | None = None
    commitment: str | None = None
    _key: Ed25519PrivateKey = field(init=False, repr=False)

    def __post_init__(self):
        self._key = Ed25519PrivateKey.from_private_bytes(bytes.fromhex(self.key_hex))

    @property
    def public_key(self) -> str:
        return b64url(self._key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw))

    def envelope(self, command_id: str, action: dict) -> dict:
        """``{"id", "action", "signature"}``: the command as a signing client sends it."""
        sig = self._key.sign(command_message(self.campaign, self.session, self.commitment, command_id, action))
        return {"id": command_id, "action": action, "signature": {
            "key": self.public_key, "session": self.session, "commitment": self.commitment, "sig": b64url(sig)}}

    def registration(self, command_id: str, label: str = "bench bot") -> dict:
        """The self-signed command that registers this key."""
        return self.envelope(command_id, {"type": "add_member_key", "key": self.public_key, "label": label})
