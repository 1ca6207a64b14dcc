"""Exports of a campaign's log, or of one session of it: JSON Lines and CSV.

The format is documented in docs/audit.md. In short:

* **JSON Lines**: one event per line, in seq order, each exactly as
  :func:`campaign.eventlog.serialize_event` gives it (plus ``"voided": true`` when a
  later event the reader may see voided it), keys sorted. Optionally the first line is a header,
  ``{"type": "export_header", "format": "talekeeper-export", ...}``: it has no
  ``seq``, so a consumer of events skips it by that (or by its type).
* **CSV**: one row per event under a header row of column names.

Members' exports (the API) pass every event through
:func:`campaign.visibility.for_viewer`: a player never receives dice they may
not see. The operator's ``manage.py export_log`` writes the full log.

The log is read a page at a time with :func:`campaign.eventlog.events_after`, up to
the head as it was when the export began, so an export of 100k events never
holds more than one page in memory and is a consistent prefix of the log.
"""

from __future__ import annotations

import csv
import io
import json
from typing import Iterator

from django.contrib.auth import get_user_model
from django.db.models import Max, Min
from django.utils import timezone

from .audit import describe, dice_text, named_readers, voided_events
from .eventlog import events_after, timestamp
from .models import SHOWN_FULL, SHOWN_HIDDEN, Campaign, Character, DiceSeed, Event, Membership
from .visibility import Viewer, as_stored, for_viewer

FORMAT = "talekeeper-export"
FORMAT_VERSION = 1
HEADER_TYPE = "export_header"
PAGE = 500


class NoSuchSession(Exception):
    pass


def session_bounds(campaign: Campaign, session: int) -> tuple[int, int]:
    """The first and last seq of a play session (its events are contiguous)."""
    bounds = Event.objects.filter(campaign=campaign, session=session).aggregate(first=Min("seq"), last=Max("seq"))
    if bounds["first"] is None:
        raise NoSuchSession(f"This campaign has no session {session}.")
    return bounds["first"], bounds["last"]


def stored_pages(campaign: Campaign, session: int | None = None, head: int | None = None,
                 page: int | None = None) -> Iterator[tuple[list[dict], set[int]]]:
    """The log (or one session of it) as stored, a page at a time: ``(events, revealed)``.

    ``head`` (default: the campaign's ``last_seq`` now) is where the export stops,
    so events appended meanwhile are left for the next export.
    """
    last = campaign.last_seq if head is None else head
    page = page or PAGE
    after = 0
    if session is not None:
        first, session_last = session_bounds(campaign, session)
        after, last = first - 1, min(last, session_last)
    while after < last:
        events, revealed = events_after(campaign.id, after, page)
        if not events:
            break
        after = events[-1]["seq"]
        events = [e for e in events if e["seq"] <= last and (session is None or e["session"] == session)]
        if events:
            yield events, revealed


def event_pages(campaign: Campaign, viewer: Viewer | None, session: int | None = None,
                head: int | None = None) -> Iterator[list[dict]]:
    """Pages of events as ``viewer`` may see them (``None``: the operator's full log)."""
    for events, revealed in stored_pages(campaign, session, head):
        yield [as_stored(e) if viewer is None else for_viewer(e, viewer, revealed) for e in events]


# --- the header line ----------------------------------------------------------------------------

def _created_at(character: Character, viewer: Viewer | None) -> str | None:
    """When the character was made; ``None`` for a player of an NPC they may not see in full: the
    time would find the sealed event that made it in their own export."""
    if character.npc and character.shown != SHOWN_FULL and viewer is not None and not viewer.is_gm:
        return None
    return timestamp(character.created_at)


def header(campaign: Campaign, *, full: bool, session: int | None = None, viewer_name: str | None = None,
           viewer: Viewer | None = None) -> dict:
    """What an export is of: the campaign, its users, members and characters.

    ``full`` (the operator's export, which ``import_log`` can load) adds what only
    the operator may have: the invite code, users' account details, and the
    dice seeds of finished sessions (never a running session's: it is secret).
    """
    User = get_user_model()
    members = list(Membership.objects.filter(campaign=campaign).select_related("user").order_by("id"))
    characters = Character.objects.filter(campaign=campaign).select_related("owner")
    if viewer is not None and not viewer.is_gm:
        characters = characters.exclude(npc=True, shown=SHOWN_HIDDEN)  # a hidden NPC does not exist for them
    characters = list(characters)
    user_ids = {m.user_id for m in members} | {c.owner_id for c in characters if c.owner_id}
    user_ids |= set(Event.objects.filter(campaign=campaign, actor__isnull=False).order_by("actor_id")
                    .values_list("actor_id", flat=True).distinct())
    users = User.objects.filter(pk__in=user_ids).order_by("pk")
    data = {
        "type": HEADER_TYPE,
        "format": FORMAT,
        "version": FORMAT_VERSION,
        "exported_at": timestamp(timezone.now()),
        "scope": "session" if session is not None else "campaign",
        "session": session,
        "visibility": "full" if viewer is None else ("gm" if viewer.is_gm else "member"),
        "viewer": viewer_name,
        "head": {"seq": campaign.last_seq, "hash": campaign.head_hash},
        "campaign": {"id": campaign.id, "slug": campaign.slug, "name": campaign.name, "system": campaign.system,
                     "created_at": timestamp(campaign.created_at)},
        "users": [{"id": u.pk, "username": u.get_username()} for u in users],
        "members": [{"user_id": m.user_id, "username": m.user.get_username(), "role": m.role,
                     "joined_at": timestamp(m.joined_at)} for m in members],
        "characters": [{"id": c.id, "name": c.name, "owner_id": c.owner_id,
                        "owner": c.owner.get_username() if c.owner else None,
                        "created_at": _created_at(c, viewer), "npc": c.npc, "shown": c.shown} for c in characters],
    }
    if full:
        data["campaign"].update(invite_code=campaign.invite_code, session_count=campaign.session_count,
                                current_session=campaign.current_session, scene_count=campaign.scene_count,
                                current_scene=campaign.current_scene)
        data["users"] = [{"id": u.pk, "username": u.get_username(), "email": u.email, "first_name": u.first_name,
                          "last_name": u.last_name, "is_active": u.is_active,
                          "date_joined": timestamp(u.date_joined)} for u in users]
        # Never the seed of a running session: whoever holds it could predict
        # every die still to come (docs/fair-dice.md, "Backups").
        seeds = DiceSeed.objects.filter(campaign=campaign).order_by("session")
        if campaign.current_session is not None:
            seeds = seeds.exclude(session=campaign.current_session)
        data["dice_seeds"] = [{"session": s.session, "seed": s.seed, "created_at": timestamp(s.created_at)}
                              for s in seeds]
    return data


def is_header(data: dict) -> bool:
    return isinstance(data, dict) and data.get("type") == HEADER_TYPE and "seq" not in data


# --- JSON Lines -----------------------------------------------------------------------------

def json_line(data: dict) -> str:
    """One line of an export: keys sorted, UTF-8 text unescaped (as ``export_log`` always wrote)."""
    return json.dumps(data, sort_keys=True, ensure_ascii=False)


def jsonl_chunks(pages: Iterator[list[dict]], head_line: dict | None = None) -> Iterator[str]:
    """The export as text, one chunk per page of events."""
    if head_line is not None:
        yield json_line(head_line) + "\n"
    for events in pages:
        yield "".join(json_line(e) + "\n" for e in events)


# --- CSV ------------------------------------------------------------------------------------

CSV_COLUMNS = ["seq", "created_at", "session", "scene", "type", "visibility", "actor", "actor_id", "character",
               "character_name", "hidden", "voided", "summary", "dice", "payload", "prev_hash", "hash"]
# A cell starting with one of these is a formula to a spreadsheet: written with a leading '.
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def _cell(value) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    text = str(value)
    return "'" + text if isinstance(value, str) and text.startswith(FORMULA_START) else text


def visibility_cell(data: dict) -> str | None:
    """The ``visibility`` column: as stored, plus the members a ``gm`` event names as its readers
    besides the GM (``gm (alice, bob)``): "gm" alone would tell alice, or the GM, that only the GM
    reads an event alice reads too. A sealed row's stub names nobody: it says ``gm``. (Commas and
    brackets are not in any username; ``+`` is, so ``gm+alice+bob`` could be read two ways.)"""
    visibility, readers = data.get("visibility"), named_readers(data)
    return f"{visibility} ({', '.join(readers)})" if visibility and readers else visibility


def csv_row(data: dict, rules=None, voided: dict[int, dict] | None = None) -> list[str]:
    """One event's row; its summary is the audit page's line (``rules``, ``voided``: :func:`campaign.audit.describe`)."""
    payload = data.get("payload") or {}
    return [_cell(v) for v in (
        data["seq"], data["created_at"], data.get("session"), data.get("scene"), data["type"], visibility_cell(data),
        data.get("actor"), data.get("actor_id"), data.get("character"), data.get("character_name"),
        bool(data.get("hidden")), bool(data.get("voided")), describe(data, rules, voided), dice_text(payload),
    )] + [json.dumps(payload, sort_keys=True, ensure_ascii=False), data.get("prev_hash", ""), data.get("hash", "")]


def csv_chunks(pages: Iterator[list[dict]], campaign: Campaign, viewer: Viewer | None) -> Iterator[str]:
    """The CSV as text, one chunk per page of events as ``viewer`` may see them (:func:`event_pages`)."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\r\n")
    writer.writerow(CSV_COLUMNS)
    yield buffer.getvalue()
    for events in pages:
        buffer.seek(0)
        buffer.truncate()
        voided, rules = voided_events(campaign, events, viewer), campaign.rules
        writer.writerows(csv_row(e, rules, voided) for e in events)
        yield buffer.getvalue()


def filename(campaign: Campaign, session: int | None, extension: str) -> str:
    return f"{campaign.slug}{f'-session-{session}' if session is not None else ''}.{extension}"
