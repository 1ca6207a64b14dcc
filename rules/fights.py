"""Fights of several sides: any number of characters in one round of an opposed test of their
system (a Tale combat or iterated contest, an MdT race or opposed test, a WYRM opposed check). Pure.

A round names its exchanges, who acts against whom (``{"by": side, "against": side}``); sides are
named by strings (a character's id as the log's JSON keys it, rules/sides.py). Every round rolls each
die it needs exactly once, in the order its system's round function gives, and returns the round as
one JSON object: the dice, each exchange with its exact odds (as the systems' odds code computes
them, turned into JSON by :func:`rules.base.odds_json`), and what the round leaves each side.

What differs between systems is the system's :class:`rules.base.Fights` hook (``RuleSystem.fights``,
``None`` for a system whose text has no opposed test): its kinds of fight, each a
:class:`rules.base.FightKind` (a side's numbers, its choice, the round), the settings a fight plays
under and who is still standing. This module runs a fight's life through it and names no system.
The texts describe two sides only; where they are silent about more, the reading is a campaign
setting (``fights.*`` in each system's settings.py) and an entry of docs/rules.md ("Fights of
several sides"); each system's ``opposed.py`` says which.
"""

from __future__ import annotations

import copy
from typing import Iterable, Mapping

from .base import DiceSource, Event, FightKind, RuleError, RuleSystem
from .sides import MAX_EXCHANGES, MAX_SIDES, Side, read_exchanges, read_sides  # noqa: F401

# Each system's round of several sides, under the names its tests call it by; the fight's life below
# reaches them only through the systems' hooks.
from .mdt.opposed import mdt_opposed, mdt_opposed_odds, mdt_race_odds, mdt_race_round  # noqa: F401,E402
from .tale.opposed import (  # noqa: F401,E402
    TALE_DEFENCE, read_tale_portions, tale_combat_odds, tale_combat_round, tale_iterated_round,
)
from .wyrm.opposed import WYRM_PASSIVE_ROLLS, wyrm_opposed_round  # noqa: F401,E402

# --- a fight's life: started, each side's choice, rounds, ended ----------------------------------
#
# Campaign-level events (campaign/actions/fights.py stores them); each side's character state folds
# its own part of them through ``sides`` (rules/common.py ``fight``: its numbers in the fight).

STARTED, CHOSEN, ROUND, ENDED = "fight_started", "fight_choice_made", "fight_round_rolled", "fight_ended"
EVENTS = frozenset({STARTED, CHOSEN, ROUND, ENDED})
MAX_TEAM = 40


def kinds(rules: RuleSystem) -> tuple[FightKind, ...]:
    """The kinds of fight ``rules`` runs (the first is the default); none for a system without."""
    return () if rules.fights is None else rules.fights.kinds


def read_kind(rules: RuleSystem, kind) -> FightKind:
    """The kind of fight the GM asks for (``None``: the system's first)."""
    known = kinds(rules)
    if not known:
        raise RuleError("This system's text has no opposed test: there is nothing to fight with several sides.")
    if kind is None:
        return known[0]
    for declared in known:
        if declared.name == kind:
            return declared
    raise RuleError(f"A fight here is one of: {', '.join(k.name for k in known)}.", "invalid")


def side_entry(rules: RuleSystem, kind: str, state: Mapping, spec: Mapping) -> dict:
    """A side's numbers in a new fight, read from its character's state and what the GM named for it
    (``spec``: what the kind reads, e.g. Tale ``with_secondary`` for a combat, MdT ``attribute``)."""
    spec = spec if isinstance(spec, Mapping) else {}
    if state.get("fight"):
        raise RuleError("is already in a fight: it must end first.")
    if state.get("contest"):
        raise RuleError("is in a contest: it must end first.")
    return rules.fights.kind(kind).entry(state, spec)


def settings_of(rules: RuleSystem, state: Mapping) -> dict:
    """The campaign settings a fight plays under, fixed when it starts (the first side's options)."""
    return rules.fights.settings(state)


def standing(rules: RuleSystem, fight: Mapping) -> list[Side]:
    """The sides still in the fight, in order."""
    return rules.fights.standing(fight)


def with_conditions(rules: RuleSystem, fight: Mapping, states: Mapping[Side, Mapping]) -> dict:
    """The fight as this round reads it: ``conditions``, each standing side's conditions' modifier
    (rules/conditions.py) from its character's state now, where not 0, each kind reading it in its
    text's terms (Tale combat: dice it can't portion out; MdT: dice on its pool; WYRM: on the DL of
    its checks as the active side). The server fills it from the sides' states, so the round event
    records it (``filled``) and a replay reads the same; without any the key is left out."""
    from . import conditions

    totals = {s: conditions.effect(states[s])[0] for s in standing(rules, fight) if s in states}
    totals = {s: n for s, n in totals.items() if n}
    out = {k: v for k, v in fight.items() if k != "conditions"}
    if totals:
        out["conditions"] = totals
    return out


def read_choice(rules: RuleSystem, fight: Mapping, side: Side, choice: Mapping) -> dict:
    """What ``side`` does this round, checked by the fight's kind (whom it attacks, with how many
    dice, and its defence; whom it acts against; or nothing, when every side simply rolls)."""
    up = standing(rules, fight)
    if side not in up:
        raise RuleError("That side is out of the fight.")
    return rules.fights.kind(fight["kind"]).choice(fight, up, side, choice)


def resolve(rules: RuleSystem, fight: Mapping, choices: Mapping[Side, dict], dice: DiceSource) -> dict:
    """The round every standing side has chosen for: ``{"round", "result", "entries", "ended"}``;
    ``ended`` (``None`` while it goes on) is ``{"winner": team or None, "reason"}``."""
    up = standing(rules, fight)
    after = {s: dict(e) for s, e in fight["entries"].items()}
    result, ended = rules.fights.kind(fight["kind"]).round(fight, up, choices, dice, after)
    return {"round": fight["round"] + 1, "result": result, "entries": after, "ended": ended}


def ending(rules: RuleSystem, fight: Mapping) -> dict[Side, dict]:
    """Each side's part of a fight's end: ``{"fight": None}``, and for a kind that leaves damage (a
    Tale combat) the damage it took, to spread (the character's state caps it at what it has room
    for, rules/tale/evolve.py, so the end reads no side's sheet)."""
    leaves_damage = rules.fights.kind(fight["kind"]).damage
    out = {}
    for s in fight["order"]:
        view: dict = {"fight": None}
        if leaves_damage:
            view["damage_taken"] = fight["entries"][s]["damage_taken"]
        out[s] = view
    return out


def round_events(rules: RuleSystem, filled: Mapping, action: Mapping, dice: DiceSource) -> list[Event]:
    """The round the acting side's choice completes, from what the server read (``filled``: the
    running ``fight``, the seq of its start, the other sides' ``choices``) and the action: the
    ``fight_round_rolled`` event, and ``fight_ended`` when the round decided the fight. What a replay
    of the command decides again (campaign/fairdice.py)."""
    fight = filled["fight"]
    side = str(action.get("character"))
    choices = {**filled["choices"], side: read_choice(rules, fight, side, action)}
    decided = resolve(rules, fight, choices, dice)
    events = [Event(ROUND, {"fight": filled["seq"], "label": fight["label"], "kind": fight["kind"],
                            "round": decided["round"], "choices": choices, "result": decided["result"],
                            "entries": decided["entries"]})]
    if decided["ended"] is not None:
        events.append(Event(ENDED, {"fight": filled["seq"], "label": fight["label"], **decided["ended"],
                                    "rounds": decided["round"]}))
    return events


def evolve(fight: dict | None, kind: str, payload: Mapping) -> dict | None:
    """The running fight after one of its campaign-level events (``None``: none running)."""
    if kind == STARTED:
        return {**copy.deepcopy(dict(payload["fight"])), "round": 0}
    if fight is None:
        return None
    if kind == ROUND:
        fight["round"] = payload["round"]
        fight["entries"] = copy.deepcopy(payload["entries"])
    elif kind == ENDED:
        return None
    return fight


def fold(events: Iterable[tuple[str, Mapping]]) -> dict | None:
    fight = None
    for kind, payload in events:
        fight = evolve(fight, kind, payload)
    return fight
