"""Exact odds for Tale RPG, as ``fractions.Fraction``.

Every roll in Tale RPG is a sum of d6s, so everything here comes from the exact
distribution of the sum of ``n`` d6 (integer counts of ways, convolved once per
pool size and cached) compared with a number or with another such sum.

Raw forms ``odds()`` accepts (the ``manage.py odds`` CLI)::

    {"type": "straight_roll", "pool": 6, "target": 21}         -> success / failure
    {"type": "straight_roll", "pool": 6, "vs_pool": 7}         -> success / failure
    {"type": "hide", "pool": 9, "place": "open_space"}         -> success / failure
    {"type": "iterated_round", "mine": 12, "theirs": 12}       -> win / tie / lose
    {"type": "combat_round", "attack": 3, "defence": 3,
     "their_attack": 4, "their_defence": 2}                    -> my_hit / my_even / my_miss,
                                                                  their_hit / their_even / their_miss

This module also reads the action fields the odds depend on, so that the
actions, the previews and the CLI all read them the same way.
"""

from __future__ import annotations

from fractions import Fraction
from functools import lru_cache

from .. import conditions
from ..base import RuleError, require_int
from .sheet import ready_to_roll, skill_pool

MAX_POOL = 40  # dice on one side of any roll
MAX_TARGET = 6 * MAX_POOL
TIE_RULES = ("stop", "eliminate")  # what an equal pair of dice does in the sorted elimination

# The text's rough estimates of how hard it is to hide (challenge rating in dice).
PLACES = {
    "open_space": 10,
    "light_undergrowth": 6,
    "heavy_undergrowth": 4,
    "heavy_forest": 2,
}

# The text's reference table of difficulties (challenge dice, as an average 6D person faces them).
DIFFICULTIES = {
    "trivial": 2,
    "almost_trivial": 3,
    "very_easy": 4,
    "easy": 5,
    "normal": 6,
    "hard": 7,
    "difficult": 8,
    "very_difficult": 9,
    "extremely_difficult": 10,
}


# --- exact distributions -------------------------------------------------------------------------

@lru_cache(maxsize=None)
def sum_counts(n: int) -> tuple[int, ...]:
    """``counts[s]`` = the number of ways ``n`` d6 sum to ``s`` (out of ``6**n``)."""
    if n == 0:
        return (1,)
    previous = sum_counts(n - 1)
    # counts[s] = previous[s-6] + ... + previous[s-1]: a sliding window over the
    # previous pool's counts, one addition and one subtraction per total.
    counts = [0] * (6 * n + 1)
    window = 0
    for total in range(1, 6 * n + 1):
        window += previous[total - 1] if total - 1 < len(previous) else 0
        if total - 7 >= 0:
            window -= previous[total - 7]
        counts[total] = window
    return tuple(counts)


@lru_cache(maxsize=None)
def _at_least_counts(n: int) -> tuple[int, ...]:
    """``tail[s]`` = ways ``n`` d6 sum to ``s`` or more (``tail[6n+1] = 0``)."""
    counts = sum_counts(n)
    tail = [0] * (6 * n + 2)
    for total in range(6 * n, -1, -1):
        tail[total] = tail[total + 1] + counts[total]
    return tuple(tail)


def at_least(n: int, target: int) -> Fraction:
    """P(the sum of ``n`` d6 is ``target`` or more)."""
    if target <= 0:
        return Fraction(1)
    if target > 6 * n:
        return Fraction(0)
    return Fraction(_at_least_counts(n)[target], 6 ** n)


@lru_cache(maxsize=None)
def compare(n: int, m: int) -> tuple[Fraction, Fraction, Fraction]:
    """(P(A > B), P(A = B), P(A < B)) for A the sum of ``n`` d6 and B of ``m`` d6."""
    a, b, tail_b = sum_counts(n), sum_counts(m), _at_least_counts(m)
    greater = equal = 0
    for total, ways in enumerate(a):
        if ways:
            below = tail_b[0] - (tail_b[total] if total <= 6 * m else 0)  # ways B < total
            greater += ways * below
            if total <= 6 * m:
                equal += ways * b[total]
    whole = 6 ** (n + m)
    greater, equal = Fraction(greater, whole), Fraction(equal, whole)
    return greater, equal, 1 - greater - equal


def average_value(dice: int) -> int:
    """The text's "average value" of a challenge: 3.5 times its dice, rounded up."""
    return (7 * dice + 1) // 2


# --- reading the fields the odds depend on -------------------------------------------------------

def choice(action: dict, key: str, options, default):
    """An optional enumerated string field."""
    value = action.get(key, default)
    if value not in options:
        raise RuleError(f"'{key}' must be one of: {', '.join(map(str, options))}.", "invalid")
    return value


def flag(action: dict, key: str, default: bool = False) -> bool:
    """An optional true/false field."""
    value = action.get(key, default)
    if not isinstance(value, bool):
        raise RuleError(f"'{key}' must be true or false.", "invalid")
    return value


def read_challenge(action: dict) -> dict:
    """What a straight roll is against: exactly one of ``target`` (a number) or ``vs_pool`` (dice).

    ``vs_pool`` dice are rolled and must be beaten (a tie fails, as the reference table does;
    ``"on_tie": "success"`` plays a tie as a success instead). With ``"average": true`` the
    challenge dice are not rolled: the target is the text's average value, ceil(3.5 x dice),
    and equal or higher succeeds, as for any target number.
    """
    has_target, has_pool = action.get("target") is not None, action.get("vs_pool") is not None
    if has_target == has_pool:
        raise RuleError("Give exactly one of 'target' (a number to reach) or 'vs_pool' (challenge dice to beat).", "invalid")
    if has_target:
        return {"target": require_int(action, "target", 1, MAX_TARGET)}
    return read_challenge_dice(action, require_int(action, "vs_pool", 1, MAX_POOL))


def read_challenge_dice(action: dict, dice: int) -> dict:
    """A challenge of ``dice`` D: rolled (default) or its average value (``"average": true``)."""
    if flag(action, "average"):
        return {"target": average_value(dice), "average_of": dice}
    return {"vs_pool": dice, "on_tie": choice(action, "on_tie", ("failure", "success"), "failure")}


def read_place(action: dict) -> int:
    """The challenge dice of a hiding place: ``place`` (from the text's table) or ``challenge``."""
    has_place, has_dice = action.get("place") is not None, action.get("challenge") is not None
    if has_place == has_dice:
        raise RuleError(f"Give exactly one of 'place' ({', '.join(PLACES)}) or 'challenge' (dice 1..{MAX_POOL}).", "invalid")
    if has_place:
        return PLACES[choice(action, "place", tuple(PLACES), None)]
    return require_int(action, "challenge", 1, MAX_POOL)


def read_portions(action: dict, mine: int, theirs: int) -> dict:
    """The four portions of a combat round, each side's attack + defence within its available dice."""
    portions = {}
    for side, key_a, key_d, available in (("mine", "attack", "defence", mine),
                                          ("theirs", "their_attack", "their_defence", theirs)):
        attack = require_int(action, key_a, 0, MAX_POOL)
        defence = require_int(action, key_d, 0, MAX_POOL)
        if attack + defence > available:
            who = "You have" if side == "mine" else "Your opponent has"
            raise RuleError(f"{who} only {available}D to portion out this round, not {attack}+{defence}D.", "invalid")
        portions[key_a], portions[key_d] = attack, defence
    return portions


# --- odds of each kind of roll -------------------------------------------------------------------

def straight_odds(pool: int, challenge: dict) -> dict[str, Fraction]:
    """success / failure of ``pool`` d6 against a challenge from :func:`read_challenge`."""
    if "target" in challenge:
        success = at_least(pool, challenge["target"])
    else:
        greater, equal, _ = compare(pool, challenge["vs_pool"])
        success = greater + (equal if challenge["on_tie"] == "success" else 0)
    return {"success": success, "failure": 1 - success}


def round_odds(mine: int, theirs: int) -> dict[str, Fraction]:
    """win / tie / lose of one iterated round, from my side."""
    win, tie, lose = compare(mine, theirs)
    return {"win": win, "tie": tie, "lose": lose}


def combat_odds(p: dict) -> dict[str, Fraction]:
    """Two distributions in one table: my attack against their defence, theirs against mine.

    A side that attacks with no dice has no entries (it cannot hit or miss).
    """
    result = {}
    for who, attack, defence in (("my", p["attack"], p["their_defence"]), ("their", p["their_attack"], p["defence"])):
        if attack:
            hit, even, miss = compare(attack, defence)
            result.update({f"{who}_hit": hit, f"{who}_even": even, f"{who}_miss": miss})
    return result


def odds(action: dict) -> dict[str, Fraction]:
    """Exact odds of a raw rolling action (the forms in this module's docstring)."""
    if not isinstance(action, dict):
        raise RuleError("An action must be a JSON object.", "invalid")
    kind = action.get("type")
    if kind == "straight_roll":
        return straight_odds(require_int(action, "pool", 1, MAX_POOL), read_challenge(action))
    if kind == "hide":
        pool = require_int(action, "pool", 1, MAX_POOL)
        return straight_odds(pool, read_challenge_dice(action, read_place(action)))
    if kind == "iterated_round":
        return round_odds(require_int(action, "mine", 1, MAX_POOL), require_int(action, "theirs", 1, MAX_POOL))
    if kind == "combat_round":
        return combat_odds(read_portions(action, MAX_POOL, MAX_POOL))
    raise RuleError("Odds are known for straight_roll, hide, iterated_round and combat_round.", "invalid")


def preview(state: dict, action: dict) -> dict[str, Fraction]:
    """Exact odds of an action this character is about to take; ``{}`` for one that rolls nothing."""
    if not isinstance(action, dict):
        raise RuleError("An action must be a JSON object.", "invalid")
    kind = action.get("type")
    contest = state.get("contest")
    if kind in ("straight_roll", "hide", "start_contest", "start_combat"):
        ready_to_roll(state)  # the roll would be refused: so are its odds (docs/rules.md, Tale 38)
    if kind in ("straight_roll", "hide"):
        pool = skill_pool(state, {**action, "skill": "Hide"} if kind == "hide" else action)["pool"]
        if pool < 1:
            raise RuleError("You have no dice left to roll.")
        challenge = read_challenge(action) if kind == "straight_roll" else read_challenge_dice(action, read_place(action))
        return straight_odds(min(pool, MAX_POOL), challenge)
    if kind == "iterated_round":
        if not contest or contest["kind"] == "combat":
            raise RuleError("There is no iterated contest running.")
        theirs = contest["theirs"] - min(action.get("their_conditions") or 0, contest["theirs"])
        return round_odds(contest["mine"] - sitting_out(state, contest["mine"])[0], theirs)
    if kind == "combat_round":
        if not contest or contest["kind"] != "combat":
            raise RuleError("There is no combat running.")
        return combat_odds(read_portions(action, *available(contest, state, action.get("their_conditions") or 0)[0]))
    return {}


def available(contest: dict, state: dict, theirs_off: int = 0) -> tuple[tuple[int, int], list[dict]]:
    """Dice each side may portion out this combat round: its pool less its exhaustion penalties and its
    conditions' penalty dice while they last, as the text's "one- and two-round penalties"
    (tale-rpg.txt:64-66, rules/conditions.py): mine from my state, ``theirs_off`` the opponent's (filled
    from its sheet, rules/tale/opposed.py ``fill_round``); with my conditions that took dice."""
    penalty = {"mine": 0, "theirs": 0}
    for p in contest.get("penalties", []):
        penalty[p["side"]] += p["dice"]
    mine_off, applied = conditions.effect(state)
    return ((max(0, contest["mine"] - penalty["mine"] - mine_off),
             max(0, contest["theirs"] - penalty["theirs"] - theirs_off)), applied)


def sitting_out(state: dict, dice: int) -> tuple[int, list[dict]]:
    """How many of a side's ``dice`` its conditions' penalty dice keep out of an iterated round, and
    those conditions. Iterated resolution portions "the available dice pool" into attack, defence and
    do-nothing pools (tale-rpg.txt:9) and its penalties are exhaustion dice (tale-rpg.txt:8, 66): a
    penalty die sits in the do-nothing pool, rolled by nobody and never walked against the winner's
    (the walk goes down "both pools" as rolled, tale-rpg.txt:10; the text rolls over onto unrolled
    dice in combat only, tale-rpg.txt:62), and is back the round after the condition ends."""
    off, applied = conditions.effect(state)
    return min(max(0, off), dice), applied
