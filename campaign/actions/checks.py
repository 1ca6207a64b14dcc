"""``check_*`` for text any action may carry: names and reasons."""

from __future__ import annotations

import unicodedata

from .errors import ActionError

MAX_REASON = 500
# Text-direction overrides, embeddings, isolates and marks: in a name they make it read as another
# ("Evil\u202eeman") and reorder whatever follows it on a log line, an audit row or an export cell.
# (Joiners stay: scripts and emoji sequences need them.)
BIDI_CONTROLS = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c")


def check_name(value, what: str, max_length: int = 80) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ActionError(f"{what} is required.")
    value = value.strip()
    if len(value) > max_length:
        raise ActionError(f"{what} is too long (at most {max_length} characters).")
    if any(unicodedata.category(c) == "Cc" or c in BIDI_CONTROLS for c in value):
        raise ActionError(f"{what} can't contain control characters (tabs, line breaks) or text-direction marks.")
    return value


def check_reason(action: dict, required: bool = False) -> str:
    reason = action.get("reason", "")
    if reason is None:
        reason = ""
    if not isinstance(reason, str) or len(reason) > MAX_REASON:
        raise ActionError(f"'reason' must be text of at most {MAX_REASON} characters.")
    if required and not reason.strip():
        raise ActionError("Say why: 'reason' is required.")
    return reason.strip()
