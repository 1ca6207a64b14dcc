"""Tale RPG actions: one pure function per action, ``(state, action, dice) -> [Event]``.

Every die comes from ``dice.roll(6)``, in the order each function's docstring
gives, and only when the result can matter. A refused action raises
:class:`RuleError` before any die is rolled and returns no events.

The heart of the game is the *sorted elimination* of iterated resolution
(:func:`walk`): the loser's and the winner's dice, each sorted high to low, are
compared pair by pair from the top; each of the loser's dice that is lower than
the winner's die beside it is eliminated, and the walk stops at the first pair
where it is not (a tie or higher). This is the only reading that reproduces the
text's Sinistre/Autopet example round by round (12, 12 and 11 dice); see
docs/rules.md for why, and for ``"ties": "eliminate"``, the reading under
which Evilbloke spots Torkild in the first round.
"""

from __future__ import annotations

import functools

from .. import common, conditions
from ..base import DiceSource, Event, RuleError, odds_json
from ..declare import Choice, Flag, Group, Integer, ListOf, Text, action, actions_by_type
from .odds import (
    MAX_POOL, MAX_TARGET, PLACES, TIE_RULES, available, combat_odds, read_challenge,
    read_challenge_dice, read_place, read_portions, round_odds, sitting_out, straight_odds,
)
from .settings import options
from .sheet import (
    CHARACTERISTIC_MAX, CHARACTERISTICS, DEFAULT_SKILLS, MAX_NAME, SKILL_DICE_MAX, current, damage_room,
    damage_targets, find_skill, read_pair, ready_to_roll, skill_name, skill_pool,
)

MAX_ROUNDS = 50
MAX_TEXT = 200
MAX_POINTS = 100
MAX_REST_DAYS = 365
MAX_PENALTY = 10
SIDES = (("mine", "mine"), ("theirs", "theirs"), ("none", "nobody"))

# Fields several actions share. ``ties``, ``on_tie`` and ``with_secondary`` left out take the
# campaign's setting (rules/tale/settings.py), so they have no default here.
SKILL = Text(MAX_NAME, optional=True, label="Skill",
             help="A skill on the sheet or one the text names; none: primary + secondary.")
PAIR = ListOf(Choice(CHARACTERISTICS), 2, min_items=2, unique=True, optional=True, label="Characteristics",
              help="The two characteristics of a skill the sheet does not have.")
TIES = Choice([("stop", "a tie stops the walk"), ("eliminate", "a tie eliminates")], optional=True,
              label="A tie in the elimination", help="The campaign's setting when left out.")
ON_TIE = Choice([("failure", "fails"), ("success", "succeeds")], optional=True, label="A tie against the dice",
                help="The campaign's setting when left out.")
AVERAGE = Flag(label="Use the average (no roll for the challenge)")
LABEL = Text(MAX_TEXT, optional=True, label="Label")
ROUNDS = Integer(1, MAX_ROUNDS, optional=True, label="Rounds (a time limit)")
REASON = Text(MAX_TEXT, optional=True, label="Reason")
VS_CHARACTER = Integer(1, 2**53, optional=True, label="Opponent (a character)",
                       help="Another character of the campaign; their numbers come from their sheet.")


def _roll(dice: DiceSource, n: int) -> list[int]:
    return [dice.roll(6) for _ in range(n)]


def _desc(faces: list[int]) -> list[int]:
    return sorted(faces, reverse=True)


_ready_to_roll = ready_to_roll  # rules/tale/sheet.py: shared with the previews


def _no_contest(state: dict) -> None:
    if state.get("contest"):
        raise RuleError("A contest is already running: finish it or end it first.")
    if state.get("fight"):
        raise RuleError("The character is in a fight: it must end first.")


def _contest(state: dict, combat: bool) -> dict:
    contest = state.get("contest")
    if not contest:
        raise RuleError("There is no contest running.")
    if (contest["kind"] == "combat") != combat:
        raise RuleError("That is a combat: use combat_round." if not combat else
                        "That contest is not a combat: use iterated_round.")
    return contest


def _pool(state: dict, action: dict) -> dict:
    picked = skill_pool(state, action)
    if picked["pool"] < 1:
        raise RuleError(f"You have no dice to roll: {' and '.join(picked['characteristics'])} are at 0D.")
    return picked


def _ties(action: dict) -> str:
    return action["ties"] or TIE_RULES[0]


# --- the sorted elimination ----------------------------------------------------------------------

def walk(winner: list[int], loser: list[int], ties: str = "stop") -> list[str]:
    """Verdicts for each pair of the winner's and loser's dice, both sorted high to low.

    ``"eliminated"`` (the loser's die is lower: it is knocked out), ``"stopped"`` (the first pair
    where it is not; with ``ties="eliminate"`` a tie also eliminates, so only a higher die stops),
    ``"not_reached"`` (after the stop). Pairs exist only where both sides have a die.
    """
    verdicts, stopped = [], False
    for w, lo in zip(winner, loser):
        if stopped:
            verdicts.append("not_reached")
        elif lo < w or (lo == w and ties == "eliminate"):
            verdicts.append("eliminated")
        else:
            verdicts.append("stopped")
            stopped = True
    return verdicts


def _new_contest(kind: str, label: str, mine: int, theirs: int, rounds: int | None,
                 at_time_out: str, ties: str, pool: dict) -> dict:
    return {"kind": kind, "label": label, "mine": mine, "theirs": theirs, "start_mine": mine,
            "start_theirs": theirs, "round": 0, "rounds_left": rounds, "at_time_out": at_time_out,
            "ties": ties, "penalties": [], "damage_taken": 0, "damage_dealt": 0, "pool": pool}


def _opponent(contest: dict, action: dict) -> None:
    """A contest against another character (``vs_character``, rules/contests.py) remembers it: each
    round is then read by both sides' states."""
    if action.get("vs_character") is not None:
        contest["opponent"] = action["vs_character"]


def end_payload(state: dict, contest: dict, winner: str | None, reason: str) -> dict:
    """What ending a contest records; combat damage becomes damage to spread (at most what fits)."""
    payload = {"kind": contest["kind"], "label": contest["label"], "winner": winner, "reason": reason,
               "rounds": contest["round"], "mine": contest["mine"], "theirs": contest["theirs"],
               "exhaustion_reclaimed": sum(p["dice"] for p in contest["penalties"]),
               "damage_taken": contest["damage_taken"], "damage_dealt": contest["damage_dealt"],
               "damage_to_assign": min(contest["damage_taken"], damage_room(state))}
    if contest["kind"] == "hide":
        payload["result"] = "spotted" if winner == "theirs" else "hidden" if winner == "mine" else "undecided"
    return payload


def _ending(contest: dict) -> tuple[str | None, str] | None:
    """(winner, reason) if the contest (as a round left it) is decided, else ``None``."""
    mine, theirs = contest["mine"], contest["theirs"]
    if mine == 0 and theirs == 0:
        return None, "both_exhausted"
    if mine == 0:
        return "theirs", "pool_exhausted"
    if theirs == 0:
        return "mine", "pool_exhausted"
    if contest["rounds_left"] == 0:
        return (None if contest["at_time_out"] == "none" else contest["at_time_out"]), "time_out"
    return None


def _after_round(state: dict, contest: dict, kind: str, payload: dict) -> list[Event]:
    """The round event, plus an ``end_contest`` event when the round decided the contest."""
    events = [Event(kind, payload)]
    # What the contest looks like after this round (evolve applies the same change).
    after = {**contest, "mine": payload["mine_after"], "theirs": payload["theirs_after"],
             "round": payload["round"], "rounds_left": payload["rounds_left"],
             "damage_taken": contest["damage_taken"] + payload.get("damage", {}).get("to_me", 0),
             "damage_dealt": contest["damage_dealt"] + payload.get("damage", {}).get("to_them", 0),
             "penalties": payload.get("penalties_after", contest["penalties"])}
    decided = _ending(after)
    if decided:
        events.append(Event("contest_ended", end_payload(state, after, *decided)))
    return events


# --- rolls ---------------------------------------------------------------------------------------

def _straight(pool: int, challenge: dict, dice: DiceSource) -> dict:
    """Roll ``pool`` d6, then the challenge dice if the challenge is rolled; the shared payload."""
    chances = straight_odds(pool, challenge)
    faces = _roll(dice, pool)
    total = sum(faces)
    payload = {"pool": pool, "dice": faces, "total": total, **challenge}
    if "target" in challenge:
        success = total >= challenge["target"]  # "equal or higher to the target number"
        payload["margin"] = total - challenge["target"]
    else:
        theirs = _roll(dice, challenge["vs_pool"])
        payload.update(challenge_dice=theirs, challenge_total=sum(theirs), margin=total - sum(theirs))
        success = total > sum(theirs) or (total == sum(theirs) and challenge["on_tie"] == "success")
    payload.update(outcome="success" if success else "failure", success=success, odds=odds_json(chances))
    return payload


@action(
    "straight_roll", title="Straight roll", rolls=True, emits=("straight_rolled",),
    help="Sum the pool's d6 against a target number or rolled challenge dice.",
    fields={
        "skill": SKILL, "characteristics": PAIR,
        "target": Integer(1, MAX_TARGET, optional=True, label="Target number"),
        "vs_pool": Integer(1, MAX_POOL, optional=True, label="Challenge dice"),
        "average": AVERAGE, "on_tie": ON_TIE, "label": LABEL,
    },
    one_of=[(("target", "vs_pool"), "Give exactly one of 'target' (a number to reach) or 'vs_pool' "
                                    "(challenge dice to beat).")],
)
def straight_roll(state: dict, action: dict, dice: DiceSource) -> list[Event]:
    """Sum the pool's d6 against ``target`` or a rolled ``vs_pool``. Dice: the pool, then the challenge.

    Fields: ``skill`` or ``characteristics`` (else primary + secondary), and ``target`` or
    ``vs_pool`` (with optional ``average``, ``on_tie``).
    """
    picked = _pool(state, action)
    challenge = read_challenge(action)
    _ready_to_roll(state)
    return [Event("straight_rolled", {**picked, **_straight(picked["pool"], challenge, dice)})]


@action(
    "hide", title="Hide", rolls=True, emits=("hide_rolled", "contest_started"),
    help="The Hide pool against the place's challenge dice; against a named searcher, a hiding contest follows.",
    fields={
        "place": Choice(tuple(PLACES), optional=True, label="Place"),
        "challenge": Integer(1, MAX_POOL, optional=True, label="Challenge dice"),
        "seeker_pool": Integer(1, MAX_POOL, optional=True, label="Searcher's pool"),
        "rounds": ROUNDS, "ties": TIES, "average": AVERAGE, "on_tie": ON_TIE, "label": LABEL,
    },
    one_of=[(("place", "challenge"), f"Give exactly one of 'place' ({', '.join(PLACES)}) or 'challenge' "
                                     f"(dice 1..{MAX_POOL}).")],
)
def hide(state: dict, action: dict, dice: DiceSource) -> list[Event]:
    """The initial straight roll of hiding (Hide pool vs the place's challenge dice), and, when it
    succeeds against a named searcher (``seeker_pool``), the iterated hiding contest.

    Dice: the Hide pool, then the challenge dice.
    """
    seeker, rounds = action["seeker_pool"], action["rounds"]
    ties, label = _ties(action), action["label"] or ""
    if seeker is not None:
        _no_contest(state)
    picked = _pool(state, {"skill": "Hide"})
    place = action.get("place")
    challenge = read_challenge_dice(action, read_place(action))
    _ready_to_roll(state)
    roll = _straight(picked["pool"], challenge, dice)
    events = [Event("hide_rolled", {**picked, "place": place, **roll, "seeker_pool": seeker})]
    if roll["success"] and seeker is not None:
        contest = _new_contest("hide", label or "hiding", picked["pool"], seeker, rounds, "mine", ties, picked)
        events.append(Event("contest_started", {"contest": contest}))
    return events


# --- iterated resolution -------------------------------------------------------------------------

@action(
    "start_contest", title="Start a contest", emits=("contest_started",),
    help="An iterated contest: your pool against their dice, round by round, until one side has none.",
    fields={
        "skill": SKILL, "characteristics": PAIR,
        "vs_character": VS_CHARACTER,  # before the field it makes optional
        "vs_pool": Integer(1, MAX_POOL, optional=True, required_when={"vs_character": [None]},
                           label="Their dice"),
        "rounds": ROUNDS,
        "at_time_out": Choice(SIDES, default="none", label="When time runs out, the winner is"),
        "ties": TIES, "label": LABEL,
    },
)
def start_contest(state: dict, action: dict, dice: DiceSource) -> list[Event]:
    """Start an iterated contest: my pool (``skill``/``characteristics``) against ``vs_pool`` dice.

    Optional: ``rounds`` (a time limit), ``at_time_out`` (who wins when it runs out: mine, theirs
    or none), ``ties`` (stop or eliminate), ``label``. Rolls nothing.
    """
    _no_contest(state)
    picked = _pool(state, action)
    theirs, rounds, at_time_out = action["vs_pool"], action["rounds"], action["at_time_out"]
    ties, label = _ties(action), action["label"] or ""
    _ready_to_roll(state)
    contest = _new_contest("iterated", label, picked["pool"], theirs, rounds, at_time_out, ties, picked)
    _opponent(contest, action)
    return [Event("contest_started", {"contest": contest})]


def _columns(mine: list[int], theirs: list[int], verdicts: list[str] | None) -> list[dict]:
    """The text's two-row table, column by column; a missing die is ``None``.

    ``verdict`` is about the loser's die in that column (see :func:`walk`); ``"unpaired"`` where
    one side has no die; ``None`` everywhere when the sums were equal.
    """
    width = max(len(mine), len(theirs))
    cols = []
    for i in range(width):
        verdict = None
        if verdicts is not None:
            verdict = verdicts[i] if i < len(verdicts) else "unpaired"
        cols.append({"mine": mine[i] if i < len(mine) else None,
                     "theirs": theirs[i] if i < len(theirs) else None, "verdict": verdict})
    return cols


THEIR_CONDITIONS = Integer(0, conditions.MAX_EFFECT, default=0, label="Their penalty dice",
                           help="The opponent's conditions' penalty dice, filled from its sheet when it is a character.")


@action("iterated_round", title="Roll a round", rolls=True, emits=("round_rolled", "contest_ended"),
        help="One round of the running contest: both pools, the loser's dice eliminated.",
        fields={"their_conditions": THEIR_CONDITIONS})
def iterated_round(state: dict, action: dict, dice: DiceSource) -> list[Event]:
    """One round of an iterated contest. Dice: all of mine (less those my conditions keep out,
    :func:`rules.tale.odds.sitting_out`), then all of theirs.

    Equal sums: nothing happens. Otherwise the loser's rolled dice are eliminated by :func:`walk`.
    """
    contest = _contest(state, combat=False)
    mine_n, theirs_n = contest["mine"], contest["theirs"]
    # A condition's penalty dice sit this round out (rules/tale/odds.py ``sitting_out``), on either side.
    out, applied = sitting_out(state, mine_n)
    theirs_out = min(action["their_conditions"], theirs_n)
    chances = round_odds(mine_n - out, theirs_n - theirs_out)
    mine, theirs = _roll(dice, mine_n - out), _roll(dice, theirs_n - theirs_out)
    mine_sorted, theirs_sorted = _desc(mine), _desc(theirs)
    lost = {"mine": 0, "theirs": 0}
    verdicts = None
    if sum(mine) == sum(theirs):
        outcome, winner = "tie", None
    else:
        winner = "mine" if sum(mine) > sum(theirs) else "theirs"
        outcome = "win" if winner == "mine" else "lose"
        loser = "theirs" if winner == "mine" else "mine"
        sorted_dice = {"mine": mine_sorted, "theirs": theirs_sorted}
        verdicts = walk(sorted_dice[winner], sorted_dice[loser], contest["ties"])
        lost[loser] = verdicts.count("eliminated")
    rounds_left = None if contest["rounds_left"] is None else contest["rounds_left"] - 1
    payload = {
        "kind": contest["kind"], "label": contest["label"],
        "round": contest["round"] + 1, "ties": contest["ties"],
        "mine_before": mine_n, "theirs_before": theirs_n,
        "dice": {"mine": mine, "theirs": theirs}, "mine_sum": sum(mine), "theirs_sum": sum(theirs),
        "outcome": outcome, "winner": winner, "success": outcome == "win",
        "sorted": {"mine": mine_sorted, "theirs": theirs_sorted},
        "columns": _columns(mine_sorted, theirs_sorted, verdicts),
        "eliminated": lost,
        "mine_after": mine_n - lost["mine"], "theirs_after": theirs_n - lost["theirs"],
        "rounds_left": rounds_left, "odds": odds_json(chances),
        # Only when a condition kept dice out: a log from before conditions replays as it was decided.
        **({"conditions": applied} if applied else {}),
        **({"sitting_out": {"mine": out, "theirs": theirs_out}} if out or theirs_out else {}),
    }
    return _after_round(state, contest, "round_rolled", payload)


@action("end_contest", title="End the contest", emits=("contest_ended",),
        fields={"winner": Choice(SIDES, default="none", label="Winner"), "reason": REASON},
        help="Exhaustion dice are reclaimed; combat damage taken becomes damage to spread.")
def end_contest(state: dict, action: dict, dice: DiceSource) -> list[Event]:
    """End the running contest now (GM or player): ``winner`` mine/theirs/none, ``reason`` text.

    Exhaustion dice are reclaimed; combat damage taken becomes damage to spread.
    """
    contest = state.get("contest")
    if not contest:
        raise RuleError("There is no contest running.")
    winner = action["winner"]
    payload = end_payload(state, contest, None if winner == "none" else winner, "ended")
    payload["why"] = action["reason"] or ""
    return [Event("contest_ended", payload)]


# --- combat --------------------------------------------------------------------------------------

def combat_pool(state: dict, with_secondary: bool) -> list[str]:
    """The characteristics a combat pool is made of: primary + Skill (+ secondary if used), each
    counted once: a secondary that is Skill is in the pool already and adds nothing more
    (docs/rules.md, Tale reading 22), as a primary that is Skill counts once."""
    names = list(damage_targets(state))
    if with_secondary and state["sheet"]["secondary"] not in names:
        names.append(state["sheet"]["secondary"])
    return names


@action(
    "start_combat", title="Start a combat", emits=("contest_started",),
    help="Your pool (primary + Skill, + secondary if used) against their dice.",
    fields={
        "vs_character": VS_CHARACTER,  # before the field it makes optional
        "their_pool": Integer(1, MAX_POOL, optional=True, required_when={"vs_character": [None]},
                              label="Their dice"),
        "with_secondary": Flag(default=None, label="Add the secondary characteristic",
                               help="The campaign's setting when left out."),
        "ties": TIES, "label": LABEL,
    },
)
def start_combat(state: dict, action: dict, dice: DiceSource) -> list[Event]:
    """Start a combat: my pool (primary + Skill, + secondary if ``with_secondary``) against
    ``their_pool`` dice. Optional ``ties``, ``label``. Rolls nothing.
    """
    _no_contest(state)
    theirs = action["their_pool"]
    names = combat_pool(state, bool(action["with_secondary"]))
    ties, label = _ties(action), action["label"] or ""
    _ready_to_roll(state)
    mine = sum(current(state, c) for c in names)
    if mine < 1:
        raise RuleError(f"You have no dice to fight with: {' and '.join(names)} are at 0D.")
    pool = {"pool": mine, "characteristics": names}
    contest = _new_contest("combat", label or "combat", mine, theirs, None, "none", ties, pool)
    _opponent(contest, action)
    return [Event("contest_started", {"contest": contest})]


def _exchange(attack: list[int], defence: list[int], their_attack: list[int], idle: int, ties: str) -> dict:
    """One side's attack against the other's defence; a hit eliminates like iterated resolution,
    rolling over onto the defender's attack dice, then onto its unrolled dice (worth 0 each).
    """
    if not attack:
        return {"outcome": "no_attack", "attack_sum": 0, "defence_sum": sum(defence), "columns": [],
                "eliminated": {"defence": 0, "attack": 0, "idle": 0}, "damage": 0, "penalty": 0}
    a, d = sum(attack), sum(defence)
    outcome = "hit" if a > d else "even" if a == d else "miss"
    columns, lost = [], {"defence": 0, "attack": 0, "idle": 0}
    if outcome == "hit":
        winner = _desc(attack)
        loser = [(f, "defence") for f in _desc(defence)] + [(f, "attack") for f in _desc(their_attack)]
        loser += [(0, "idle")] * idle
        verdicts = walk(winner, [f for f, _ in loser], ties)
        for (face, portion), w, verdict in zip(loser, winner, verdicts):
            columns.append({"attack": w, "defender": face, "portion": portion, "verdict": verdict})
            if verdict == "eliminated":
                lost[portion] += 1
    return {"outcome": outcome, "attack_sum": a, "defence_sum": d, "columns": columns,
            "eliminated": lost, "damage": sum(lost.values()), "penalty": 1 if outcome == "miss" else 0}


@action(
    "combat_round", title="Combat round", rolls=True, emits=("combat_round_rolled", "contest_ended"),
    help="Both sides portion their dice into attack and defence; the rest does nothing this round.",
    fields={
        "attack": Integer(0, MAX_POOL, label="Attack"),
        "defence": Integer(0, MAX_POOL, label="Defence"),
        "their_attack": Integer(0, MAX_POOL, label="Their attack"),
        "their_defence": Integer(0, MAX_POOL, label="Their defence"),
        "their_conditions": THEIR_CONDITIONS,
    },
)
def combat_round(state: dict, action: dict, dice: DiceSource) -> list[Event]:
    """One round of combat, both sides at once. Fields: ``attack``, ``defence`` (my portions),
    ``their_attack``, ``their_defence``; the rest of each pool does nothing.

    Dice, in order: my attack; my defence (only if they attack); their attack; their defence
    (only if I attack).
    """
    contest = _contest(state, combat=True)
    # Less a condition's penalty dice, while it lasts, on either side (rules/tale/odds.py ``available``).
    (mine_av, theirs_av), applied = available(contest, state, action["their_conditions"])
    p = read_portions(action, mine_av, theirs_av)
    chances = combat_odds(p)
    my_attack = _roll(dice, p["attack"])
    my_defence = _roll(dice, p["defence"]) if p["their_attack"] else []
    their_attack = _roll(dice, p["their_attack"])
    their_defence = _roll(dice, p["their_defence"]) if p["attack"] else []
    idle = {"mine": contest["mine"] - p["attack"] - p["defence"],
            "theirs": contest["theirs"] - p["their_attack"] - p["their_defence"]}
    # The attacks and defences all happen at the same time: both use the dice as rolled.
    mine_x = _exchange(my_attack, their_defence, their_attack, idle["theirs"], contest["ties"])
    theirs_x = _exchange(their_attack, my_defence, my_attack, idle["mine"], contest["ties"])
    # Penalties that applied this round run down; a miss costs 1D next round.
    penalties = [{**pen, "rounds": pen["rounds"] - 1} for pen in contest["penalties"] if pen["rounds"] > 1]
    for side, x in (("mine", mine_x), ("theirs", theirs_x)):
        if x["penalty"]:
            penalties.append({"side": side, "dice": 1, "rounds": 1, "why": "missed"})
    payload = {
        "kind": "combat", "label": contest["label"], "round": contest["round"] + 1,
        "ties": contest["ties"], "mine_before": contest["mine"], "theirs_before": contest["theirs"],
        "available": {"mine": mine_av, "theirs": theirs_av},
        "portions": {"mine": {"attack": p["attack"], "defence": p["defence"], "idle": idle["mine"]},
                     "theirs": {"attack": p["their_attack"], "defence": p["their_defence"], "idle": idle["theirs"]}},
        "dice": {"my_attack": my_attack, "my_defence": my_defence,
                 "their_attack": their_attack, "their_defence": their_defence},
        "exchanges": {"mine": mine_x, "theirs": theirs_x},
        "outcome": f"{mine_x['outcome']}/{theirs_x['outcome']}",
        "damage": {"to_me": theirs_x["damage"], "to_them": mine_x["damage"]},
        "mine_after": contest["mine"] - theirs_x["damage"], "theirs_after": contest["theirs"] - mine_x["damage"],
        "rounds_left": contest["rounds_left"], "penalties_after": penalties, "odds": odds_json(chances),
        # Only when a condition took dice: a log from before conditions replays as it was decided.
        **({"conditions": applied} if applied else {}),
        **({"their_conditions": action["their_conditions"]} if action["their_conditions"] else {}),
    }
    return _after_round(state, contest, "combat_round_rolled", payload)


@action(
    "impose_penalty", title="Impose an exhaustion penalty", by="gm", emits=("penalty_imposed",),
    help="Dice off one side for the next one or two combat rounds; reclaimed when the combat ends.",
    fields={
        "side": Choice(SIDES[:2], default="mine", label="On"),
        "dice": Integer(1, MAX_PENALTY, label="Dice"),
        "rounds": Integer(1, 2, default=1, label="Rounds"),
        "reason": REASON,
    },
)
def impose_penalty(state: dict, action: dict, dice: DiceSource) -> list[Event]:
    """GM: an exhaustion penalty of ``dice`` D on ``side`` (mine/theirs) for the next ``rounds``
    (1 or 2) combat rounds; reclaimed when the combat ends.
    """
    _contest(state, combat=True)
    penalty = {"side": action["side"], "dice": action["dice"], "rounds": action["rounds"],
               "why": action["reason"] or "exhaustion"}
    return [Event("penalty_imposed", {"penalty": penalty})]


# --- damage and recovery -------------------------------------------------------------------------

@action("take_damage", title="Damage outside combat", by="gm", emits=("damage_taken",),
        fields={"dice": Integer(1, MAX_POOL, label="Dice of damage"), "reason": REASON},
        help="A fall, a trap: spread over the primary characteristic and Skill like combat damage.")
def take_damage(state: dict, action: dict, dice: DiceSource) -> list[Event]:
    """GM: ``dice`` D of damage outside combat (a fall, a trap), to be spread like combat damage."""
    wanted = action["dice"]
    reason = action["reason"] or ""
    room = damage_room(state)
    if room == 0:
        raise RuleError(f"{' and '.join(damage_targets(state)).capitalize()} are already at 0D: there is nothing left to damage.")
    taken = min(wanted, room)
    return [Event("damage_taken", {"dice": wanted, "taken": taken, "reason": reason,
                                  "unassigned_after": state["unassigned_damage"] + taken})]


@action(
    "assign_damage", title="Spread damage", emits=("damage_assigned",),
    help="Spread the damage taken over the primary characteristic and Skill, exactly.",
    fields={"damage": Group({c: Integer(0, CHARACTERISTIC_MAX, optional=True, label=c.capitalize())
                             for c in CHARACTERISTICS}, label="Damage", help="Dice of damage per characteristic.")},
)
def assign_damage(state: dict, action: dict, dice: DiceSource) -> list[Event]:
    """Spread the damage taken over the primary characteristic and Skill:
    ``{"damage": {"brawn": 1, "skill": 1}}``, summing to exactly the damage taken.
    """
    owed = state["unassigned_damage"]
    if not owed:
        raise RuleError("You have no damage to assign.")
    spread = {name: n for name, n in action["damage"].items() if n is not None}
    targets = damage_targets(state)
    if not spread or set(spread) - set(targets):
        raise RuleError(f"'damage' must be an object spreading {owed}D over {' and '.join(targets)}, "
                        f"e.g. {{\"{targets[0]}\": {owed}}}.", "invalid")
    clean = {}
    for name in targets:
        if name in spread:
            if spread[name] > current(state, name):  # what the characteristic has left
                raise RuleError(f"'damage.{name}' must be from 0 to {current(state, name)}, not {spread[name]}.",
                                "invalid")
            clean[name] = spread[name]
    if sum(clean.values()) != owed:
        raise RuleError(f"Spread exactly {owed}D of damage, not {sum(clean.values())}D.", "invalid")
    return [Event("damage_assigned", {"damage": clean, "unassigned_before": owed})]


@action("rest", title="Rest", emits=("rested",), fields={"days": Integer(1, MAX_REST_DAYS, default=1, label="Days")},
        help="Each day of full rest, each damaged characteristic recovers 1D.")
def rest(state: dict, action: dict, dice: DiceSource) -> list[Event]:
    """``days`` of full rest: each damaged characteristic recovers 1D per day."""
    days = action["days"]
    if state.get("contest"):
        raise RuleError("You cannot rest in the middle of a contest.")
    _ready_to_roll(state)
    if not any(state["damage"].values()):
        raise RuleError("You have no damage to recover from.")
    recovered = {c: min(days, n) for c, n in state["damage"].items() if n}
    after = {c: n - recovered.get(c, 0) for c, n in state["damage"].items()}
    return [Event("rested", {"days": days, "recovered": recovered, "damage_after": after})]


# --- advancement ---------------------------------------------------------------------------------

@action("award_points", title="Award advancement points", by="gm", emits=("points_awarded",),
        fields={"points": Integer(1, MAX_POINTS, label="Points"), "reason": Text(MAX_TEXT, label="Reason")},
        help="The text suggests 2 to 5 a session.")
def award_points(state: dict, action: dict, dice: DiceSource) -> list[Event]:
    """GM: award advancement points (the text suggests 2 to 5 a session) with a ``reason``."""
    points, reason = action["points"], action["reason"]
    return [Event("points_awarded", {"points": points, "reason": reason,
                                   "earned_after": state["points"]["earned"] + points})]


def characteristic_cost(to: int) -> int:
    """Raising a characteristic to ``to`` D costs ``to`` points."""
    return to


def skill_cost(to: int, pool_below: int | None = None) -> int:
    """Raising a skill to +``to`` D costs half a characteristic's price, rounded up: of its own
    dice (the default reading), or of the whole pool it reaches when ``pool_below`` (the two
    characteristics' ratings) is given (setting ``skill_die_cost: "pool"``, docs/rules.md Tale 33)."""
    return (to + (pool_below or 0) + 1) // 2


def _pool_below(sheet: dict, pair: list[str], chosen: dict) -> int | None:
    if chosen["skill_die_cost"] != "pool":
        return None
    return sum(sheet["characteristics"][c] for c in pair)


@action(
    "buy_advance", title="Buy an advance", emits=("advance_bought",),
    help="Raise one characteristic or one skill by 1D, paying advancement points.",
    fields={
        "characteristic": Choice(CHARACTERISTICS, optional=True, label="Characteristic"),
        "skill": Text(MAX_NAME, optional=True, label="Skill"),
        "characteristics": PAIR,
    },
    one_of=[(("characteristic", "skill"), "Name exactly one 'characteristic' or one 'skill' to raise.")],
)
def buy_advance(state: dict, action: dict, dice: DiceSource) -> list[Event]:
    """Raise one ``characteristic`` or one ``skill`` by 1D, paying advancement points.

    A skill the sheet does not have yet needs ``characteristics`` (its two), unless it is one of
    the skills the text names (Jump, Hide, Spot Hidden).
    """
    advance = advance_cost(state, action)
    have = state["points"]["earned"] - state["points"]["spent"]
    if advance["cost"] > have:
        what = advance.get("characteristic") or advance["skill"]
        level = f"{advance['to']}D" if "characteristic" in advance else f"+{advance['to']}D"
        raise RuleError(f"Raising {what} to {level} costs {advance['cost']} advancement points; you have {have}.")
    return [Event("advance_bought", {**advance, "available_before": have, "available_after": have - advance["cost"]})]


def advance_cost(state: dict, action: dict, settings: dict | None = None) -> dict:
    """What ``buy_advance`` would buy: ``{characteristic or skill (and its characteristics), from,
    to, cost}``; :class:`RuleError` if the rules forbid it. ``settings``: the campaign's, when the
    caller has them already (``options(state)``)."""
    # A characteristic raised while damage waits to be spread would change where it may go and how
    # much fits: the damage is spread first (docs/rules.md, Tale 37).
    _ready_to_roll(state)
    sheet = state["sheet"]
    if action["characteristic"] is not None:
        name = action["characteristic"]
        start = sheet["characteristics"][name]
        if start >= CHARACTERISTIC_MAX:
            raise RuleError(f"{name.capitalize()} is already at the {CHARACTERISTIC_MAX}D maximum.")
        return {"characteristic": name, "from": start, "to": start + 1, "cost": characteristic_cost(start + 1)}
    name = skill_name(action["skill"])
    known = find_skill(sheet["skills"], name)
    if known:
        name, pair, start = known, sheet["skills"][known]["characteristics"], sheet["skills"][known]["dice"]
    else:
        default = find_skill(DEFAULT_SKILLS, name)
        start = 0
        if default:
            name, pair = default, list(DEFAULT_SKILLS[default])
        elif action.get("characteristics") is None:
            raise RuleError(f"{name} is a new skill: say which two characteristics it is based on "
                            "('characteristics': [two of " + ", ".join(CHARACTERISTICS) + "]).")
        else:
            pair = read_pair(action["characteristics"])
    if start >= SKILL_DICE_MAX:
        raise RuleError(f"{name} is already at the +{SKILL_DICE_MAX}D maximum.")
    return {"skill": name, "characteristics": list(pair), "from": start, "to": start + 1,
            "cost": skill_cost(start + 1, _pool_below(sheet, pair, settings or options(state)))}


def advances(state: dict) -> dict:
    """What each advance would cost now, for the form (``rules.common.advance_price``): every
    characteristic, every skill on the sheet or in the text, and a new skill on each pair of
    characteristics (``"deft+brawn"``: its price may depend on the pair, setting ``skill_die_cost``)."""
    cost = functools.partial(advance_cost, settings=options(state))  # read once, not per price

    def price(**fields):  # names straight from the sheet: already as the declaration leaves them
        return common.advance_price(cost, state, buy_advance.as_validated(**fields))
    skills = [*state["sheet"]["skills"], *(d for d in DEFAULT_SKILLS if not find_skill(state["sheet"]["skills"], d))]
    return {
        "characteristic": {c: price(characteristic=c) for c in CHARACTERISTICS},
        "skill": {name: price(skill=name) for name in skills},
        "new_skill": {f"{a}+{b}": price(skill=NEW_SKILL, characteristics=[a, b])
                      for a in CHARACTERISTICS for b in CHARACTERISTICS if a != b},
    }


NEW_SKILL = "A new skill"  # priced as any skill not on the sheet nor in the text


ACTIONS = actions_by_type(
    straight_roll, hide, start_contest, iterated_round, start_combat, combat_round, impose_penalty, end_contest,
    take_damage, assign_damage, rest, award_points, buy_advance,
    # Conditions with a duration (rules/conditions.py): penalty dice in combat rounds while they last.
    *conditions.actions("Penalty dice", "Dice the character can't portion out in a combat round while it lasts.", lo=0),
)
