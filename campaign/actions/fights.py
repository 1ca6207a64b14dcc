"""Fights of several sides: any number of characters and NPCs in one Tale combat or iterated contest,
MdT race or opposed test, or WYRM round of opposed checks. rules/fights.py decides; this stores.

The GM starts a fight naming its sides, each with its team (allies share one) and what it rolls. Each
round every side still standing chooses what it does (whom it attacks, with how many dice, and its
defence; whom it acts against; or just that it rolls), each chosen by whoever controls that side:
the player her own character, the GM the NPCs (``access_character``). A choice is stored sealed
(``secret``: its player and the GM; an NPC's ``gm``) and changes no state: nobody else learns a
side's split before the round resolves. The choice that completes the round rolls it: one public,
campaign-level event that quotes every choice it read (``filled``), so the round reveals them, and
every side's character state folds its own part (``sides``, rules/common.py). A round reads only
the fight's own public events and the choices, so no hidden change of a side's sheet reaches it;
the fight's events are never voided (the GM ends the fight instead).
"""

from __future__ import annotations

from rules import Event as RulesEvent
from rules import RuleError
from rules import fights as F
from rules.contests import decides_both_sides
from rules.declare import Either, Integer, ListOf, Object, Text
from rules.sides import MAX_SIDES

from ..eventlog import Draft
from ..models import (ROLE_SPECTATOR, SHOWN_HIDDEN, SHOWN_NAME, VISIBILITY_GM, VISIBILITY_PUBLIC, VISIBILITY_SECRET,
                      Campaign, Character, Event, Membership)
from ..visibility import Viewer, hidden, visible_state
from .access import access_character
from .checks import check_name
from .declared import CHARACTER_ID_MAX, character_id, platform_action
from .kept import Readers
from ..errors import ActionError, Forbidden, Refused, rule_refusal


def current_fight(campaign: Campaign) -> dict | None:
    """The running fight (``None`` if none), with ``seq``: the seq of its start."""
    start = (Event.objects.filter(campaign=campaign, type=F.STARTED).order_by("-seq")
             .values_list("seq", flat=True).first())
    if start is None:
        return None
    rows = (Event.objects.filter(campaign=campaign, type__in=(F.STARTED, F.ROUND, F.ENDED), seq__gte=start)
            .order_by("seq").values_list("type", "payload"))
    fight = F.fold(rows)
    return None if fight is None else {**fight, "seq": start}


def fight_for(campaign: Campaign, membership: Membership) -> dict | None:
    """The running fight as the table page shows it to ``membership``: the fight, its last round's
    result, and the sides whose choice for this round she may know of (the GM: all; a player: the ones
    she chose herself, whose sealed events she reads)."""
    fight = current_fight(campaign)
    if fight is None:
        return None
    rows = (Event.objects.filter(campaign=campaign, type=F.CHOSEN, seq__gt=fight["seq"],
                                 payload__fight=fight["seq"], payload__round=fight["round"] + 1)
            .values_list("character_id", "actor_id"))
    chosen = [str(c) for c, actor in rows if membership.is_gm or actor == membership.user_id]
    last = (Event.objects.filter(campaign=campaign, type=F.ROUND, seq__gt=fight["seq"]).order_by("-seq")
            .values_list("payload", flat=True).first())
    return {**fight, "chosen": chosen, "last": last["result"] if last else None}


def _running(campaign: Campaign) -> dict:
    fight = current_fight(campaign)
    if fight is None:
        raise Refused("No fight is running: the GM starts one first.")
    return fight


# Whom a round's conditions are read for: every member of the table (the public log, the reveals).
TABLE = Viewer(user_id=0, role=ROLE_SPECTATOR)


def _with_conditions(campaign: Campaign, fight: dict) -> dict:
    """The fight with its standing sides' conditions as the round reads them (rules/fights.py
    ``with_conditions``): as every member may read them, since the round shows what they add; a
    condition the GM applied in secret is not read until she reveals it. An NPC the players may not
    fully see (shown by name) is the GM's whole: every event of it is hers, and its numbers are hers
    to disclose, as its dice are when the fight starts; its conditions are read as she knows them."""
    ids = [int(s) for s in F.standing(campaign.rules, fight)]
    states = {str(c.id): c.projection.state if c.npc and c.shown == SHOWN_NAME else visible_state(c, TABLE)
              for c in Character.objects.filter(campaign=campaign, pk__in=ids).select_related("projection")}
    return F.with_conditions(campaign.rules, fight, {s: state for s, state in states.items() if state})


def _views(fight: dict, seq: int, entries: dict) -> dict:
    """Each side's part of the fight, as its character state folds it."""
    return {s: {"fight": {"seq": seq, "kind": fight["kind"], "label": fight["label"], **entries[s]}}
            for s in fight["order"]}


@platform_action(
    "start_fight", title="Start a fight", by="gm", gm="start fights", emits=(F.STARTED,),
    help="Sides of several teams, each {\"character\", \"team\", ...what it rolls}; `target` for a race.",
    fields={"sides": ListOf(Object(), MAX_SIDES, label="Sides"),
            "kind": Text(20, optional=True, label="Kind"),
            "label": Text(80, optional=True, label="Label"),
            "target": Integer(1, 50, optional=True, label="Target (a race)")},
)
def decide_start_fight(campaign: Campaign, membership: Membership, action: dict, dice, *_) -> list[Draft]:
    """GM: ``{"sides": [{"character", "team"?, ...what it rolls}], "kind"?, "label"?, "target"?}``."""
    if current_fight(campaign) is not None:
        raise Refused("A fight is already running: end it first.")
    try:
        kind = F.read_kind(campaign.rules, action.get("kind"))
        sides = action.get("sides")
        if not isinstance(sides, list) or not all(isinstance(s, dict) for s in sides):
            raise RuleError("'sides' lists the fight's sides, each {\"character\": id, \"team\": name, ...}.",
                            "invalid")
        named = F.read_sides([s.get("character") for s in sides])
    except RuleError as e:
        raise rule_refusal(e)
    label = check_name(action.get("label") or kind.words, "A fight's label")
    entries, teams, names, first_state = {}, {}, {}, None
    for spec, side in zip(action["sides"], named):
        character = access_character(membership, spec.get("character"))
        if character.npc and character.shown == SHOWN_HIDDEN:
            raise Refused(f"{character.name} is hidden from the players, and a fight is the table's: "
                          "show it by name first.")
        # The fight's start publishes each side's dice. An NPC's numbers are the GM's to disclose, which
        # starting the fight does (as naming it in a contest does); a player's character whose sheet
        # holds what not everyone may see would publish her secret: reveal it first.
        if not character.npc and hidden.hidden_shaped(character, [hidden.EVERYONE])[0]:
            raise Refused(f"{character.name}'s sheet holds what not every member may see: reveal it first, "
                          "or leave it out of the fight.")
        state = character.projection.state
        try:
            entries[side] = F.side_entry(campaign.rules, kind.name, state, spec)
        except RuleError as e:
            raise rule_refusal(e if e.code == "invalid" else RuleError(f"{character.name} {e.message}", e.code))
        team = spec.get("team", side)
        if not isinstance(team, (str, int)) or isinstance(team, bool) or not 1 <= len(str(team)) <= F.MAX_TEAM:
            raise ActionError(f"A side's 'team' must be a short name (1 to {F.MAX_TEAM} characters).")
        teams[side], names[side] = str(team), character.name
        first_state = first_state or state
    if len(set(teams.values())) < 2:
        raise ActionError("A fight needs at least two teams: give the sides who fight each other different teams.")
    fight = {"kind": kind.name, "label": label, "order": named, "teams": teams, "names": names, "entries": entries,
             "settings": F.settings_of(campaign.rules, first_state)}
    if kind.target:
        target = action.get("target")
        if isinstance(target, bool) or not isinstance(target, int) or not 1 <= target <= 50:
            raise ActionError("A race needs a 'target': the successes to reach first, 1 to 50.")
        fight["target"] = target
    # Its seq is not known yet: a side's state names the fight by its label and kind; the rounds name it
    # by the seq of its start.
    views = {s: {"fight": {"seq": None, "kind": kind.name, "label": label, **entries[s]}} for s in named}
    return [Draft(F.STARTED, {"label": label, "fight": fight, "sides": views})]


def round_readers(*_) -> Readers:
    """A fight's round is the table's: it quotes every side's choice and dice. A choice that does not
    complete the round draws no die, and is stored sealed (:func:`decide_fight_choice`)."""
    return Readers(VISIBILITY_PUBLIC, [])


@platform_action(
    "choose_in_fight", title="Choose in a fight", emits=(F.CHOSEN, F.ROUND, F.ENDED), rolls=True,
    help="A side's choice this round, by whoever controls it; the last one rolls the round.",
    fields={"character": character_id(),
            "attack": Object(optional=True, label="Attack", help="{side: dice}."),
            "defence": Either(Integer(0, 1000), Object(), optional=True, label="Defence"),
            "against": ListOf(Either(Integer(0, CHARACTER_ID_MAX), Text(40)), MAX_SIDES, label="Against")},
    readers=round_readers,
)
def decide_fight_choice(campaign: Campaign, membership: Membership, action: dict, dice, *_) -> list[Draft]:
    """A side's choice for this round: ``{"character", "attack"?, "defence"?, "against"?}``, by whoever
    controls the character. Stored sealed, or, when it completes the round, the round itself."""
    character = access_character(membership, action.get("character"))
    fight = _with_conditions(campaign, _running(campaign))
    side = str(character.id)
    if side not in fight["order"]:
        raise Refused(f"{character.name} is not in the fight.")
    try:
        choice = F.read_choice(campaign.rules, fight, side, action)
    except RuleError as e:
        raise rule_refusal(e)
    chosen = _choices(campaign, fight)
    if side in chosen:
        raise Refused(f"{character.name} has already chosen for round {fight['round'] + 1}.")
    waiting = [s for s in F.standing(campaign.rules, fight) if s != side and s not in chosen]
    if waiting:
        visibility = VISIBILITY_GM if character.npc else VISIBILITY_SECRET
        return [Draft(F.CHOSEN, {"fight": fight["seq"], "round": fight["round"] + 1, "choice": choice},
                      1, character, visibility)]
    filled = {"fight": {k: v for k, v in fight.items() if k != "seq"}, "seq": fight["seq"], "choices": chosen}
    try:
        decided = F.round_events(campaign.rules, filled, action, dice)
    except RuleError as e:
        raise rule_refusal(e)
    return [_with_sides(campaign, fight, event, filled) for event in decided]


def _with_sides(campaign: Campaign, fight: dict, event: RulesEvent, filled: dict) -> Draft:
    payload = dict(event.payload)
    if event.type == F.ROUND:
        payload.update(filled=filled, sides=_views(fight, fight["seq"], payload["entries"]))
    else:
        payload["sides"] = F.ending(campaign.rules, fight)
    return Draft(event.type, payload, event.version, visibility=round_readers().visibility)


def _choices(campaign: Campaign, fight: dict) -> dict:
    """The choices made for the fight's current round, by side."""
    rows = (Event.objects.filter(campaign=campaign, type=F.CHOSEN, seq__gt=fight["seq"],
                                 payload__fight=fight["seq"], payload__round=fight["round"] + 1)
            .order_by("seq").values_list("character_id", "payload"))
    return {str(character_id): payload["choice"] for character_id, payload in rows}


@platform_action("end_fight", title="End the fight", by="gm", gm="end fights", emits=(F.ENDED,))
def decide_end_fight(campaign: Campaign, membership: Membership, action: dict, dice, *_) -> list[Draft]:
    """GM: end the running fight now, undecided; a Tale combat's damage taken waits to be spread."""
    fight = _running(campaign)
    payload = {"fight": fight["seq"], "label": fight["label"], "winner": None, "reason": "ended",
               "rounds": fight["round"], "sides": F.ending(campaign.rules, fight)}
    return [Draft(F.ENDED, payload)]


def check_controls_both(campaign: Campaign, membership: Membership, opponent: Character | None, kind: str) -> None:
    """Each side's choices belong to whoever controls it: a member who does not control the opponent
    (the GM's NPC, another player's character) may not take an action that decides for its side (a
    two-sided contest's ``both_sides``: Tale's combat round sets both sides' portions, an end ends it
    for both).
    Whether she may depends only on who owns the opponent, never on its sheet."""
    if opponent is None or not decides_both_sides(campaign.rules, kind):
        return
    if membership.is_gm or opponent.owner_id == membership.user_id:
        return
    whose = "the GM's" if opponent.npc else "its player's"
    raise Forbidden(f"{opponent.name}'s side is {whose} to choose: fight it as a fight of sides, where "
                    "each side chooses its own.")

