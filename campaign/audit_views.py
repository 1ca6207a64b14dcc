"""The GM's audit pages, the members' dice statistics, and the export API.

Pages (server-rendered):

* ``/campaigns/<slug>/audit/``: the log filtered and paginated, the chain and
  dice verification, sessions, points per character and dice statistics for
  the events filtered. GM only: anyone else gets the same 404 as an outsider.
* ``/campaigns/<slug>/audit/sheet/?character=ID&a=SEQ[&b=SEQ]``: a sheet as of
  event A, and what changed between A and B. GM only.
* ``/campaigns/<slug>/audit/advancement/``: every character's points history. GM only.
* ``/campaigns/<slug>/sessions/<n>/dice/``: "were the dice fair tonight?" for
  any member, counting only the dice they may see.

API (session cookie or bearer token, members only, every event through
``for_viewer``):

* ``GET /api/campaigns/<slug>/export.jsonl[?session=N&header=1]`` and
  ``export.csv[?session=N]``: streamed a page at a time.
* ``GET /api/campaigns/<slug>/dice-stats[?session=N&character=ID]``.
"""

from __future__ import annotations

import json
import re
import uuid

from asgiref.sync import sync_to_async
from django import forms
from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.handlers.asgi import ASGIRequest
from django.core.exceptions import PermissionDenied
from django.http import Http404, JsonResponse, StreamingHttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.http import urlencode
from django.utils.safestring import mark_safe
from django.views.decorators.http import require_GET, require_POST

from . import audit, exports, stats
from .actions import ActionError, Conflict, NotFound, access_campaign
from .eventlog import serialize_event, verify_chain
from .pipeline import access_request, error_response, submit
from .fairdice import verify_session
from .actions.kept import characters_for
from .models import Character, Event, Membership
from .signed_forms import envelope, form_data, prepared, preparing
from .visibility import Viewer

# Up to this many events the chain is verified on every visit (well under a
# second); a longer log is verified when the GM asks (about 4 s per 100k events).
AUTO_VERIFY_MAX = getattr(settings, "AUDIT_AUTO_VERIFY_MAX", 20_000)
MAX_NUMBER = 10**17
# What a member is told on a page only the GM opens (the 403 page says it).
GM_ONLY = "This page is the GM's: only the campaign's GM opens it."
HISTORY_ROWS = 100  # latest points changes shown per character unless all are asked for


def _gm(request, slug):
    """The campaign and membership of its GM: a 404 for an outsider (who learns nothing of the
    campaign), a 403 for a member, who knows it is there and is told the page is the GM's."""
    try:
        campaign, membership = access_campaign(request.user, slug)
    except ActionError:
        raise Http404("There is no campaign here that you are a member of.")
    if not membership.is_gm:
        raise PermissionDenied(GM_ONLY)
    return campaign, membership


def _number(value, lo: int = 0, hi: int = MAX_NUMBER) -> int | None:
    """A whole number from a query string, or None if absent or not one."""
    # ASCII digits only: str.isdigit() also accepts '²', which int() refuses.
    if value is None or not re.fullmatch(r"[0-9]{1,18}", str(value)):
        return None
    number = int(value)
    return number if lo <= number <= hi else None


# --- the audit page --------------------------------------------------------------------------------

class LogFilterForm(forms.Form):
    session = forms.TypedChoiceField(label="Session", required=False, coerce=int, empty_value=None)
    scene = forms.IntegerField(label="Scene", required=False, min_value=1)
    character = forms.TypedChoiceField(label="Character", required=False, coerce=int, empty_value=None)
    type = forms.ChoiceField(label="Event type", required=False)
    actor = forms.TypedChoiceField(label="Actor", required=False, coerce=int, empty_value=None)
    start = forms.IntegerField(label="From event #", required=False, min_value=1)

    def __init__(self, data, campaign, characters, members, types):
        super().__init__(data)
        self.fields["session"].choices = [("", "All sessions")] + [
            (n, f"Session {n}") for n in range(1, campaign.session_count + 1)]
        self.fields["scene"].widget.attrs.update(max=max(campaign.scene_count, 1), placeholder="any")
        self.fields["character"].choices = [("", "All characters")] + [(c.id, c.name) for c in characters]
        self.fields["type"].choices = [("", "All types")] + [(t, t) for t in types]
        self.fields["actor"].choices = [("", "Anyone")] + [(m.user_id, m.user.username) for m in members]
        self.fields["start"].widget.attrs.update(placeholder=f"1–{campaign.last_seq}")

    def log_filter(self) -> audit.LogFilter:
        if not self.is_bound or not self.is_valid():
            return audit.LogFilter()
        data = self.cleaned_data
        return audit.LogFilter(session=data["session"], scene=data["scene"], character=data["character"],
                               type=data["type"] or None, actor=data["actor"])


def _charts(die_stats: stats.DiceStats, prefix: str, caption: str = "") -> list[dict]:
    return [{"die": die, "svg": mark_safe(stats.svg_chart(die, f"{prefix}-d{die.sides}", caption))
             if die.sides <= stats.MAX_CHART_SIDES else None}
            for die in die_stats.dice]


def _scope_text(flt: audit.LogFilter, characters, members) -> str:
    if not flt.active:
        return "every session"
    parts = []
    if flt.session is not None:
        parts.append(f"session {flt.session}")
    if flt.scene is not None:
        parts.append(f"scene {flt.scene}")
    if flt.character is not None:
        parts.append(next((c.name for c in characters if c.id == flt.character), f"character {flt.character}"))
    if flt.actor is not None:
        parts.append("rolled by " + next((m.user.username for m in members if m.user_id == flt.actor), "?"))
    if flt.type:
        parts.append(f"“{flt.type}” events")
    return ", ".join(parts)


def _points_of(character) -> dict:
    """Points as the character's projection (folded from the log) holds them now."""
    try:
        points = character.projection.state.get("points") or {}
    except Character.projection.RelatedObjectDoesNotExist:
        points = {}
    earned, spent = points.get("earned", 0), points.get("spent", 0)
    return {"earned": earned, "spent": spent, "available": earned - spent}


@login_required
@require_GET
def audit_page(request, slug):
    campaign, membership = _gm(request, slug)
    characters = list(Character.objects.filter(campaign=campaign).select_related("owner", "projection"))
    for c in characters:
        c.points = _points_of(c)
    members = list(Membership.objects.filter(campaign=campaign).select_related("user").order_by("role", "user__username"))
    form = LogFilterForm(request.GET if any(k in request.GET for k in ("session", "scene", "character", "type",
                                                                          "actor", "start")) else None,
                         campaign, characters, members, audit.event_types(campaign))
    flt = form.log_filter()
    start = form.cleaned_data.get("start") if form.is_bound and form.is_valid() else None
    after, before = _number(request.GET.get("after")), _number(request.GET.get("before"), 1)
    if start is not None:
        after, before = start - 1, None
    page = audit.log_page(campaign, flt, after=after, before=before, size=audit.PAGE_SIZE)
    for data in page.events:
        data["payload_json"] = json.dumps(data["payload"], indent=2, sort_keys=True, ensure_ascii=False)

    chain = None
    if campaign.last_seq <= AUTO_VERIFY_MAX or request.GET.get("verify") == "chain":
        chain = verify_chain(campaign)
    session_rows = audit.sessions(campaign)
    checked = _number(request.GET.get("verify_dice"), 1)
    dice_reports = {}
    if checked is not None and any(s.number == checked for s in session_rows):
        dice_reports[checked] = verify_session(campaign, checked)

    die_stats = stats.dice_stats(campaign, Viewer.of(membership), session=flt.session, scene=flt.scene,
                                 character=flt.character, type=flt.type, actor=flt.actor)
    base = reverse("audit", args=[campaign.slug])
    keep = flt.params()
    return render(request, "audit.html", {
        "campaign": campaign,
        "membership": membership,
        "form": form,
        "filter": flt,
        "page": page,
        "keep": keep,
        "keep_query": urlencode(keep),
        "first_url": f"{base}?{urlencode(keep)}" if keep else base,
        "previous_url": f"{base}?{urlencode({**keep, 'before': page.first_seq})}" if page.has_previous else None,
        "next_url": f"{base}?{urlencode({**keep, 'after': page.last_seq})}" if page.has_next else None,
        "last_url": f"{base}?{urlencode({**keep, 'before': campaign.last_seq + 1})}",
        "chain": chain,
        "auto_verify_max": AUTO_VERIFY_MAX,
        "sessions": session_rows,
        "dice_reports": dice_reports,
        "characters": characters,
        "stats": die_stats,
        "charts": _charts(die_stats, "audit"),
        "scope": _scope_text(flt, characters, members),
    })


# --- sheets as of an event, and differences ------------------------------------------------------

class SheetForm(forms.Form):
    character = forms.TypedChoiceField(label="Character", coerce=int)
    a = forms.IntegerField(label="As of event #", min_value=1, required=False)
    b = forms.IntegerField(label="Compare with event #", min_value=1, required=False)

    def __init__(self, data, campaign, characters):
        super().__init__(data)
        self.fields["character"].choices = [(c.id, c.name) for c in characters]
        for name in ("a", "b"):
            self.fields[name].widget.attrs.update(max=campaign.last_seq, placeholder=f"1–{campaign.last_seq}")
        self.campaign = campaign

    def clean(self):
        data = super().clean()
        for name in ("a", "b"):
            if data.get(name) is not None and data[name] > self.campaign.last_seq:
                self.add_error(name, f"The log has {self.campaign.last_seq} events.")
        return data


def _event_at(campaign, seq: int | None) -> dict | None:
    if seq is None:
        return None
    row = Event.objects.filter(campaign=campaign, seq=seq).select_related("actor", "character").first()
    if row is None:
        return None
    data = serialize_event(row)
    data["summary"] = audit.describe(data, campaign.rules, audit.voided_events(campaign, [data]))
    return data


@login_required
@require_GET
def audit_sheet(request, slug):
    campaign, membership = _gm(request, slug)
    characters = list(Character.objects.filter(campaign=campaign).select_related("owner"))
    form = SheetForm(request.GET if "character" in request.GET else None, campaign, characters)
    context = {"campaign": campaign, "form": form, "characters": characters}
    if form.is_bound and form.is_valid():
        character = next(c for c in characters if c.id == form.cleaned_data["character"])
        a = form.cleaned_data["a"] or campaign.last_seq
        b = form.cleaned_data["b"]
        states = audit.states_as_of(character, [a] if b is None else [a, b])
        state_a = states[a]
        context.update(character=character, a=a, b=b, state_a=state_a, rows_a=audit.sheet_rows(state_a),
                       event_a=_event_at(campaign, a))
        mine = Event.objects.filter(campaign=campaign, character=character)
        context["previous_seq"] = mine.filter(seq__lt=a).order_by("-seq").values_list("seq", flat=True).first()
        context["next_seq"] = mine.filter(seq__gt=a).order_by("seq").values_list("seq", flat=True).first()
        if b is not None:
            state_b = states[b]
            context.update(state_b=state_b, event_b=_event_at(campaign, b),
                           changes=audit.sheet_diff(state_a, state_b))
    return render(request, "audit_sheet.html", context)


# --- advancement ------------------------------------------------------------------------------------

@login_required
@require_GET
def audit_advancement(request, slug):
    campaign, membership = _gm(request, slug)
    return _advancement_page(request, campaign, AwardForm(None, campaign, _characters(campaign)))


AWARD = "award_points"  # every rule system's (rules/*/actions.py): points and a reason


def _characters(campaign) -> list[Character]:
    return list(Character.objects.filter(campaign=campaign).select_related("owner"))


class AwardForm(forms.Form):
    """The GM's award between sessions: points for any of the characters, one reason for all.

    Each character's points go in as its own ``award_points`` command, through the one pipeline,
    with the command id ``award-<token>-<character>``: the token is drawn once per form shown, so
    sending the same form again (a reload, a double click) stores nothing twice."""

    token = forms.RegexField(r"^[0-9a-f]{32}$", widget=forms.HiddenInput)

    def __init__(self, data, campaign, characters):
        super().__init__(data, initial={"token": uuid.uuid4().hex})
        self.help = campaign.rules.actions[AWARD].help
        declared = campaign.rules.actions[AWARD].fields  # the limits and words come from the rules
        points, reason = declared["points"], declared["reason"]
        self.points_label, self.characters = points.label or "Points", characters
        # the label inside a sentence: "points", but TOTE's "XP" stays "XP" (not "xp")
        self.points_words = self.points_label if self.points_label.isupper() else self.points_label.lower()
        for c in characters:
            self.fields[f"points-{c.id}"] = forms.IntegerField(
                label=f"{self.points_label} for {c.name}", min_value=points.lo, max_value=points.hi, required=False)
        self.fields["reason"] = forms.CharField(label=reason.label or "Reason", max_length=reason.max_length,
                                                required=not reason.optional, strip=True)

    def rows(self):
        return [(c, self[f"points-{c.id}"]) for c in self.characters]

    def awards(self) -> list[tuple[Character, dict]]:
        """``(character, action)`` for each character given points."""
        reason = self.cleaned_data["reason"]
        return [(c, {"type": AWARD, "character": c.id, "points": n, **({"reason": reason} if reason else {})})
                for c in self.characters if (n := self.cleaned_data[f"points-{c.id}"]) is not None]


@login_required
@require_POST
def audit_award(request, slug):
    campaign, membership = _gm(request, slug)
    form = AwardForm(request.POST, campaign, _characters(campaign))
    if preparing(request):  # the page asks what to sign (campaign/signed_forms.py); an invalid form: nothing
        return prepared(campaign, [{"id": f"award-{form.cleaned_data['token']}-{character.id}", "action": action}
                                   for character, action in form.awards()] if form.is_valid() else [])
    if not form.is_valid():
        return _advancement_page(request, campaign, form, status=400)
    if not form.awards():
        form.add_error(None, f"Give {form.points_words} to at least one character.")
        return _advancement_page(request, campaign, form, status=400)
    awarded, before = [], []  # stored now; stored by an earlier send of this form (nothing stored again)
    for character, action in form.awards():
        command_id = f"award-{form.cleaned_data['token']}-{character.id}"
        try:
            result = submit(membership, envelope(request, action, command_id))
        except Conflict:  # this form's id for the character, sent before with other points or reason
            form.add_error(f"points-{character.id}", _sent_before(campaign, membership, command_id, form, character))
        except ActionError as e:
            form.add_error(f"points-{character.id}", e.message)
        else:
            (before if result.replayed else awarded).append(f"{action['points']} to {character.name}")
    if awarded:
        messages.success(request, f"Awarded {form.points_label}: {', '.join(awarded)}.")
    if before:
        messages.info(request, f"Already awarded by this form, not again: {', '.join(before)}.")
    if form.errors:  # the same form again, the same ids: what was stored is not stored twice
        return _advancement_page(request, campaign, form, status=422)
    return redirect("audit-advancement", slug=campaign.slug)


def _sent_before(campaign, membership, command_id: str, form: AwardForm, character) -> str:
    """What the GM is told when this form is sent again with other points (or another reason) for
    a character: the form's ids are the first send's, and the pipeline's own words ("Command id …
    was already used") mean nothing at the table. It says what the first send awarded."""
    first = (Event.objects.filter(campaign=campaign, command__actor=membership.user, command__client_id=command_id)
             .order_by("seq").values_list("payload__points", flat=True).first())
    awarded = f" (it awarded {first})" if first is not None else ""
    return (f"This form was already sent for {character.name} with other {form.points_words} or another "
            f"reason{awarded}: nothing more was awarded. To award again, open the advancement page again "
            f"for a new form.")


def _advancement_page(request, campaign, form: AwardForm, status: int = 200):
    character = _number(request.GET.get("character"), 1)
    everything = request.GET.get("all") == "1"
    every = audit.advancement(campaign)  # one replay either way; the award form lists everyone
    report = [adv for adv in every if character is None or adv.character_id == character]
    for adv in report:
        adv.shown = adv.history if everything else adv.history[-HISTORY_ROWS:]
    available = {adv.character_id: adv.available for adv in every}
    return render(request, "audit_advancement.html", {
        "campaign": campaign,
        "advancement": report,
        "one": character is not None,
        "award": form,
        "award_rows": [(c, field, available.get(c.id)) for c, field in form.rows()],
        "signed_form": form_data(request, campaign),
    }, status=status)


# --- dice statistics for members -----------------------------------------------------------------

@login_required
@require_GET
def session_dice(request, slug, number):
    try:
        campaign, membership = access_campaign(request.user, slug)
    except ActionError:
        raise Http404("There is no campaign here that you are a member of.")
    session = next((s for s in audit.sessions(campaign) if s.number == number), None)
    if session is None:
        raise Http404(f"This campaign has no session {number}.")
    characters = list(characters_for(membership))
    character = _number(request.GET.get("character"), 1)
    if character is not None and not any(c.id == character for c in characters):
        character = None
    die_stats = stats.dice_stats(campaign, Viewer.of(membership), session=number, character=character)
    return render(request, "audit_dice.html", {
        "campaign": campaign,
        "membership": membership,
        "session": session,
        "characters": characters,
        "character": next((c for c in characters if c.id == character), None),
        "stats": die_stats,
        "charts": _charts(die_stats, f"session-{number}"),
    })


# --- the API: exports and statistics ------------------------------------------------------------------

def _session_param(request, campaign) -> int | None:
    raw = request.GET.get("session")
    if raw in (None, ""):
        return None
    number = _number(raw, 1)
    if number is None:
        raise ActionError("'session' must be the number of a play session (1, 2, ...).")
    try:
        exports.session_bounds(campaign, number)
    except exports.NoSuchSession as e:
        raise NotFound(str(e))
    return number


def _next_chunk(iterator):
    return next(iterator, None)


def _streamed(request, chunks):
    """Under ASGI (daphne) stream through an async iterator, each chunk made in
    the request's thread, so nothing is gathered in memory; under WSGI as is."""
    if not isinstance(request, ASGIRequest):
        return chunks

    async def stream():
        iterator = iter(chunks)
        step = sync_to_async(_next_chunk, thread_sensitive=True)
        while (chunk := await step(iterator)) is not None:
            yield chunk

    return stream()


def _export(request, slug, kind: str):
    try:
        campaign, membership = access_request(request, slug)
        session = _session_param(request, campaign)
    except ActionError as e:
        return error_response(e)
    viewer = Viewer.of(membership)
    pages = exports.event_pages(campaign, viewer, session, head=campaign.last_seq)
    if kind == "jsonl":
        head = None
        if request.GET.get("header") in ("1", "true", "yes"):
            head = exports.header(campaign, full=False, session=session, viewer=viewer,
                                  viewer_name=membership.user.get_username())
        chunks, content_type = exports.jsonl_chunks(pages, head), "application/x-ndjson; charset=utf-8"
    else:
        chunks, content_type = exports.csv_chunks(pages, campaign, viewer), "text/csv; charset=utf-8"
    response = StreamingHttpResponse(_streamed(request, chunks), content_type=content_type)
    response["Content-Disposition"] = f'attachment; filename="{exports.filename(campaign, session, kind)}"'
    response["Cache-Control"] = "private, no-store"
    return response


@require_GET
def export_jsonl(request, slug):
    return _export(request, slug, "jsonl")


@require_GET
def export_csv(request, slug):
    return _export(request, slug, "csv")


@require_GET
def dice_stats_api(request, slug):
    try:
        campaign, membership = access_request(request, slug)
        session = _session_param(request, campaign)
    except ActionError as e:
        return error_response(e)
    character = _number(request.GET.get("character"), 1)
    if request.GET.get("character") not in (None, "") and character is None:
        return error_response(ActionError("'character' must be the id (a number) of a character in this campaign."))
    die_stats = stats.dice_stats(campaign, Viewer.of(membership), session=session, character=character)
    return JsonResponse({"session": session, "character": character, **die_stats.as_json()})
