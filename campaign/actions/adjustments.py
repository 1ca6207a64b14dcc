"""The GM's hand on a sheet: ``adjust_sheet`` stores a ``sheet_adjusted`` event with a reason.

A house ruling, a correction that is not a mistake to void, a wound from a
scene nobody rolled: the GM sets values of the character's state by path
(``{"changes": {"fate": 4, "sheet.skills.Strike": 3}, "reason": "..."}``).
The event records each change with its old value (the diff the audit shows).
The adjusted sheet must still pass the system's ranges (not its creation
limits: an adjustment is the GM's, like the override at creation).
"""

from __future__ import annotations

import inspect

from rules import RuleError
from rules.common import ADJUSTED, adjusted, plan_adjustment
from rules.declare import Object

from ..eventlog import Draft
from ..models import VISIBILITY_PUBLIC, Campaign, Membership
from ..visibility import Viewer, hidden, readers
from .access import access_character
from .checks import check_reason
from .declared import character_id, platform_action, reason_field
from ..errors import ActionError, Refused
from .kept import stored_readers


def check_established(rules, sheet: dict) -> dict:
    """The system's sheet check without creation limits (TOTE's ``creation=False``), for the GM."""
    if "creation" in inspect.signature(rules.validate_sheet).parameters:
        return rules.validate_sheet(sheet, creation=False)
    return rules.validate_sheet(sheet)


@platform_action("adjust_sheet", title="Adjust a sheet", by="gm", gm="adjust sheets", emits=(ADJUSTED,),
                 help="{path: new value} of numbers, flags or text already in the character's state.",
                 fields={"character": character_id(), "changes": Object(label="Changes"), "reason": reason_field()})
def decide_adjust_sheet(campaign: Campaign, membership: Membership, action: dict, *_) -> Draft:
    character = access_character(membership, action.get("character"))
    reason = check_reason(action, required=True)
    state = character.projection.state
    try:
        changes = plan_adjustment(state, action.get("changes"))
        check_established(campaign.rules, adjusted(state, changes)["sheet"])
    except RuleError as e:
        if e.code == "unchanged":
            raise Refused(e.message, e.code)
        raise ActionError(f"That adjustment does not fit the sheet: {e.message}", "invalid")
    # The old values are read from the whole state: if events hidden from the table shaped it, the
    # adjustment is shared with those who may see them, or the GM's alone (docs/hidden-information.md).
    live, revealed = hidden.live_hidden_changes(character)
    visibility, shared = VISIBILITY_PUBLIC, []
    if hidden.hidden_shaped(character, [hidden.EVERYONE], (live, revealed))[0]:
        visibility, shared = readers.kept_from_the_table(character, Viewer.of(membership), live, revealed)
    visibility, shared = stored_readers(character, visibility, shared)  # an NPC's: the GM's alone
    return Draft(ADJUSTED, readers.naming_readers({"changes": changes, "reason": reason}, shared), 1,
                 character, visibility)
