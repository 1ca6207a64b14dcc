"""NPCs and opponents: characters the GM owns, shown to the players as the GM chooses.

``shown`` is ``hidden`` (the players do not know it exists), ``name`` (they see
its name, never its sheet) or ``full`` (like any character). What a player may
not see never reaches them, through the one visibility filter:

* an NPC's own events (its creation with the sheet, its rolls, adjustments)
  are stored ``gm`` while it is not fully shown (``kept.stored_visibility``),
  so every player receives them sealed; a reveal shows one later;
* a hidden NPC is left out of every list and read (``kept.characters_for``,
  ``access_character_for_reading``), with the same "no such character" as
  an id that does not exist; a name-only one is listed by name, its state
  never served;
* ``show_npc`` changes what the players see from then on (event ``npc_shown``).

Why the events and not a filter on payloads: a sealed stub is the one shape
hidden information takes (docs/hidden-information.md), and members verify the
chain with it.
"""

from __future__ import annotations

from rules import RuleError
from rules.declare import Choice
from rules.npc import quick_sheet

from ..errors import ActionError, Forbidden, Refused
from ..eventlog import Draft
from ..models import SHOWN_FULL, SHOWN_HIDDEN, VISIBILITY_GM, VISIBILITY_PUBLIC, Campaign, Event, Membership
from ..visibility import readers
from .access import access_character
from .declared import character_id, platform_action
from .encounters import in_running_encounter
from .kept import SHOWN
from .log_entries import decide_reveal

NPC_SHOWN = "npc_shown"


def read_npc_fields(campaign: Campaign, membership: Membership, action: dict) -> tuple[bool, str, dict | None]:
    """``(npc, shown, quick sheet or None)`` of a ``create_character`` action."""
    npc = action.get("npc", False)
    if not isinstance(npc, bool):
        raise ActionError("'npc' must be true or false.")
    if not npc:
        for key in ("shown", "quick"):
            if action.get(key) is not None:
                raise ActionError(f"'{key}' is for NPCs: add \"npc\": true.")
        return False, SHOWN_FULL, None
    if not membership.is_gm:
        raise Forbidden("Only the GM can make NPCs.")
    shown = action.get("shown", SHOWN_HIDDEN)
    if shown not in SHOWN:
        raise ActionError(f"'shown' must be one of: {', '.join(SHOWN)}.")
    quick = None
    if action.get("quick") is not None:
        if action.get("sheet") is not None:
            raise ActionError("Give a 'sheet' or a 'quick' template, not both.")
        try:
            quick = quick_sheet(campaign.rules, action["quick"])
        except RuleError as e:
            raise ActionError(e.message, e.code)
    return True, shown, quick


@platform_action("show_npc", title="Choose what the players see of an NPC", by="gm",
                 gm="choose what the players see of an NPC", emits=("npc_shown",),
                 fields={"character": character_id(label="NPC"), "shown": Choice(SHOWN, label="Shown")})
def decide_show_npc(campaign: Campaign, membership: Membership, action: dict, *_) -> list[Draft]:
    """GM: what the players see of an NPC from now on (``shown``: hidden, name or full).

    Shown fully, its creation (the sheet) is revealed too, so the players' view of its state
    starts there, and so are the voids the GM made of its public (or revealed) events while it was
    kept; its rolls made while it was hidden stay sealed until the GM reveals them."""
    character = access_character(membership, action.get("character"))
    if not character.npc:
        raise Refused(f"{character.name} is a player's character: the table always sees them.")
    shown = action.get("shown")
    if shown not in SHOWN:
        raise ActionError(f"'shown' must be one of: {', '.join(SHOWN)}.")
    if shown == character.shown:
        raise Refused(f"{character.name} is already shown that way.")
    if shown == SHOWN_HIDDEN and in_running_encounter(campaign, character):
        raise Refused(f"{character.name} is in the running encounter's turn order: the table sees it there.")
    before = character.shown
    character.shown = shown  # as the decisions below read it; record writes the row from the event
    # The change itself: the table learns of a name (or a sheet) as it is shown; hiding it again is the GM's note.
    drafts = [Draft(NPC_SHOWN, {"name": character.name, "from": before, "shown": shown}, 1, character,
                    VISIBILITY_GM if shown == SHOWN_HIDDEN else VISIBILITY_PUBLIC)]
    created = Event.objects.get(character=character, type="character_created")
    if shown != SHOWN_FULL:
        return drafts
    if created.visibility != VISIBILITY_PUBLIC and not readers.revealed(created):
        drafts += decide_reveal.decide(campaign, membership, {"seq": created.seq})
    # A void is read by its target's readers (decide_void): one the GM made of an event the table
    # reads while it was kept (the void was hers) comes out now, or its sheet, which leaves the
    # event out, would tell the table of a void it may not read.
    for void in (Event.objects.filter(campaign=campaign, character=character, type="event_voided")
                 .exclude(visibility=VISIBILITY_PUBLIC).order_by("seq")):
        seq = void.payload.get("seq")
        target = Event.objects.filter(campaign=campaign, seq=seq).first() if type(seq) is int and 0 < seq < 2**63 else None
        if target is not None and not readers.revealed(void) and (
                target.visibility == VISIBILITY_PUBLIC or readers.revealed(target)):
            drafts += decide_reveal.decide(campaign, membership, {"seq": void.seq})
    return drafts
