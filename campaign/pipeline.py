"""The command envelope, read the same way over HTTP (``campaign/api.py``) and the table socket
(``sessions/consumers.py``): one size limit, one JSON parser, one reader of whole numbers in text,
and one mapping from an :class:`ActionError` to an HTTP status.

Everything here raises :class:`ActionError`; each transport only says how to deliver it (an HTTP
response or an ``error`` frame). What the rules refuse becomes an ``ActionError`` in
``campaign.actions.rule_refusal`` (400 for malformed input, 422 for the rules saying no).
"""

from __future__ import annotations

import json

from .actions import ActionError
from .outages import MESSAGES, outage_code

MAX_BYTES = 64 * 1024  # a request body or a socket frame
MAX_DIGITS = 18  # whole numbers from text: never parse (or print) a huge one
MAX_SEQ = 10**17  # the largest seq a client may name (``after``, ``as_of``): far beyond any log


class TooLarge(ActionError):
    status = 413
    code = "too_large"


def too_large(what: str = "Requests") -> TooLarge:
    return TooLarge(f"{what} are limited to {MAX_BYTES // 1024} KB.")


def check_size(size: int, what: str = "Requests") -> None:
    """Refuse an envelope over :data:`MAX_BYTES` (``what``: "Requests", "Frames")."""
    if size > MAX_BYTES:
        raise too_large(what)


def parse_json(raw: bytes | str, what: str = "The request body"):
    """JSON text from a client, or a clear ``bad_json`` error (never a crash, however it is built)."""
    try:
        return json.loads(raw.decode("utf-8") if isinstance(raw, bytes) else raw)
    except RecursionError:
        raise ActionError("The JSON is nested too deeply.", "bad_json")
    except (UnicodeDecodeError, ValueError, TypeError):
        raise ActionError(f"{what} is not valid JSON text.", "bad_json")


def parse_whole_number(text: str | None, name: str, lo: int, hi: int, default: int) -> int:
    """A whole number written in ASCII digits (a query parameter), ``default`` when absent or empty.

    ``str.isdigit`` alone would let "²" or "٣" through to ``int()``; the length cap keeps
    ``int()`` and the message cheap whatever is sent."""
    if text is None or text == "":
        return default
    if not text.isascii() or not text.isdigit() or len(text) > MAX_DIGITS or not lo <= int(text) <= hi:
        raise ActionError(f"'{name}' must be a whole number from {lo} to {hi}.")
    return int(text)


def http_status(e: ActionError) -> int:
    """The status an error is answered with over HTTP (the socket sends its ``code``)."""
    return 401 if e.code == "unauthenticated" else e.status


class Unavailable(ActionError):
    """PostgreSQL is away: ``database_unavailable`` (nothing was stored) or ``outcome_unknown``
    (the connection died at COMMIT: resend the same id). campaign/outages.py tells them apart;
    HTTP answers them there too (its middleware), with the same codes and messages."""

    status = 503


def outage_error(e: Exception) -> ActionError | None:
    """The error a database outage is answered with, or None if ``e`` is not one."""
    code = outage_code(e)
    return None if code is None else Unavailable(MESSAGES[code], code)
