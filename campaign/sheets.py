"""Character sheets as a member may see them: fetched (``GET .../characters/<id>``) or pushed with events.

A browser does not fetch the sheet of every character an event concerns (once
per event and per browser): the broadcast of an event carries
the changed sheets, once per *sheet class*, and each socket picks its class
(sessions/consumers.py). The sheets of a public action of a player's character
with nothing hidden are the ones its command holds (:func:`sheets_in_hand`, no
query: most commands); the others are read after the commit (:func:`pushed_sheets`).
The classes:

* ``gm``: the GM sees every hidden roll, so the sheet is the projection;
* ``"<user id>"``: a member who made secret rolls of this character that are
  still hidden from the others, or whom a GM's hidden event about it names as a
  reader (``shared_with``, campaign/visibility/readers.py), sees the sheet with those;
* ``all``: everyone else (players and spectators), without any unrevealed
  hidden roll; absent for an NPC whose sheet the GM keeps to themselves.

Only the GM, a secret roll's actor and the readers a hidden event names may see more than ``all``
(campaign.visibility.filter.may_see), so these classes cover every member, and each
class's sheet is exactly what :func:`sheet` returns for a member of it.
"""

from __future__ import annotations

import logging

from rules.conditions import APPLIED as CONDITION_APPLIED
from rules.conditions import TURN_EVENTS

from .eventlog import marks_after
from .models import ROLE_GM, ROLE_PLAYER, SHOWN_FULL, VISIBILITY_PUBLIC, VISIBILITY_SECRET, Character, Event
from .projections import CAMPAIGN_WIDE, VOID, plain_json, sides_of
from .visibility import Viewer, hidden_folded_from, shared_ids, visible_fold

log = logging.getLogger(__name__)
GM = "gm"
ALL = "all"
# Events after which every character's sheet may change (scene-scoped things lapse, settings change).
EVERY_SHEET = CAMPAIGN_WIDE  # the fold applies these to every character (campaign/projections.py)
# Events after which a sheet is not what the command holds: a void replays its character after
# the write; a new character has no projection yet; showing an NPC changes its row.
IDENTITY_EVENTS = frozenset({VOID, "character_created", "npc_shown"})


def sheet(character: Character, viewer: Viewer) -> dict:
    """The sheet ``viewer`` may see now: the body of ``GET /api/campaigns/<slug>/characters/<id>``."""
    state, seq = visible_fold(character, viewer)
    return sheet_body(character, owner_name(character), seq, state)


def sheet_body(character: Character, owner: str | None, seq: int, state: dict | None, rules=None) -> dict:
    """``advances``: what each advance would cost the character now, by its rules (``RuleSystem.advances``:
    the prices ``buy_advance`` charges, so the form shows them without pricing anything itself), for
    the state given; absent for a system whose sheet holds its prices as they are (WYRM's)."""
    return {"character": character.id, "name": character.name, "owner": owner, "seq": seq, "state": state,
            **priced(rules or character.campaign.rules, state)}


def priced(rules, state: dict | None) -> dict:
    """``{"advances": ...}`` for a sheet's body (or the table page's character), or nothing."""
    advances = rules.advances(state)
    return {} if advances is None else {"advances": advances}


def character_entry(character: Character) -> dict:
    """A character as every member who may know of it knows it: its tab at the table (the table page
    and ``GET .../characters``, for the characters campaign.actions.kept.characters_for lists). Its
    sheet is :func:`sheet`'s, for those who may read it."""
    return {"id": character.id, "name": character.name, "owner": owner_name(character), "npc": character.npc,
            "shown": character.shown}


def owner_name(character: Character) -> str | None:
    # An imported log may name no owner (campaign/exports.py): its sheet has none either.
    return character.owner.username if character.owner_id is not None else None


def sheet_class(sheets: dict, viewer: Viewer) -> str | None:
    """Which of one character's pushed sheets ``viewer`` gets (None: none, an NPC the GM keeps)."""
    if viewer.is_gm:
        return GM if GM in sheets else ALL
    key = str(viewer.user_id)
    return key if key in sheets else ALL if ALL in sheets else None


def changed_by(events: list[dict]) -> set[int] | None:
    """The characters whose sheets ``events`` (serialized) may change: their own and the sides
    of a contest (campaign.projections.sides_of); ``None``: every character's."""
    if any(e["type"] in EVERY_SHEET for e in events):
        return None
    return {c for e in events for c in ([e["character"]] if e.get("character") else []) + sides_of(e.get("payload"))}


def characters_changed(campaign_id: int, events: list[dict]) -> set[int]:
    """The ids of the characters whose sheets may have changed with ``events`` (serialized, as stored)."""
    changed = changed_by(events)
    if changed is not None:
        return changed
    if all(e["type"] in TURN_EVENTS for e in events if e["type"] in EVERY_SHEET):
        # An encounter's turns change only states holding conditions (rules/conditions.py TURN_EVENTS),
        # and a state holds one only after a condition_applied of its character: those, and the
        # characters of the other events. The same set whether the events are a command's or a
        # socket's backlog, where the states of the turns' time are no longer at hand.
        conditioned = Event.objects.filter(campaign_id=campaign_id, type=CONDITION_APPLIED,
                                           seq__lte=events[-1]["seq"]).order_by().values_list("character_id", flat=True)
        return changed_by([e for e in events if e["type"] not in TURN_EVENTS]) | set(conditioned.distinct())
    return set(Character.objects.filter(campaign_id=campaign_id).values_list("pk", flat=True))


def changed_sheets(campaign_id: int, data: list[dict], in_hand: dict[int, dict] | None = None,
                   unchanged: frozenset[int] = frozenset()) -> dict[str, dict] | None:
    """The sheets ``data`` (serialized events) changed, once per sheet class: those a
    command holds (``in_hand``: :func:`sheets_in_hand`), the others read now: after commit for a
    doorbell, after the page for a socket's backlog (sessions/consumers.py). ``unchanged``: characters
    the recording knows the events left as they were (an encounter's turn without conditions,
    campaign/projections.py ``project``): the browsers' sheets of them stand.

    A failed read only costs the browsers a fetch each (no sheets: they ask)."""
    try:
        changed = characters_changed(campaign_id, data) - unchanged
        sheets = {cid: in_hand[cid] for cid in changed if in_hand and cid in in_hand}
        sheets.update(pushed_sheets(campaign_id, changed - sheets.keys()))
        return {str(cid): classes for cid, classes in sheets.items()}
    except Exception:
        log.exception("reading the sheets changed by seq %s failed", data[-1]["seq"])
        return None


def pushed_sheets(campaign_id: int, character_ids: set[int]) -> dict[int, dict[str, dict]]:
    """``{character id: {sheet class: sheet}}`` for the characters' sheets now.

    Two queries when nothing they are folded from is hidden (the characters with their
    projections; the hidden events concerning any of them), a third for the reveals when
    something is, and a replay only for a class that may not see a hidden roll."""
    if not character_ids:
        return {}
    characters = list(Character.objects.select_related("owner", "projection", "campaign")
                      .filter(campaign_id=campaign_id, pk__in=character_ids))
    hidden = hidden_folded_from(campaign_id, {character.id for character in characters})
    revealed: set[int] = set()
    if hidden:
        _, revealed = marks_after(campaign_id, min(r["seq"] for rows in hidden.values() for r in rows) - 1)
    out = {}
    for character in characters:
        # The GM sees every hidden roll, so theirs is the projection (what visible_fold gives them).
        if character.npc and character.shown != SHOWN_FULL:  # only the GM reads it (access_character_for_reading)
            out[character.id] = {GM: projected_sheet(character)}
            continue
        unrevealed = [r for r in hidden.get(character.id, []) if r["seq"] not in revealed]
        if not unrevealed:  # nothing is kept from anyone: everyone's sheet is the projection
            out[character.id] = {ALL: projected_sheet(character)}
            continue
        classes = {GM: projected_sheet(character), ALL: sheet(character, Viewer(user_id=0, role=ROLE_PLAYER))}
        seeing_more = {r["actor_id"] for r in unrevealed if r["visibility"] == VISIBILITY_SECRET and r["actor_id"]}
        for member in seeing_more | {u for r in unrevealed for u in shared_ids(r)}:
            classes[str(member)] = sheet(character, Viewer(user_id=member, role=ROLE_PLAYER))
        out[character.id] = classes
    return out


def sheets_in_hand(events: list[Event]) -> dict[int, dict[str, dict]]:
    """The sheets a command's ``events`` (stored, not yet committed) changed that need no read:
    :func:`pushed_sheets`' answer for them, from what the command holds.

    The common case, a public action of a player's character: the command read the character,
    its projection and whether any event that changed its state is hidden, under the campaign's
    lock (campaign.eventlog.lock_stream), and folded its events into that projection. With no hidden
    change before and only public events now, every member's sheet is that projection
    (:func:`sheet`): a hidden plain roll changes no state, and the command's own public event is
    the last one the sheet is folded from, so its seq is everyone's too. Anything else (an NPC, a
    hidden event now, a contest's sides, a void, a campaign-wide event, a new character) is left
    to :func:`pushed_sheets`, which reads it after the commit."""
    try:
        return _in_hand(events)
    except Exception:  # never fail a command over a sheet: read after the commit instead
        log.exception("pushing the sheets of seq %s from the command failed", events[-1].seq if events else None)
        return {}


def _in_hand(events: list[Event]) -> dict[int, dict[str, dict]]:
    # These are the cases in which campaign.projections.project does not fold into the projection
    # the lock read (campaign-wide events, voids, new characters), or the row itself changes.
    if any(e.type in EVERY_SHEET or e.type in IDENTITY_EVENTS or sides_of(e.payload) for e in events):
        return {}
    out = {}
    for e in events:
        character = e.character if e.character_id and Event.character.is_cached(e) else None
        if character is None or character.id in out:
            continue
        if (character.npc or getattr(character, "any_hidden_changes", True) is not False
                or not Character.projection.is_cached(character) or character.projection is None
                or any(other.character_id == character.id and other.visibility != VISIBILITY_PUBLIC
                       for other in events)):
            return {}  # one read after the commit for all of them, as before
        projection = character.projection
        # owner_name and any_hidden_changes are set together, by campaign.eventlog.lock_stream.
        out[character.id] = {ALL: sheet_body(character, character.owner_name, projection.last_seq,
                                             plain_json(projection.state), e.campaign.rules)}
    return out


def projected_sheet(character: Character) -> dict:
    """:func:`sheet` for a viewer from whom nothing the character is folded from is hidden: its projection."""
    return sheet_body(character, owner_name(character), character.projection.last_seq, character.projection.state)
