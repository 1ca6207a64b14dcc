"""``check_*`` for text any action may carry: names and reasons."""

from __future__ import annotations

from rules.declare import unsafe_text

from ..errors import ActionError

MAX_REASON = 500


def check_name(value, what: str, max_length: int = 80) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ActionError(f"{what} is required.")
    value = value.strip()
    if len(value) > max_length:
        raise ActionError(f"{what} is too long (at most {max_length} characters).")
    if unsafe_text(value):
        raise ActionError(f"{what} can't contain control characters (tabs, line breaks) or text-direction marks.")
    return value


def check_reason(action: dict, required: bool = False) -> str:
    reason = action.get("reason", "")
    if reason is None:
        reason = ""
    if not isinstance(reason, str) or len(reason) > MAX_REASON:
        raise ActionError(f"'reason' must be text of at most {MAX_REASON} characters.")
    if unsafe_text(reason, allowed="\n\t"):  # read on every member's log and audit row: it must not reorder them
        raise ActionError("'reason' can't contain control characters (but line breaks and tabs) or text-direction marks.")
    if required and not reason.strip():
        raise ActionError("Say why: 'reason' is required.")
    return reason.strip()
