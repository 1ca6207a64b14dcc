"""Mundo das Trevas Lite: exact odds as Fractions.

One d10 gives 0 successes (faces 1-6, a 1 among them), 1 success (7, 8, 9) or
2 successes (10). A pool's success count is the convolution of that per-die
distribution, counted in whole numbers of ways out of ``10**dice`` (exact
``Fraction`` arithmetic in the loops cost tens of milliseconds for 30 dice;
a Fraction is made only for each probability returned); a Dramatic Failure (no successes and any 1) has the closed form
P(all dice 1..6) - P(all dice 2..6) = (6/10)^n - (5/10)^n. A pool of 0 dice or
fewer is a Luck Test: one die, a success only on a 10.

Odds tables (their keys are documented in ``docs/rules.md``):

* ``test``: ``success`` + ``failure`` = 1; ``exceptional`` is part of
  ``success`` and ``dramatic_failure`` part of ``failure``.
* ``opposed_test``: ``win`` + ``tie`` + ``loss`` = 1, plus ``dramatic_failure``.
* ``contest_round``: ``win`` + ``loss`` + ``continue`` = 1, plus ``dramatic_failure``.
* ``project_roll``: ``complete`` + ``continue`` = 1, plus ``dramatic_failure``.
"""

from __future__ import annotations

from fractions import Fraction
from functools import lru_cache
from typing import Any

from ..base import RuleError, require_int
from .sheet import OPTIONS

MAX_POOL = 30  # the largest pool any roll may use; keeps exact odds instant
MAX_DIFFICULTY = 3
MAX_CONTEST_TARGET = 50
MAX_RACE_TOTAL = 10_000  # raw odds only: tied sides past the target race on, so totals can exceed it
MAX_PROJECT_TARGET = 100
TIE_RULES = ("none", "character", "opponent")

DIE = (6, 3, 1)  # ways (of 10 faces) to roll 0, 1 and 2 successes
DEFAULT_OPTIONS = {key: default for key, (default, _lo, _hi) in OPTIONS.items()}


@lru_cache(maxsize=None)
def success_counts(pool: int, luck_ten: int = 1) -> tuple[tuple[int, ...], int]:
    """``(ways, total)``: ``ways[k]`` rolls of ``total`` give exactly k successes.

    ``pool <= 0`` is a Luck Test: one die, ``luck_ten`` successes on a 10.
    """
    if pool <= 0:
        ways = [0] * (luck_ten + 1)
        ways[0] = 9
        ways[luck_ten] = 1
        return tuple(ways), 10
    if pool > MAX_POOL:
        raise RuleError(f"A pool may have at most {MAX_POOL} dice.", "invalid")
    previous, total = success_counts(pool - 1) if pool > 1 else ((1,), 1)
    ways = [0] * (len(previous) + 2)
    for k, count in enumerate(previous):
        for gain, per_die in enumerate(DIE):
            ways[k + gain] += count * per_die
    return tuple(ways), total * 10


def successes(pool: int, luck_ten: int = 1) -> tuple[Fraction, ...]:
    """Exact distribution of successes: ``result[k]`` is P(k successes)."""
    ways, total = success_counts(pool, luck_ten)
    return tuple(Fraction(count, total) for count in ways)


@lru_cache(maxsize=None)
def at_least(pool: int, needed: int, luck_ten: int = 1) -> Fraction:
    """P(at least ``needed`` successes)."""
    ways, total = success_counts(pool, luck_ten)
    return Fraction(sum(ways[max(0, needed):]), total)


@lru_cache(maxsize=None)
def dramatic_failure(pool: int, luck_dramatic_failure: bool = True) -> Fraction:
    """P(no successes and at least one die showing 1)."""
    if pool <= 0:
        return Fraction(1, 10) if luck_dramatic_failure else Fraction(0)
    return Fraction(6 ** pool - 5 ** pool, 10 ** pool)


def odds_of_test(pool: int, difficulty: int, options: dict = DEFAULT_OPTIONS) -> dict[str, Fraction]:
    """Odds of a test: success, exceptional (part of success), failure, dramatic_failure."""
    success = at_least(pool, difficulty, options["luck_ten_successes"])
    exceptional = at_least(pool, difficulty + options["exceptional_margin"], options["luck_ten_successes"])
    odds = {
        "success": success,
        "exceptional": exceptional,
        "failure": 1 - success,
        "dramatic_failure": dramatic_failure(pool, options["luck_dramatic_failure"]),
    }
    if options.get("consequences_band") and difficulty > 1:
        # Setting consequences_band (docs/rules.md MdT 26): one success already succeeds, at a cost
        # below the difficulty. "consequences" is part of "success", as "exceptional" is. Here, so the
        # test and ``manage.py odds`` read the band alike.
        at_least_one = at_least(pool, 1, options["luck_ten_successes"])
        odds = {**odds, "success": at_least_one, "failure": 1 - at_least_one,
                "consequences": at_least_one - success}
    return odds


def odds_of_opposed(pool: int, vs_pool: int, tie_goes_to: str = "none", options: dict = DEFAULT_OPTIONS) -> dict[str, Fraction]:
    """Odds of an opposed test: win, tie, loss (sum 1) and the character's dramatic_failure."""
    win, tie, loss = _opposed(pool, vs_pool, options["luck_ten_successes"])
    if tie_goes_to == "character":
        win, tie = win + tie, Fraction(0)
    elif tie_goes_to == "opponent":
        loss, tie = loss + tie, Fraction(0)
    return {"win": win, "tie": tie, "loss": loss,
            "dramatic_failure": dramatic_failure(pool, options["luck_dramatic_failure"])}


@lru_cache(maxsize=4096)
def _opposed(pool: int, vs_pool: int, luck_ten: int) -> tuple[Fraction, Fraction, Fraction]:
    mine, my_total = success_counts(pool, luck_ten)
    theirs, their_total = success_counts(vs_pool, luck_ten)
    win = tie = below = 0  # below: ways the opponent rolls fewer than a
    for a, count in enumerate(mine):
        if a < len(theirs):
            tie += count * theirs[a]
        win += count * below
        below += theirs[a] if a < len(theirs) else 0
    whole = my_total * their_total
    win, tie = Fraction(win, whole), Fraction(tie, whole)
    return win, tie, 1 - win - tie


def race_outcome(mine: int, theirs: int, target: int) -> str:
    """How a race stands after a round: ``win``, ``loss`` or ``continue``.

    Finished once either side has reached the target; if both reach it in the
    same round the higher total wins, and equal totals race on.
    """
    if max(mine, theirs) < target or mine == theirs:
        return "continue"
    return "win" if mine > theirs else "loss"


def odds_of_contest_round(pool: int, vs_pool: int, mine: int, theirs: int, target: int,
                          options: dict = DEFAULT_OPTIONS) -> dict[str, Fraction]:
    """Odds of one round of a race to ``target`` successes from the running totals."""
    win, loss, go_on = _race(pool, vs_pool, mine, theirs, target, options["luck_ten_successes"])
    return {"win": win, "loss": loss, "continue": go_on,
            "dramatic_failure": dramatic_failure(pool, options["luck_dramatic_failure"])}


@lru_cache(maxsize=4096)
def _race(pool: int, vs_pool: int, mine: int, theirs: int, target: int, luck_ten: int) -> tuple[Fraction, ...]:
    my_ways, my_total = success_counts(pool, luck_ten)
    their_ways, their_total = success_counts(vs_pool, luck_ten)
    below = [0]  # below[b]: ways the opponent gains fewer than b successes
    for count in their_ways:
        below.append(below[-1] + count)

    def fewer(b: int) -> int:
        return below[max(0, min(b, len(their_ways)))]

    win = loss = 0
    for a, count in enumerate(my_ways):
        m = mine + a
        # race_outcome, summed over the opponent's gains: I win past the target
        # ahead of them; they win by reaching the target ahead of me.
        if m >= target:
            win += count * fewer(m - theirs)
        loss += count * (their_total - fewer(max(m + 1, target) - theirs))
    whole = my_total * their_total
    win, loss = Fraction(win, whole), Fraction(loss, whole)
    return win, loss, 1 - win - loss


def odds_of_project_roll(pool: int, progress: int, target: int, options: dict = DEFAULT_OPTIONS) -> dict[str, Fraction]:
    """Odds of one project roll: complete (reaching the target now), continue, dramatic_failure."""
    complete = at_least(pool, target - progress, options["luck_ten_successes"])
    return {"complete": complete, "continue": 1 - complete,
            "dramatic_failure": dramatic_failure(pool, options["luck_dramatic_failure"])}


def raw_options(action: dict) -> dict:
    """Campaign options given inline in a raw odds action (defaults otherwise)."""
    options = dict(DEFAULT_OPTIONS)
    for key, (default, lo, hi) in OPTIONS.items():
        if key not in action:
            continue
        if lo is None:
            if not isinstance(action[key], bool):
                raise RuleError(f"'{key}' must be true or false.", "invalid")
            options[key] = action[key]
        else:
            options[key] = require_int(action, key, lo, hi)
    if "consequences_band" in action:
        if not isinstance(action["consequences_band"], bool):
            raise RuleError("'consequences_band' must be true or false.", "invalid")
        options["consequences_band"] = action["consequences_band"]
    return options


def odds(action: Any) -> dict[str, Fraction]:
    """Exact odds of a raw rolling action, as ``manage.py odds`` takes it.

    Forms (``dice`` is the pool size; 0 or fewer means a Luck Test):

    * ``{"type": "test", "dice": 5, "difficulty": 2}``
    * ``{"type": "opposed_test", "dice": 5, "vs_pool": 4, "tie_goes_to": "none"}``
    * ``{"type": "contest_round", "dice": 5, "vs_pool": 4, "target": 5, "mine": 0, "theirs": 0}``
    * ``{"type": "project_roll", "dice": 5, "target": 10, "progress": 0}``

    Any form may also carry the sheet options (e.g. ``"luck_ten_successes": 2``) and, for a test, the
    setting ``"consequences_band": true``.
    """
    if not isinstance(action, dict):
        raise RuleError("An action must be a JSON object.", "invalid")
    kind = action.get("type")
    if kind not in ("test", "opposed_test", "contest_round", "project_roll"):
        raise RuleError("Odds are available for 'test', 'opposed_test', 'contest_round' and 'project_roll'.",
                        "invalid")
    pool = require_int(action, "dice", -MAX_POOL, MAX_POOL)
    options = raw_options(action)
    if kind == "test":
        return odds_of_test(pool, require_difficulty(action), options)
    if kind == "opposed_test":
        vs_pool = require_int(action, "vs_pool", -MAX_POOL, MAX_POOL)
        return odds_of_opposed(pool, vs_pool, require_tie_rule(action), options)
    if kind == "contest_round":
        vs_pool = require_int(action, "vs_pool", -MAX_POOL, MAX_POOL)
        target = require_int(action, "target", 1, MAX_CONTEST_TARGET)
        mine = require_int(action, "mine", 0, MAX_RACE_TOTAL, default=0)
        theirs = require_int(action, "theirs", 0, MAX_RACE_TOTAL, default=0)
        if race_outcome(mine, theirs, target) != "continue":
            raise RuleError("That race is already over: one side has reached the target and leads.", "invalid")
        return odds_of_contest_round(pool, vs_pool, mine, theirs, target, options)
    target = require_int(action, "target", 1, MAX_PROJECT_TARGET)
    progress = require_int(action, "progress", 0, target - 1, default=0)
    return odds_of_project_roll(pool, progress, target, options)


DIFFICULTY_NAMES = {
    1: ("dramatic", "Dramático"),
    2: ("dangerous", "Perigoso"),
    3: ("desperate", "Desesperado"),
}
DIFFICULTY_WORDS = {
    "dramatic": 1, "dramatico": 1, "dramático": 1,
    "dangerous": 2, "perigoso": 2,
    "desperate": 3, "desesperado": 3,
}


def require_difficulty(action: dict) -> int:
    """The action's difficulty: 1..3 or its name in English or Portuguese; default 1."""
    value = action.get("difficulty", 1)
    if isinstance(value, str) and value.strip().casefold() in DIFFICULTY_WORDS:
        return DIFFICULTY_WORDS[value.strip().casefold()]
    if isinstance(value, str):
        raise RuleError("'difficulty' must be 1 (dramatic), 2 (dangerous) or 3 (desperate).", "invalid")
    return require_int(action, "difficulty", 1, MAX_DIFFICULTY, default=1)


def require_tie_rule(action: dict) -> str:
    """Who wins a tie in an opposed test: 'none' (default), 'character' or 'opponent'."""
    value = action.get("tie_goes_to", "none")
    if value not in TIE_RULES:
        raise RuleError("'tie_goes_to' must be 'none', 'character' or 'opponent'.", "invalid")
    return value
