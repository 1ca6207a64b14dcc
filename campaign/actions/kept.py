"""What the GM keeps from the players: NPCs not fully shown (campaign/actions/npcs.py).

An NPC's own events are stored ``gm`` while it is not fully shown (:func:`stored_visibility`),
so every player receives them sealed; a hidden NPC is left out of every list and read
(:func:`characters_for`, :func:`hidden_from`), and a name-only one never has its sheet served
(:func:`sheet_hidden_from`). The deciders of every noun that stores an event about a character
read these, so they sit below all of them.
"""

from __future__ import annotations

from typing import NamedTuple

from ..models import SHOWN_CHOICES, SHOWN_FULL, SHOWN_HIDDEN, VISIBILITY_GM, Character, Membership

SHOWN = tuple(value for value, _ in SHOWN_CHOICES)


class Readers(NamedTuple):
    """Who reads a command's events: their visibility and, for a ``gm`` one, the members besides the GM
    it names (``shared_with``, campaign/visibility/readers.py). ``hidden``: whether the decision reads what some
    member may not see, so that whether it draws a die at all is not theirs to learn either
    (docs/fair-dice.md, "Witnessed rolls"). Known before any die is drawn: it depends on who did what
    and how it was shown, never on dice."""

    visibility: str
    shared: list[dict]
    hidden: bool = False


def gm_keeps(character: Character | None) -> bool:
    """Whether ``character`` is an NPC the players may not fully see."""
    return character is not None and character.npc and character.shown != SHOWN_FULL


def stored_visibility(character: Character | None, visibility: str, opponent: Character | None = None) -> str:
    """How an event about ``character`` is stored: ``gm`` for an NPC the players may not fully see,
    unless it is a contest against a character the table sees (the GM disclosed the numbers)."""
    if opponent is not None and not gm_keeps(opponent):
        return visibility
    if gm_keeps(character):
        return VISIBILITY_GM
    return visibility


def stored_readers(character: Character | None, visibility: str, shared: list[dict],
                   opponent: Character | None = None) -> tuple[str, list[dict]]:
    """:func:`stored_visibility`, and the members besides the GM a ``gm`` event names as its readers
    (``shared_with``, campaign/visibility/readers.py): none for an NPC the players may not fully see, whose
    events are the GM's alone."""
    stored = stored_visibility(character, visibility, opponent)
    return stored, (shared if stored == VISIBILITY_GM and not gm_keeps(character) else [])


def hidden_from(character: Character, membership: Membership) -> bool:
    """Whether the member may not know ``character`` exists."""
    return character.npc and character.shown == SHOWN_HIDDEN and not membership.is_gm


def sheet_hidden_from(character: Character, membership: Membership) -> bool:
    """Whether the member may not read ``character``'s sheet."""
    return character.npc and character.shown != SHOWN_FULL and not membership.is_gm


def characters_for(membership: Membership):
    """The campaign's characters the member may know of (hidden NPCs only for the GM)."""
    qs = Character.objects.filter(campaign_id=membership.campaign_id)
    return qs if membership.is_gm else qs.exclude(npc=True, shown=SHOWN_HIDDEN)
