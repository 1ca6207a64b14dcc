"""The hash chain, pure: what an event's hash covers and how it is computed (docs/event-log.md).

No database and no Django: the record path (:mod:`.store`) stamps new events with these, the reads
(:mod:`.reads`) and ``verify_chain`` check stored ones, and so may anything that checks a log.
"""

from __future__ import annotations

import hashlib
import json
from datetime import timezone as dt_timezone
from typing import Any, Mapping

from ..canonical import jcs

# Hash formats (docs/event-log.md). Format 1 hashed the payload itself with
# Python's JSON encoding; format 2 hashes an RFC 8785 envelope holding the
# digest of the body, so a member can check a hidden event's link without its
# payload. Old events keep format 1 forever: the chain is never rewritten.
FORMAT_1 = 1
FORMAT_2 = 2


def canonical_json(value: Any) -> bytes:
    """Format 1's encoding (events stored before format 2): sorted keys, no spaces, UTF-8.

    Python's float formatting makes it hard to reproduce elsewhere, which is
    why new events use :func:`campaign.canonical.jcs`."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode(
        "utf-8"
    )


def timestamp(value) -> str:
    """Event timestamps as hashed and served: UTC ISO 8601 with microseconds."""
    return value.astimezone(dt_timezone.utc).isoformat(timespec="microseconds")


def hashed_fields(event) -> dict:
    """Exactly the fields of ``event`` (a ``campaign.models.Event``, stored or not) the chain covers
    (documented in docs/event-log.md)."""
    return {
        "campaign": event.campaign_id,
        "seq": event.seq,
        "type": event.type,
        "version": event.version,
        "payload": event.payload,
        "actor": event.actor_id,
        "character": event.character_id,
        "session": event.session,
        "scene": event.scene,
        "visibility": event.visibility,
        "created_at": timestamp(event.created_at),
    }


def event_body(fields: Mapping[str, Any]) -> dict:
    """What a format-2 event's ``body_digest`` covers: what happened, to whom."""
    return {"type": fields["type"], "version": fields["version"], "character": fields["character"],
            "payload": fields["payload"]}


def body_digest(body: Mapping[str, Any]) -> str:
    """SHA-256 (hex) of the JCS of an event body; a hidden event's commitment."""
    return hashlib.sha256(jcs(dict(body))).hexdigest()


def event_hash(prev_hash: str, fields: Mapping[str, Any], format: int = FORMAT_1, body: str | None = None) -> str:
    """SHA-256 over the previous hash and the encoding ``format`` prescribes for the fields.

    ``fields`` is :func:`hashed_fields`' dict; the format picks the encoder,
    so an event stored in format 1 verifies as it was made (upcasting without
    rewriting). ``body``: format 2's body digest, when the caller computed it already."""
    digest = hashlib.sha256()
    digest.update(prev_hash.encode("ascii"))
    if format == FORMAT_1:
        digest.update(canonical_json(fields))
    elif format == FORMAT_2:
        envelope = {key: fields[key] for key in ("campaign", "seq", "actor", "session", "scene", "visibility",
                                                 "created_at")}
        digest.update(jcs({**envelope, "format": FORMAT_2, "body": body or body_digest(event_body(fields))}))
    else:
        raise ValueError(f"unknown event hash format {format!r}")
    return digest.hexdigest()
