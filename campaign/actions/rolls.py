"""The generic dice roll (``roll``: dice notation, rules/notation.py), the same in every system."""

from __future__ import annotations

from rules import RuleError
from rules.declare import Text
from rules.notation import LIMITS, roll_event

from ..errors import rule_refusal
from ..eventlog import Draft
from ..models import VISIBILITY_PUBLIC, Campaign, Character, Membership
from .access import access_character
from .declared import character_id, platform_action
from .kept import Readers, stored_visibility


def roll_readers(campaign: Campaign, membership: Membership, action: dict, character: Character | None
                 ) -> Readers:
    """A roll is read as it asks, or by the GM alone for an NPC the players may not fully see."""
    character = (access_character(membership, action["character"], character)
                 if action.get("character") is not None else None)
    return Readers(stored_visibility(character, action.get("visibility", VISIBILITY_PUBLIC)), [])


@platform_action(
    "roll", title="Roll dice", rolls=True, emits=("roll",),
    help="Any dice notation (rules/notation.py: 4d6kh3, 2d10+1, 3dF...), for a character or for nobody.",
    fields={
        "notation": Text(LIMITS["length"], label="Dice", help="Dice notation, such as 4d6kh3."),
        "character": character_id(optional=True, help="The character who rolls; none for a roll of the table."),
        "label": Text(120, optional=True, label="What for"),
    },
    readers=roll_readers,
)
def decide_roll(campaign: Campaign, membership: Membership, action: dict, dice, character: Character | None
                ) -> Draft:
    character = (access_character(membership, action["character"], character)
                 if action.get("character") is not None else None)
    try:
        event = roll_event(action, dice)
    except RuleError as e:
        raise rule_refusal(e)
    return Draft(event.type, event.payload, event.version, character,
                 roll_readers(campaign, membership, action, character).visibility)
