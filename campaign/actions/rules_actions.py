"""A rules action: an action of the campaign's rule system (rules/<system>/actions.py), decided by the
system's pure function on the character's state, inside the command's locked transaction.

Who may see the decision depends on what hidden events it reads (campaign/visibility/hidden.py); a contest
naming another character reads its sheet and is read by it (campaign/actions/contests.py)."""

from __future__ import annotations

from dataclasses import replace

from rules import RuleError

from ..errors import INPUT_ERRORS, ActionError, rule_refusal
from ..eventlog import Draft
from ..models import VISIBILITY_PUBLIC, Campaign, Character, Membership
from ..visibility import Viewer, hidden, readers
from . import contests
from .access import access_character, require_gm
from .fights import check_controls_both
from .kept import Readers, stored_readers


def rules_readers(campaign: Campaign, membership: Membership, action: dict, character: Character | None = None
                  ) -> tuple[Readers, Character, Character | None, bool]:
    """Who reads the decision of a rules action, from who did what and how it was shown, never from dice
    (campaign/visibility/hidden.py): the one answer the decision and a witnessed command's pending step
    (campaign/actions/commands.py) both store. Also the character, its opponent (whose numbers it fills
    into ``action``, changed in place) and whether the decision is sealed from its actor."""
    kind = action["type"]
    if kind in campaign.rules.gm_actions:
        require_gm(membership, f"take the action '{kind}'")
    if action.get("character") is None:
        raise ActionError(f"The action '{kind}' needs a 'character' (its id).")
    character = access_character(membership, action["character"], character)
    # A contest naming another character reads its sheet and is read by it (campaign/actions/contests.py).
    opponent = contests.opponent_of(campaign, membership, character, action)
    check_controls_both(campaign, membership, opponent, kind)
    # Who may see the decision depends on what hidden events it reads (campaign/visibility/hidden.py).
    visibility, shared, unseen = hidden.decision_readers(character, Viewer.of(membership),
                                                         action.get("visibility", VISIBILITY_PUBLIC))
    if opponent is not None:
        # Read by whoever may read both sheets' hidden changes it read.
        visibility, shared = contests.readers_with(campaign, character, opponent, membership, action,
                                                   visibility, shared)
    visibility, shared = stored_readers(character, visibility, shared, opponent)
    return Readers(visibility, shared, visibility != VISIBILITY_PUBLIC), character, opponent, unseen


def decide_rules_action(campaign: Campaign, membership: Membership, action: dict, dice,
                        character: Character | None = None) -> list[Draft]:
    """The drafts of a rules action (the caller has refused spectators and unknown types);
    ``character``: the one it names, as the command's lock read it."""
    kind = action["type"]
    read_by, character, opponent, unseen = rules_readers(campaign, membership, action, character)
    try:
        decided = hidden.decide(campaign.rules, character, Viewer.of(membership), action, dice, INPUT_ERRORS, unseen)
    except RuleError as e:
        raise rule_refusal(e)
    if opponent is not None:
        decided = contests.with_sides(campaign, character, opponent, decided, kind)
    # Only the server names an event's readers: a payload key of the rules' own would let its members read it.
    return [Draft(e.type, readers.naming_readers({k: v for k, v in e.payload.items() if k != "shared_with"},
                                                 read_by.shared),
                  e.version, character, read_by.visibility) for e in decided]


def naming_source(drafts: list[Draft], key: str, seq: int) -> list[Draft]:
    """``drafts`` with the first naming the event it came from (``"applies": seq``)."""
    return [replace(drafts[0], payload={**drafts[0].payload, key: seq}), *drafts[1:]]
