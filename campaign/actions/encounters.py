"""Encounters and turn order: campaign-level events every member sees live.

The GM starts an encounter, adds combatants (any character the table may see:
a hidden NPC is shown by name first), sets the order (no text has an
initiative rule, rules/encounter.py) and ends it; the GM, or the player whose
character is acting, advances the turn. The running encounter is folded from
its events at read time (:func:`current_encounter`).
"""

from __future__ import annotations

from rules import encounter as E
from rules.declare import Flag, Integer, ListOf, Text

from ..eventlog import Draft
from ..models import SHOWN_HIDDEN, Campaign, Character, Event, Membership
from .access import access_character
from .checks import check_name
from .declared import CHARACTER_ID_MAX, character_id, platform_action
from ..errors import ActionError, Forbidden, Refused


def current_encounter(campaign: Campaign) -> dict | None:
    """The running encounter (``None`` if none): name, combatants in order, round, turn, acting."""
    start = (Event.objects.filter(campaign=campaign, type=E.STARTED).order_by("-seq")
             .values_list("seq", flat=True).first())
    if start is None:
        return None
    rows = (Event.objects.filter(campaign=campaign, type__in=E.EVENTS, seq__gte=start).order_by("seq")
            .values_list("type", "payload"))
    return E.fold(rows)


def in_running_encounter(campaign: Campaign, character: Character) -> bool:
    encounter = current_encounter(campaign)
    return bool(encounter) and any(c["character"] == character.id for c in encounter["combatants"])


def _running(campaign: Campaign) -> dict:
    encounter = current_encounter(campaign)
    if encounter is None:
        raise Refused("No encounter is running: the GM starts one first.")
    return encounter


@platform_action("start_encounter", title="Start an encounter", by="gm", gm="start encounters",
                 emits=(E.STARTED,), fields={"name": Text(80, optional=True, label="Name")})
def decide_start_encounter(campaign: Campaign, membership: Membership, action: dict, *_) -> Draft:
    if current_encounter(campaign) is not None:
        raise Refused("An encounter is already running: end it first.")
    name = check_name(action.get("name") or "Encounter", "An encounter name")
    return Draft(E.STARTED, {"name": name})


@platform_action("add_combatant", title="Add a combatant", by="gm", gm="add combatants", emits=(E.ADDED,),
                 fields={"character": character_id(optional=True),
                         "gm_turn": Flag(label="The GM's turn", help="One slot where the hidden NPCs act.")})
def decide_add_combatant(campaign: Campaign, membership: Membership, action: dict, *_) -> Draft:
    """A character into the turn order, or (``"gm_turn": true``) the GM's turn, where the NPCs the
    players may not see act: one neutral slot, whoever and however many they are."""
    encounter = _running(campaign)
    if action.get("gm_turn") is True:
        if any(c["character"] == E.GM_TURN for c in encounter["combatants"]):
            raise Refused("The GM's turn is already in the encounter.")
        return Draft(E.ADDED, {"character": E.GM_TURN, "name": E.GM_TURN_NAME})
    character = access_character(membership, action.get("character"))
    if character.npc and character.shown == SHOWN_HIDDEN:
        raise Refused(f"{character.name} is hidden from the players, and the turn order is the table's: "
                      "it acts in the GM's turn (add that instead), or show it by name first.")
    if any(c["character"] == character.id for c in encounter["combatants"]):
        raise Refused(f"{character.name} is already in the encounter.")
    if len(encounter["combatants"]) >= E.MAX_COMBATANTS:
        raise Refused(f"An encounter has at most {E.MAX_COMBATANTS} combatants.")
    return Draft(E.ADDED, {"character": character.id, "name": character.name})


@platform_action("set_turn_order", title="Set the turn order", by="gm", gm="set the turn order",
                 emits=(E.ORDERED,), fields={"order": ListOf(Integer(0, CHARACTER_ID_MAX), E.MAX_COMBATANTS,
                                                             min_items=1, label="Order")})
def decide_set_turn_order(campaign: Campaign, membership: Membership, action: dict, *_) -> Draft:
    encounter = _running(campaign)
    order = action.get("order")
    ids = [c["character"] for c in encounter["combatants"]]
    if not isinstance(order, list) or sorted(o for o in order if isinstance(o, int) and not isinstance(o, bool)) \
            != sorted(ids) or len(order) != len(ids):
        raise ActionError(f"'order' must list each combatant's character id exactly once: {ids}.")
    if order == ids:
        raise Refused("That is already the turn order.")
    return Draft(E.ORDERED, {"order": order})


@platform_action("advance_turn", title="Next turn", emits=(E.ADVANCED,),
                 help="The GM, or the player whose character is acting.")
def decide_advance_turn(campaign: Campaign, membership: Membership, action: dict, *_) -> Draft:
    """The next combatant's turn: the GM's call, or the acting character's player ending theirs."""
    encounter = _running(campaign)
    if not encounter["combatants"]:
        raise Refused("Add combatants before the first turn.")
    if not membership.is_gm:
        acting = encounter["acting"]  # the GM's turn (0) is the GM's to end
        owner = Character.objects.filter(pk=acting).values_list("owner_id", flat=True).first() if acting else None
        if owner != membership.user_id:
            raise Forbidden("Only the GM, or the player whose character is acting, can end the turn.")
    return Draft(E.ADVANCED, E.next_turn(encounter))


@platform_action("end_encounter", title="End the encounter", by="gm", gm="end encounters", emits=(E.ENDED,))
def decide_end_encounter(campaign: Campaign, membership: Membership, action: dict, *_) -> Draft:
    encounter = _running(campaign)
    return Draft(E.ENDED, {"name": encounter["name"], "rounds": encounter["round"]})

