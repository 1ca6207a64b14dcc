"""The command pipeline: what a client's command goes through, over HTTP (``campaign/api.py``)
and the table socket (``sessions/consumers.py``) alike.

1. **size**: :func:`read_json` refuses an envelope over :data:`MAX_BYTES` (counted in bytes on
   both transports), before parsing it;
2. **JSON**: then parses it, or answers ``bad_json``;
3. **auth**: :func:`access_request` (HTTP: session cookie or bearer token); a socket is
   authenticated once, when it connects, and every command re-checks the membership under the
   campaign's lock (``campaign.actions.access_membership_now``);
4. **rate limit** and **the command**: :func:`submit` counts the command against its user's
   limit (every transport shares it), then runs ``campaign.actions.do_command``, which checks,
   decides and records the events through the log's one record path (``campaign.eventlog.record``);
5. **errors**: everything on the way raises :class:`ActionError`; its class carries the HTTP
   status and its ``code`` and ``message`` are what both transports send (an HTTP body,
   :func:`error_json`, or the socket's ``error`` frame).
   Which rule errors are malformed input (400) and which the rules saying no (422) is decided
   once, in ``campaign.errors.rule_refusal``.

Views and the consumer only parse, call, and respond.
"""

from __future__ import annotations

import functools
import json
from time import perf_counter

from django.core.exceptions import RequestDataTooBig
from django.http import JsonResponse

from . import metrics
from .actions import (
    PLATFORM_ACTIONS, ActionError, CommandResult, Unauthenticated, access_campaign, do_command, do_contributions,
)
from .auth import InvalidToken, user_from_request
from .outages import MESSAGES, outage_code
from .ratelimit import check_user_rate

MAX_BYTES = 64 * 1024  # a request body or a socket frame
MAX_DIGITS = 18  # whole numbers from text: never parse (or print) a huge one
MAX_SEQ = 10**17  # the largest seq a client may name (``after``, ``as_of``): far beyond any log

# How each transport names what it reads, in messages: (its envelopes, one of them).
WORDS = {"request": ("Requests", "The request body"), "frame": ("Frames", "That frame")}


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


def read_json(raw: bytes | str | None, kind: str = "request"):
    """Steps 1 and 2 for a request body or a socket frame (``kind``): size in bytes, then JSON."""
    envelopes, one = WORDS[kind]
    raw = raw or b""
    # A character is at least one byte: only text that might fit is encoded to be measured.
    check_size(len(raw), envelopes)
    if isinstance(raw, str):
        check_size(len(raw.encode("utf-8", "surrogatepass")), envelopes)
    return parse_json(raw, one)


def parse_whole_number(text: str | None, name: str, lo: int, hi: int, default: int) -> int:
    """A whole number written in ASCII digits (a query parameter), ``default`` when absent or empty.

    ``str.isdigit`` alone would let "²" or "٣" through to ``int()``; the length cap keeps
    ``int()`` and the message cheap whatever is sent."""
    if text is None or text == "":
        return default
    if not text.isascii() or not text.isdigit() or len(text) > MAX_DIGITS or not lo <= int(text) <= hi:
        raise ActionError(f"'{name}' must be a whole number from {lo} to {hi}.")
    return int(text)


def request_body(request) -> bytes:
    """Step 1 over HTTP: the body, refused by its declared length before it is read."""
    declared = request.META.get("CONTENT_LENGTH") or "0"
    if not declared.isascii() or not declared.isdigit() or len(declared) > MAX_DIGITS:
        raise too_large()
    check_size(int(declared))  # refused before reading a body we would throw away
    try:
        raw = request.body
    except RequestDataTooBig:
        raise too_large()
    check_size(len(raw))
    return raw


def access_request(request, slug):
    """Step 3 over HTTP: the campaign and the membership of whoever sent ``request``."""
    try:
        user = user_from_request(request)
    except InvalidToken:
        raise Unauthenticated("That API token is not valid.")
    return access_campaign(user, slug)


def command_of(frame: dict) -> dict:
    """The command envelope a socket ``command`` frame carries (the HTTP body is the envelope itself),
    with its ``signature`` when it has one (docs/fair-dice.md, "Signed commands")."""
    envelope = {"id": frame.get("id"), "action": frame.get("action")}
    if "signature" in frame:
        envelope["signature"] = frame["signature"]
    return envelope


def submit(membership, body, dice=None) -> CommandResult:
    """Step 4, for every transport: count the command against its user's limit, then run it."""
    if metrics.enabled():
        return _measured(membership, body, dice)
    check_user_rate(membership.user_id)
    return do_command(membership, body, dice=dice)


def submit_contributions(items: list[tuple]) -> list[CommandResult | ActionError]:
    """Step 4 for witnesses' ``witness_commit`` and ``witness_roll`` commands of one table that arrived together (the table
    socket gathers them: sessions/consumers.py): each counted against its user's limit, then all that
    may go stored in one transaction (``do_contributions``). One outcome per ``(membership, body)``, in
    order: its result, or the error that refused it alone. An error that is not one command's (the
    database away) is raised, for all of them."""
    start = perf_counter()
    outcomes: list = [None] * len(items)
    admitted = []
    for i, (membership, _) in enumerate(items):
        try:
            check_user_rate(membership.user_id)
            admitted.append(i)
        except ActionError as e:
            outcomes[i] = e
    try:
        for i, outcome in zip(admitted, do_contributions([items[i] for i in admitted])):
            outcomes[i] = outcome
    except Exception as e:
        for i in admitted:
            outcomes[i] = e
        raise
    finally:
        if metrics.enabled():
            for (_, body), outcome in zip(items, outcomes):
                metrics.command(action_label(body), _outcome(outcome), perf_counter() - start)
    return outcomes


def _measured(membership, body, dice) -> CommandResult:
    """:func:`submit`, counted and timed (campaign/metrics.py)."""
    start = perf_counter()
    outcome = None
    try:
        check_user_rate(membership.user_id)
        outcome = do_command(membership, body, dice=dice)
        return outcome
    except Exception as e:
        outcome = e
        raise
    finally:
        metrics.command(action_label(body), _outcome(outcome), perf_counter() - start)


def _outcome(outcome) -> str:
    """How the metrics count a command that ended with ``outcome`` (its result, the exception it raised,
    or None: it never finished)."""
    if isinstance(outcome, CommandResult):
        return "ok"
    if isinstance(outcome, ActionError):
        return "unavailable" if outcome.code in metrics.OUTAGE_CODES else "refused"
    return "unavailable" if outage_code(outcome) is not None else "failed"


@functools.cache
def _action_types() -> frozenset[str]:
    from rules import SYSTEM_MODULES, get_system

    return frozenset(PLATFORM_ACTIONS).union(*(get_system(name).actions for name in SYSTEM_MODULES))


def action_label(body) -> str:
    """The command's action type if the server knows it, else ``other``: a metric's label never
    carries what a client made up."""
    action = body.get("action") if isinstance(body, dict) else None
    kind = action.get("type") if isinstance(action, dict) else None
    return kind if isinstance(kind, str) and kind in _action_types() else "other"


def http_status(e: ActionError) -> int:
    """The status an error is answered with over HTTP (the socket sends its ``code``)."""
    return e.status


def error_json(e: ActionError) -> dict:
    """An error as an HTTP body."""
    return {"error": e.as_json()}


def error_response(e: ActionError) -> JsonResponse:
    metrics.error("http", e.code)
    return JsonResponse(error_json(e), status=http_status(e))


class Unavailable(ActionError):
    """PostgreSQL is away or the table's lock is held: ``database_unavailable`` (nothing was stored),
    ``table_busy`` (nothing was stored; resend the same id in a moment) or ``outcome_unknown`` (the
    connection died at COMMIT: resend the same id). campaign/outages.py tells them apart;
    HTTP answers them there too (its middleware), with the same codes and messages."""

    status = 503


def outage_error(e: Exception) -> ActionError | None:
    """The error a database outage is answered with, or None if ``e`` is not one."""
    code = outage_code(e)
    return None if code is None else Unavailable(MESSAGES[code], code)


def failed_behind(e: BaseException) -> ActionError | None:
    """What a command waiting behind one of the same table that failed with ``e`` is told instead of
    running (``sessions.db.in_turn``): the table's lock timed out or its database is away, so it
    would only wait as long again. It never ran: nothing of it was stored, whatever befell the other."""
    code = outage_code(e)
    if code is None:
        return None  # the other was refused for itself: this one runs
    return busy_error() if code == "table_busy" else Unavailable(MESSAGES["database_unavailable"], "database_unavailable")


def busy_error() -> ActionError:
    """``table_busy``: the table's lock, or this process's turn of it, was taken longer than the
    server waits (``DB_LOCK_TIMEOUT``); nothing was stored."""
    return Unavailable(MESSAGES["table_busy"], "table_busy")
