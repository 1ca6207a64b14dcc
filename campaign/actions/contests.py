"""Contests and opposed tests naming two characters (``vs_character``).

The acting character's action names its opponent; the opponent's numbers are
read from the opponent's own state (rules/contests.py fills them into the
action, which is what the log records, so a replay decides the same). A Tale
contest then runs on both sides: each round is one event stored with the acting
character, carrying ``sides`` (how the opponent reads it), and both states
fold it (campaign/projections.py). A shared opponent keeps its pool and damage
from one fight to the next.

Who may: the opponent is any character the member may know of; one that is an
NPC not fully shown only the GM may name (it discloses the numbers the contest
reads, as a GM does at the table). When the opponent's state was shaped by
events the table may not see, the decision is stored ``gm``, read by whoever may
read what shaped both sides (docs/hidden-information.md).
"""

from __future__ import annotations

from rules import Event as RulesEvent
from rules import RuleError
from rules.base import copy_json
from rules.contests import continues, fill, fill_round, has_sides, reads_opponent, side_view

from ..models import SHOWN_FULL, SHOWN_HIDDEN, VISIBILITY_GM, VISIBILITY_PUBLIC, Campaign, Character, Event, Membership
from ..projections import concerning
from ..visibility import Viewer, hidden, may_see
from ..errors import ActionError, Forbidden, NotFound, Refused, rule_refusal
from ..visibility.readers import named, sharers
from .kept import hidden_from

STARTED = "contest_started"  # a contest's first event, in every system that runs one


def opponent_of(campaign: Campaign, membership: Membership, character: Character, action: dict) -> Character | None:
    """The other character the action concerns, its numbers filled into ``action`` (changed in place)."""
    named = action.get("vs_character")
    if named is None:
        contest = character.projection.state.get("contest") if continues(campaign.rules, action.get("type")) \
            else None
        opponent_id = contest.get("opponent") if isinstance(contest, dict) else None
        opponent = _character(campaign, opponent_id) if opponent_id else None
        if opponent is not None:
            # What the round reads of the opponent now (its conditions), recorded with the action.
            try:
                action.update(fill_round(campaign.rules, action, opponent.projection.state))
            except RuleError as e:
                raise rule_refusal(e)
        return opponent
    if isinstance(named, bool) or not isinstance(named, int):
        raise ActionError("'vs_character' must be the id (a number) of a character in this campaign.")
    opponent = _character(campaign, named)
    if opponent is None or hidden_from(opponent, membership):
        raise NotFound(f"This campaign has no character {named}.")
    if opponent.id == character.id:
        raise ActionError("A character can't be its own opponent.")
    if opponent.npc and opponent.shown != SHOWN_FULL and not membership.is_gm:
        raise Forbidden(f"Only the GM can pit a character against {opponent.name}: its sheet is the GM's.")
    if not membership.is_gm and hidden.hidden_shaped(opponent, [Viewer.of(membership)])[0]:
        # Reading its sheet (even to refuse) would tell what she may not see; whether it is so
        # depends on how events were shown, never on their dice (campaign/visibility/hidden.py).
        raise Refused(f"{opponent.name}'s sheet holds what you may not see: ask the GM to run this contest.")
    try:
        action.update(fill(campaign.rules, action, opponent.projection.state))
    except RuleError as e:
        raise rule_refusal(e)
    return opponent


def _character(campaign: Campaign, character_id) -> Character | None:
    return Character.objects.select_related("projection").filter(campaign=campaign, pk=character_id).first()


def with_sides(campaign: Campaign, character: Character, opponent: Character, decided: list, kind: str) -> list:
    """The decided events, each carrying how the opponent reads it (``sides``) when it changes the opponent.

    An action that reads nothing of the opponent (``kind``: an MdT round) gets no state of it to read:
    :func:`readers_with` counts on that.

    A decision sealed from its actor that the rules refused (campaign.visibility.REFUSED) of an action that
    is a side of the opponent (:func:`rules.contests.has_sides`) is a side of it still, with no view
    (``true``, as on a bundle): whether the rules refused is hidden, and a side or none would say it to
    whoever acts for the opponent next (its sheet holding a change they may not see, or not)."""
    rules = campaign.rules
    state = copy_json(opponent.projection.state) if reads_opponent(rules, kind) else None
    # The opponent's sheet names whom it races, as the acting side's names it; a hidden NPC stays
    # unnamed: the event reaches the players the opponent's sheet is shown to.
    name = "" if character.npc and character.shown == SHOWN_HIDDEN else character.name
    out = []
    for event in decided:
        view = side_view(rules, event, state, character.id, name)
        if view is None:
            if event.type == hidden.REFUSED and has_sides(rules, kind):
                event = RulesEvent(event.type, {**event.payload, "sides": {str(opponent.id): True}}, event.version)
            out.append(event)
            continue
        if state is not None:
            state = rules.evolve(state, RulesEvent(event.type, view, event.version))
        out.append(RulesEvent(event.type, {**event.payload, "sides": {str(opponent.id): view}}, event.version))
    return out


def readers_with(campaign: Campaign, character: Character, opponent: Character, membership: Membership, action: dict,
                 visibility: str, shared: list[dict]) -> tuple[str, list[dict]]:
    """How the decision of ``action`` on ``character`` (stored ``visibility``, read too by ``shared``, as
    campaign.visibility.hidden.decision_readers left it) against ``opponent`` is stored, and who besides the GM reads it:
    whoever may read everything it was decided from, no one else. (Before, naming an opponent dropped
    the readers: a player's contest on top of her own secret roll was sealed from her.) One that reads
    nothing of the opponent's state (an MdT round: :func:`rules.contests.reads_opponent`) is stored as
    its own character's hidden changes say (before, any hidden change of the NPC she raced sealed every
    later round of hers from her)."""
    if not reads_opponent(campaign.rules, action["type"]):
        return visibility, shared
    asked = action.get("visibility", VISIBILITY_PUBLIC)
    opposed = _opponent_readers(opponent, Viewer.of(membership), asked, character)
    if opposed is None:
        return visibility, shared
    if visibility != VISIBILITY_GM:  # nothing this character's hidden changes keep from anyone
        return VISIBILITY_GM, named(character.campaign_id, opposed)
    return VISIBILITY_GM, [r for r in shared if r["user_id"] in opposed]


def _opponent_readers(opponent: Character, actor: Viewer, asked: str, character: Character) -> set[int] | None:
    """The members besides the GM who may read what ``opponent``'s state gave the decision, or ``None``
    when it gave nothing the visibility ``asked`` keeps from anyone. The numbers of an NPC not fully
    shown are the GM's to disclose, which naming it does (only the GM may): a player's round of the
    contest the GM started reads them as they were then, so one after a change the GM keeps (hidden
    damage mid-fight) is the GM's to read; a fully shown one is read like any character, its unseen
    past included. Only who did what and how it was shown counts, never dice (campaign/visibility/hidden.py)."""
    if opponent.npc and opponent.shown != SHOWN_FULL:
        return set() if not actor.is_gm and _changed_since_named(opponent, character, actor) else None
    live, revealed = read = hidden.live_hidden_changes(opponent)
    readers = hidden.EVERYONE if asked == VISIBILITY_PUBLIC else actor
    from_readers, from_actor = hidden.hidden_shaped(opponent, [readers, actor], read)
    if from_actor:
        return set()
    if not from_readers:
        return None
    if not actor.is_gm:
        return {actor.user_id}  # she may see every hidden change it read, as on her own character
    return {r["user_id"] for r in sharers(opponent, actor, live, revealed)}


def _changed_since_named(opponent: Character, character: Character, actor: Viewer) -> bool:
    """Whether a change of ``opponent`` that ``actor`` may not see came after the contest with
    ``character`` started (the GM's disclosure of its numbers). Only who did what and how it was
    shown counts, never dice."""
    named = (Event.objects.filter(concerning(character.id), campaign_id=character.campaign_id, type=STARTED)
             .order_by("-seq").values_list("seq", flat=True).first() or 0)
    live, revealed = hidden.live_hidden_changes(opponent)
    return any(r["seq"] > named and not may_see(r, actor, revealed) for r in live)
