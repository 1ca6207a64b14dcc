"""The campaign event log: the hash chain, the one record path, the reads and the one serializer.

* :mod:`.chain`: what an event's hash covers and how it is computed, pure (no database);
* :mod:`.store`: the one record path (``record``; ``append`` for logs built in bulk) and the lock a
  command reads its context with (``lock_stream``); it stores and never publishes;
* :mod:`.reads`: events in order, serialized once (``serialize_event``), with the marks later events
  put on them (``marks_after``), and the check of a whole chain (``verify_chain``).

``.store`` and ``.reads`` both stand on ``.chain`` and not on each other (``.importlinter``); the
names below are the package's public ones (docs/event-log.md).
"""

from .chain import FORMAT_1, FORMAT_2, body_digest, canonical_json, event_body, event_hash, hashed_fields, timestamp
from .reads import VOIDS, ChainReport, events_after, marks_after, serialize_event, verify_chain
from .store import (EVENT_COLUMNS, STREAM_COLUMNS, ChainBroken, Draft, Stream, append, lock_campaign, lock_stream,
                    record)

__all__ = [
    "FORMAT_1", "FORMAT_2", "body_digest", "canonical_json", "event_body", "event_hash", "hashed_fields", "timestamp",
    "VOIDS", "ChainReport", "events_after", "marks_after", "serialize_event", "verify_chain",
    "EVENT_COLUMNS", "STREAM_COLUMNS", "ChainBroken", "Draft", "Stream", "append", "lock_campaign", "lock_stream",
    "record",
]
