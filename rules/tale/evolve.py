"""Tale RPG ``evolve``: apply one stored event to a character's state.

Payloads carry the results (counts after a round, damage to spread...), so this
module only copies them into the state; it never re-decides anything. Handlers
change the state they are given (``rules.base.Evolver`` copies it for callers
that need the old one); what they store from a payload is copied.
"""

from __future__ import annotations

from typing import Callable

from ..base import copy_json, evolver
from ..declare import EventBook, EventSpec
from .. import common
from .sheet import damage_room


def _start_contest(state: dict, p: dict) -> None:
    state["contest"] = copy_json(p["contest"])


def _iterated_round(state: dict, p: dict) -> None:
    contest = state["contest"]
    if contest:
        contest.update(mine=p["mine_after"], theirs=p["theirs_after"], round=p["round"],
                       rounds_left=p["rounds_left"])


def _combat_round(state: dict, p: dict) -> None:
    contest = state["contest"]
    if contest:
        _iterated_round(state, p)
        contest["damage_taken"] += p["damage"]["to_me"]
        contest["damage_dealt"] += p["damage"]["to_them"]
        contest["penalties"] = copy_json(p["penalties_after"])


def _impose_penalty(state: dict, p: dict) -> None:
    if state["contest"]:
        state["contest"]["penalties"].append(copy_json(p["penalty"]))


def _end_contest(state: dict, p: dict) -> None:
    # Exhaustion dice go with the contest; combat damage now waits to be spread.
    state["contest"] = None
    state["unassigned_damage"] += p["damage_to_assign"]


def _scene_ended(state: dict, p: dict) -> None:
    # A contest does not outlive its scene: it ends undecided, as an end_contest would.
    contest = state["contest"]
    if contest:
        state["contest"] = None
        state["unassigned_damage"] += min(contest["damage_taken"], damage_room(state))


def _fight_ended(state: dict, p: dict) -> None:
    # A fight of several sides (rules/fights.py) ends as a contest does: its damage waits to be spread,
    # at most what fits (the end names the damage taken; each state caps it by its own room).
    state["fight"] = None
    state["unassigned_damage"] += min(p.get("damage_taken", 0), damage_room(state))


def _take_damage(state: dict, p: dict) -> None:
    state["unassigned_damage"] += p["taken"]


def _assign_damage(state: dict, p: dict) -> None:
    # Spread only what is still owed: voiding the damage taken after it was spread
    # takes it back, so it must neither go below 0D owed nor stay on the sheet.
    owed = max(0, state["unassigned_damage"])
    for name, dice in p["damage"].items():
        spread = min(dice, owed)
        state["damage"][name] += spread
        owed -= spread
    state["unassigned_damage"] = owed


def _rest(state: dict, p: dict) -> None:
    state["damage"] = dict(p["damage_after"])


def _buy_advance(state: dict, p: dict) -> None:
    state["points"]["spent"] += p["cost"]
    sheet = state["sheet"]
    if "characteristic" in p:
        sheet["characteristics"][p["characteristic"]] = p["to"]
    else:
        sheet["skills"][p["skill"]] = {"characteristics": list(p["characteristics"]), "dice": p["to"]}


HANDLERS: dict[str, Callable[[dict, dict], None]] = {
    "contest_started": _start_contest,
    "round_rolled": _iterated_round,
    "combat_round_rolled": _combat_round,
    "penalty_imposed": _impose_penalty,
    "contest_ended": _end_contest,
    "scene_ended": _scene_ended,
    "damage_taken": _take_damage,
    "damage_assigned": _assign_damage,
    "rested": _rest,
    "points_awarded": common.earn_points,
    "advance_bought": _buy_advance,
}
# Tale's own reading of a fight's end, over the one every system shares (rules/common.py).
FIGHT_HANDLERS = {"fight_ended": _fight_ended}

# Every event Tale records, once. Logs from before the past-tense names stored the
# action's name (``start_contest``, ...): those rows keep it and read as today's.
# A straight roll's payload: against a ``target`` (``average_of``: the challenge dice it is the average of)
# or against challenge dice rolled (``vs_pool``, ``on_tie``, ``challenge_dice``, ``challenge_total``).
# Hiding's first roll is one too, with the place and the searcher's pool.
STRAIGHT_ROLL = {"characteristics": "list", "defaulted": "bool", "dice": "list", "margin": "int", "odds": "dict",
                 "outcome": "str", "pool": "int", "skill": "str?", "skill_dice": "int", "success": "bool",
                 "total": "int", "target": "int?", "average_of": "int?", "vs_pool": "int?", "on_tie": "str?",
                 "challenge_dice": "list?", "challenge_total": "int?"}

# A straight roll in a sentence: its pool, its total, and what it was against ("Brawn + Skill 4D: 15 vs 14").
ROLLED = ("[{skill}|{characteristics:cap:plus}] {pool}D: {total} vs [{vs_pool}D ({challenge_total}){challenge_dice:if}"
          "|{vs_pool}D{vs_pool:if}|{target} (average of {average_of}D){average_of:if}|{target}]")

# What each side did in a combat round's exchange (``{exchanges.mine.outcome:word}``).
_EXCHANGE = {"hit": "hit", "even": "even", "miss": "missed", "no_attack": "no attack"}
EXCHANGED = {"exchanges.mine.outcome": _EXCHANGE, "exchanges.theirs.outcome": _EXCHANGE}

EVENTS = EventBook([
    EventSpec("straight_rolled", ROLLED, tail=", {outcome}", formerly=("straight_roll",),
        payload=STRAIGHT_ROLL),
    EventSpec("hide_rolled", "hides ([{place:words}|challenge]): " + ROLLED, tail=", {outcome}", formerly=("hide",),
        payload={**STRAIGHT_ROLL, "place": "str?", "seeker_pool": "int?"}),
    EventSpec("contest_started", "started [a combat{contest.kind=combat}|hiding{contest.kind=hide}|a contest]"
              "[: {contest.label}], {contest.mine}D vs {contest.theirs}D[ ({contest.rounds_left} rounds)]",
              formerly=("start_contest",),
        payload={"contest": "dict"}),
    EventSpec("round_rolled", "[{label}|the contest], round {round}: {mine_sum} vs {theirs_sum}", tail=", {outcome}",
              formerly=("iterated_round",),
        payload={"columns": "list", "dice": "dict", "eliminated": "dict", "kind": "str", "label": "str",
                 "mine_after": "int", "mine_before": "int", "mine_sum": "int", "odds": "dict", "outcome": "str",
                 "round": "int", "rounds_left": "int", "sorted": "dict", "success": "bool", "theirs_after": "int",
                 "theirs_before": "int", "theirs_sum": "int", "ties": "str", "winner": "str?", "conditions": "list?",
                 "sitting_out": "dict?"}),
    EventSpec("combat_round_rolled", "[{label}|the contest], round {round}: [{character_name}|the character] "
              "{exchanges.mine.outcome:word} ({exchanges.mine.attack_sum} vs {exchanges.mine.defence_sum}), "
              "they {exchanges.theirs.outcome:word} ({exchanges.theirs.attack_sum} vs {exchanges.theirs.defence_sum})",
              tail=", dealt {damage.to_them}D, took {damage.to_me}D", words=EXCHANGED, formerly=("combat_round",),
        payload={"available": "dict", "damage": "dict", "dice": "dict", "exchanges": "dict", "kind": "str",
                 "label": "str", "mine_after": "int", "mine_before": "int", "odds": "dict", "outcome": "str",
                 "penalties_after": "list", "portions": "dict", "round": "int", "rounds_left": "int?",
                 "theirs_after": "int", "theirs_before": "int", "ties": "str", "conditions": "list?",
                 "their_conditions": "int?"}),
    EventSpec("penalty_imposed", "penalty: [{character_name}{character_name:if}{penalty.side=mine}"
              "|the character{penalty.side=mine}"
              "|the opponent] −{penalty.dice}D for {penalty.rounds|round|rounds}", formerly=("impose_penalty",),
        payload={"penalty": "dict"}),
    EventSpec("contest_ended", "[{label}|the contest] ended after {rounds|round|rounds}: "
              "[won{winner=mine}|lost{winner=theirs}"
              "|undecided][ ({result})]", formerly=("end_contest",),
        payload={"damage_dealt": "int", "damage_taken": "int", "damage_to_assign": "int",
                 "exhaustion_reclaimed": "int", "kind": "str", "label": "str", "mine": "int", "reason": "str",
                 "rounds": "int", "theirs": "int", "why": "str?", "winner": "str?"}),
    EventSpec("damage_taken", "takes {taken}D of damage", formerly=("take_damage",),
        payload={"dice": "int", "reason": "str", "taken": "int", "unassigned_after": "int"}),
    EventSpec("damage_assigned", "spread damage", formerly=("assign_damage",),
        payload={"damage": "dict", "unassigned_before": "int"}),
    EventSpec("rested", "rested {days|day|days}", formerly=("rest",),
        payload={"damage_after": "dict", "days": "int", "recovered": "dict"}),
    EventSpec("points_awarded", "earned {points|advancement point|advancement points}", formerly=("award_points",),
        payload={"earned_after": "int", "points": "int", "reason": "str"}),
    EventSpec("advance_bought", "raised [{characteristic:cap} from {from}D to {to}D{characteristic:if}"
              "|{skill} from +{from}D to +{to}D]"
              " for {cost|point|points}", formerly=("buy_advance",),
        payload={"available_after": "int", "available_before": "int", "characteristic": "str?", "cost": "int",
                 "from": "int", "to": "int", "characteristics": "list?", "skill": "str?"}),
    *common.EVENTS,
])

# The state after an event; unknown types (generic rolls, ...) change nothing.
evolve = evolver({**common.handlers(HANDLERS), **FIGHT_HANDLERS}, EVENTS)
