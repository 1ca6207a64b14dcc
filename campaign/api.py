"""The HTTP API: the same commands as the socket, and paging through the log.

``POST /api/campaigns/<slug>/commands`` with ``{"id", "action"}``:
201 with the event (200 with the original for a repeated id), or 4xx with
``{"error": {"code", "message"}}``.
``GET /api/campaigns/<slug>/events?after=N&limit=M`` pages through the log.
``GET /api/campaigns/<slug>/characters`` lists the characters a member may know of (the
table's tabs), ``.../characters/<id>`` is one's sheet. ``GET /api/key`` is the server's
checkpoint key; ``GET``/``POST`` ``/api/campaigns/<slug>/checkpoints`` page through and make signed
receipts; ``GET /api/campaigns/<slug>/keys`` lists members' keys (docs/fair-dice.md, "Signed commands").
Authenticate with the session cookie (plus CSRF token) or a bearer token.

Every view only parses, calls, and responds: size, JSON, auth, rate limit and
the error mapping are the command pipeline's (``campaign/pipeline.py``), the
same for the table socket.
"""

from __future__ import annotations

import logging

from django.conf import settings
from django.http import JsonResponse
from django.middleware.csrf import CsrfViewMiddleware
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_GET, require_http_methods

from rules import RuleError, odds_json

from . import checkpoints, member_keys, signing
from .actions import (
    ActionError, Forbidden, access_character, access_character_for_reading, do_checkpoint, opponent_of, rule_refusal,
)
from .actions.kept import characters_for
from .auth import bearer_key
from .eventlog import events_after, serialize_event
from .fairdice import current_commitment
from .pipeline import MAX_SEQ, access_request, error_response, parse_whole_number, read_json, request_body, submit
from .ratelimit import check_preview_rate, check_user_rate
from .sheets import character_entry, owner_name, sheet, sheet_body
from .visibility import Viewer, for_viewer, visible_state

log = logging.getLogger(__name__)


def _csrf_failure(request):
    """Session-authenticated writes need the CSRF token; bearer tokens do not."""
    if bearer_key(request.headers.get("Authorization")) is not None:
        return None
    return CsrfViewMiddleware(lambda r: None).process_view(request, None, (), {})


def _write_request(request, slug):
    """Who is writing, and the JSON body: size, auth, CSRF and JSON checked in that order."""
    raw = request_body(request)
    campaign, membership = access_request(request, slug)
    if _csrf_failure(request) is not None:
        raise Forbidden("The CSRF token is missing or wrong: reload the page and try again.", "csrf")
    return campaign, membership, read_json(raw)


@csrf_exempt
@require_http_methods(["POST"])
def commands(request, slug):
    try:
        campaign, membership, body = _write_request(request, slug)
        result = submit(membership, body)
    except ActionError as e:
        return error_response(e)
    viewer = Viewer.of(membership)
    events = [for_viewer(serialize_event(e), viewer) for e in result.events]
    return JsonResponse({**events[0], "events": events}, status=200 if result.replayed else 201)


def _int_param(request, name: str, default: int, lo: int, hi: int) -> int:
    return parse_whole_number(request.GET.get(name), name, lo, hi, default)


@require_GET
def events(request, slug):
    try:
        campaign, membership = access_request(request, slug)
        after = _int_param(request, "after", 0, 0, MAX_SEQ)
        limit = _int_param(request, "limit", 100, 1, settings.EVENTS_PAGE_MAX)
    except ActionError as e:
        return error_response(e)
    viewer = Viewer.of(membership)
    stored, revealed = events_after(campaign.id, after, limit)
    page = [for_viewer(data, viewer, revealed) for data in stored]
    return JsonResponse({
        "events": page,
        "head": campaign.last_seq,
        "next_after": page[-1]["seq"] if page else after,
        "has_more": bool(page) and page[-1]["seq"] < campaign.last_seq,
    })


@require_GET
def characters(request, slug):
    """The characters the member may know of, as the table page lists them (a hidden NPC only for the GM),
    with the head they are as new as: ``{"head", "characters": [{id, name, owner, npc, shown}]}``. No sheets.

    A table page asks after a sealed event, which may be the GM making or hiding an NPC: it tells the
    page no more than a reload would (docs/hidden-information.md)."""
    try:
        campaign, membership = access_request(request, slug)
    except ActionError as e:
        return error_response(e)
    # The campaign row was read first, so the list holds every character made up to ``head``.
    listed = characters_for(membership).select_related("owner").order_by("name", "id")
    return JsonResponse({"head": campaign.last_seq, "characters": [character_entry(c) for c in listed]})


@require_GET
def character_state(request, slug, character_id):
    """A character's projected state now, or ``?as_of=SEQ`` as it stood then."""
    try:
        campaign, membership = access_request(request, slug)
        as_of = _int_param(request, "as_of", 0, 0, MAX_SEQ)
        character = access_character_for_reading(membership, character_id)
    except ActionError as e:
        return error_response(e)
    viewer = Viewer.of(membership)
    if not as_of:  # the same body the table socket pushes with events (campaign/sheets.py)
        return JsonResponse(sheet(character, viewer))
    state, seq = visible_state(character, viewer, upto=as_of), min(as_of, campaign.last_seq)
    return JsonResponse(sheet_body(character, owner_name(character), seq, state))


@csrf_exempt
@require_http_methods(["POST"])
def preview(request, slug):
    """Exact odds of an action before it is rolled: ``{"action": {...}}`` -> ``{"odds": {...}}``."""
    try:
        campaign, membership, body = _write_request(request, slug)
        check_preview_rate(membership.user_id)  # after auth, like a command's: an outsider counts nothing
        action = body.get("action") if isinstance(body, dict) else None
        if not isinstance(action, dict) or not isinstance(action.get("type"), str) \
                or action["type"] not in campaign.rules.actions:
            raise ActionError(f"'action' must be one of {campaign.rules.title}'s actions.", "unknown_action")
        character = access_character(membership, action.get("character"))
        # An opponent named by id answers exactly as the command would (a hidden NPC like an unknown
        # id, a sheet holding what she may not see refused) and its numbers come from its own sheet.
        opponent_of(campaign, membership, character, action)
        odds = _preview_odds(campaign, character, membership, action)
    except ActionError as e:
        return error_response(e)
    return JsonResponse({"odds": odds_json(odds)})


@require_GET
def signing_key(request):
    """The public half of the key that signs checkpoints now, and every key with its validity (public:
    anyone may check a receipt). ``public_key`` stays the current one, as before keys rotated."""
    listed = signing.keys()
    return JsonResponse({"algorithm": signing.ALGORITHM, "public_key": listed[-1].public_key,
                         "keys": [k.as_json() for k in listed]})


@csrf_exempt
@require_http_methods(["GET", "POST"])
def campaign_checkpoints(request, slug):
    """``GET``: a page of the campaign's signed checkpoints; ``POST``: sign the head now (a player or the
    GM; ``200`` with the one already signed at this head).

    Paged like ``events``: ``?after=N&limit=M`` gives the checkpoints after seq ``N`` in seq order
    (``next_after``, ``has_more``: page through, as the verify page does); ``?order=newest&limit=M``
    the newest first, ``&before=N`` those below seq ``N`` (``next_before``: the table's latest few).
    One checkpoint per head: the first signed at each seq (the same statement signed again says
    nothing more), so seq alone is the cursor and a page never splits or repeats one."""
    try:
        campaign, membership = access_request(request, slug)
        if request.method == "POST":  # no body: the head is what gets signed
            if _csrf_failure(request) is not None:
                raise Forbidden("The CSRF token is missing or wrong: reload the page and try again.", "csrf")
            check_user_rate(membership.user_id)
            checkpoint, made = do_checkpoint(membership)
            return JsonResponse(checkpoints.as_json(checkpoint, campaign.slug), status=201 if made else 200)
        page = _checkpoints_page(request, campaign)
    except ActionError as e:
        return error_response(e)
    return JsonResponse(page)


def _checkpoints_page(request, campaign) -> dict:
    order = request.GET.get("order") or "seq"
    if order not in ("seq", "newest"):
        raise ActionError("'order' must be 'seq' (oldest first, with 'after') or 'newest' (with 'before').")
    limit = _int_param(request, "limit", 100, 1, settings.EVENTS_PAGE_MAX)
    newest = order == "newest"
    if request.GET.get("after" if newest else "before"):
        raise ActionError("'before' goes with order=newest, 'after' with the default order (seq).")
    if newest:
        before = _int_param(request, "before", MAX_SEQ, 1, MAX_SEQ)
        rows, has_more = checkpoints.page(campaign, before=before, limit=limit)
        cursor = {"next_before": rows[-1].seq if rows else before}
    else:
        after = _int_param(request, "after", 0, 0, MAX_SEQ)
        rows, has_more = checkpoints.page(campaign, after=after, limit=limit)
        cursor = {"next_after": rows[-1].seq if rows else after}
    return {"checkpoints": [checkpoints.as_json(c, campaign.slug) for c in rows], "head": campaign.last_seq,
            **cursor, "has_more": has_more}


@require_GET
def campaign_keys(request, slug):
    """Every member key the log registered, with the seq that added it and the one that revoked it, and
    the seq from which members sign (``signed_from``, null where they do not): what a member's browser
    reads to know whether its key is live (static/talekeeper/keys.js). Beside them the campaign's id, the
    session running and its dice commitment: what a command sent now is signed with
    (tools/talekeeper_client.py). Keys are added and revoked by
    signed commands (``add_member_key``, ``revoke_member_key``), like every other."""
    try:
        campaign, membership = access_request(request, slug)
    except ActionError as e:
        return error_response(e)
    return JsonResponse(member_keys.keys_json(campaign, current_commitment(campaign)))


def _preview_odds(campaign, character, membership, action) -> dict:
    # The odds as the member may know them: hidden events' effects stay out (docs/hidden-information.md).
    try:
        return campaign.rules.preview(visible_state(character, Viewer.of(membership)), action)
    except RuleError as e:
        raise rule_refusal(e)
