"""The server's checkpoint-signing key: made, rotated and published on purpose, never by accident.

The private key is one file outside the database (``SIGNING_KEY_PATH``, PEM, mode 0600), so a
database dump alone can't forge a receipt. Beside it, ``<SIGNING_KEY_PATH>.keys.json`` lists the
public half of every key the server has signed with and when each was valid:
``{"keys": [{"public_key", "valid_from", "valid_until"}, ...]}``, the last one current
(``valid_until`` null). A receipt verifies against the key that was valid at its signed
``created_at``, so receipts signed before a rotation still verify after it, and a retired key
(whose private half is destroyed at rotation) can't vouch for anything signed after it retired.

Only ``manage.py create_signing_key`` and ``manage.py rotate_signing_key`` write these files.
Everything else reads them: a missing key stops the server at startup and ``check --deploy``
(``require_key``), instead of each process quietly making its own key, which would sign receipts
no other process, and no member, could check.

Times are ``campaign.eventlog.timestamp`` strings (UTC ISO 8601 with microseconds), the exact form a
checkpoint's ``created_at`` is signed in, so a window is a comparison of two such strings.
"""

from __future__ import annotations

import base64
import json
import os
from dataclasses import dataclass
from datetime import datetime
from datetime import timezone as dt_timezone
from pathlib import Path

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

ALGORITHM = "ed25519"
CREATE_COMMAND = "python manage.py create_signing_key"

# path -> ((inode, mtime_ns, size) of the file read, its key). Re-read when the file changes, so a
# rotation on a running system reaches every process at its next signature, without a restart.
_LOADED: dict[str, tuple[tuple[int, int, int], Ed25519PrivateKey]] = {}


class MissingKey(ImproperlyConfigured):
    pass


@dataclass(frozen=True)
class PublicKey:
    public_key: str  # base64 of the raw 32 bytes
    valid_from: str | None  # None: since before keys had validity (the first key)
    valid_until: str | None  # None: the current key

    def covers(self, created_at: str) -> bool:
        return (self.valid_from is None or self.valid_from <= created_at) and \
            (self.valid_until is None or created_at < self.valid_until)

    def as_json(self) -> dict:
        return {"algorithm": ALGORITHM, "public_key": self.public_key, "valid_from": self.valid_from,
                "valid_until": self.valid_until}


def key_path() -> Path:
    return Path(os.environ.get("SIGNING_KEY_PATH") or Path(settings.BASE_DIR) / "talekeeper-signing.key")


def keyring_path(path: Path | None = None) -> Path:
    path = path or key_path()
    return path.with_name(path.name + ".keys.json")


def missing_message(path: Path | None = None) -> str:
    return (f"No checkpoint-signing key at {path or key_path()} (SIGNING_KEY_PATH). Create it once, on one "
            f"host, with `{CREATE_COMMAND}`, and give every server process the same file "
            f"(docs/operations.md, \"The signing key\").")


def require_key() -> None:
    """Raise ``MissingKey`` (the message names the command that creates it) unless the key is readable."""
    signing_key()


def signing_key() -> Ed25519PrivateKey:
    """The current key, read from its file (again whenever the file changed); never made here."""
    path = key_path()
    try:
        stat = path.stat()
    except FileNotFoundError:
        raise MissingKey(missing_message(path)) from None
    version = (stat.st_ino, stat.st_mtime_ns, stat.st_size)
    loaded = _LOADED.get(str(path))
    if loaded is not None and loaded[0] == version:
        return loaded[1]
    key = serialization.load_pem_private_key(path.read_bytes(), password=None)
    if not isinstance(key, Ed25519PrivateKey):
        raise ImproperlyConfigured(f"{path} does not hold an Ed25519 private key")
    _LOADED[str(path)] = (version, key)
    return key


def public_b64(key: Ed25519PrivateKey) -> str:
    raw = key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return base64.b64encode(raw).decode("ascii")


def public_key_b64() -> str:
    return public_b64(signing_key())


def keys() -> list[PublicKey]:
    """Every key with its validity, oldest first, the current one last.

    Only public halves are needed to check receipts: where the list is and the private key is not
    (a host that only verifies, a restored backup's test), the list is the answer."""
    try:
        listed = [PublicKey(k["public_key"], k.get("valid_from"), k.get("valid_until"))
                  for k in json.loads(keyring_path().read_text())["keys"]]
    except FileNotFoundError:
        listed = []  # a key made before keys had validity: valid since always
    try:
        current = public_key_b64()
    except MissingKey:
        if listed:
            return listed
        raise
    if not listed or listed[-1].public_key != current:
        # The key file is newer than the list (restored or copied alone): the list's keys end where
        # the current one's validity is unknown, so it is listed as valid since always.
        listed = [k for k in listed if k.public_key != current] + [PublicKey(current, None, None)]
    return listed


def signature_ok(message: bytes, signature_b64: str, created_at: str) -> bool:
    """Whether ``signature_b64`` signs ``message`` by the key that was valid at ``created_at``."""
    try:
        signature = base64.b64decode(signature_b64, validate=True)
    except (ValueError, TypeError):
        return False
    for key in keys():
        if not isinstance(created_at, str) or not key.covers(created_at):
            continue
        try:
            Ed25519PublicKey.from_public_bytes(base64.b64decode(key.public_key)).verify(signature, message)
            return True
        except (InvalidSignature, ValueError):
            continue
    return False


# --- writing (the two management commands only) ------------------------------------------------

def _now() -> str:
    # campaign.eventlog.timestamp's form, without importing the models: the test setup makes its key
    # before Django is set up.
    return datetime.now(dt_timezone.utc).isoformat(timespec="microseconds")


def _write_new(path: Path, data: bytes, mode: int) -> None:
    """Write ``path`` whole or not at all: a temporary file beside it, then a rename over it."""
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    with os.fdopen(fd, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    os.replace(temporary, path)


def _pem(key: Ed25519PrivateKey) -> bytes:
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption())


def _write_keyring(path: Path, listed: list[PublicKey]) -> None:
    text = json.dumps({"keys": [{"public_key": k.public_key, "valid_from": k.valid_from,
                                 "valid_until": k.valid_until} for k in listed]}, indent=2) + "\n"
    _write_new(keyring_path(path), text.encode(), 0o644)


def create_key(path: Path | None = None) -> str:
    """Make the first key at ``path`` (owner-only); ``FileExistsError`` if one is there. Its public half."""
    path = path or key_path()
    key = Ed25519PrivateKey.generate()
    # O_EXCL: never overwrite a key, not even one another process made a moment ago.
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(_pem(key))
    _write_keyring(path, [PublicKey(public_b64(key), _now(), None)])
    return public_b64(key)


def rotate_key() -> tuple[str, str]:
    """Retire the current key now and sign with a new one from now on: ``(old, new)`` public halves.

    The keyring is written before the new key replaces the old one: a crash between the two leaves
    the old key signing, listed as retired, which ``keys()`` reads as current again (it lists the
    key file's key as current whatever the list says)."""
    path = key_path()
    old = public_key_b64()
    listed = keys()
    now = _now()
    new = Ed25519PrivateKey.generate()
    retired = [k if k.valid_until is not None else PublicKey(k.public_key, k.valid_from, now) for k in listed]
    _write_keyring(path, [*retired, PublicKey(public_b64(new), now, None)])
    _write_new(path, _pem(new), 0o600)
    return old, public_b64(new)
