"""Tale against other characters: a contest naming its opponent (rules/contests.py) and fights of
several sides (rules/fights.py), wired into ``SYSTEM`` as its ``contests`` and ``fights`` hooks.

Fights (the texts describe two sides only; where they are silent about more, the reading is the
campaign setting ``fights.defence`` and docs/rules.md, "Fights of several sides"):

* combat (tale-rpg.txt:61-65): each side portions its dice into one attack portion per side it
  attacks and a defence; "the attacks and defences all happen at the same time", so every exchange
  reads the dice as rolled. ``fights.defence``: ``each`` (one defence roll stands against every
  attack on that side) or ``split`` (the defence is portioned per attacker, each part rolled against
  that attacker alone). A hit eliminates like iterated resolution, rolling over onto the defender's
  other rolled dice, then onto its unrolled ones (0 each); eliminations from several exchanges add
  up, at most the defender's dice. Each missed attack is 1D of penalty next round.
* iterated resolution (tale-rpg.txt:8-10): every side rolls its pool once; each named pair compares
  sums and the loser's dice are walked against the winner's, as two sides do.
"""

from __future__ import annotations

from typing import Mapping

from ..base import Contests, DiceSource, Event, FightKind, Fights, RuleError, copy_json, odds_json
from ..conditions import effect, in_fight
from ..contests import given
from ..sides import Side, count, descending, exchanges_chosen, choose_against, read_exchanges
from .actions import _exchange, combat_pool, walk
from .odds import MAX_POOL, compare
from .settings import options
from .sheet import current, damage_room, skill_pool

# --- a contest naming its opponent -----------------------------------------------------------

OPPOSABLE = frozenset({"start_contest", "start_combat"})
# The running contest knows its opponent: these continue it on both sides.
CONTINUING = frozenset({"iterated_round", "combat_round", "end_contest", "impose_penalty"})


def fill(action: dict, opponent: Mapping) -> dict:
    """The opponent's pool: its combat pool for a combat, its skill's pool for a contest."""
    if opponent.get("contest") or opponent.get("fight"):
        raise RuleError("The opponent is already in a contest or a fight: it must end first.")
    if opponent.get("unassigned_damage"):
        raise RuleError("The opponent must spread its damage first (assign_damage).")
    if action["type"] == "start_combat":
        given(action, "their_pool")
        names = [opponent["sheet"]["primary"]] if opponent["sheet"]["primary"] == "skill" else \
            [opponent["sheet"]["primary"], "skill"]
        with_secondary = action.get("vs_with_secondary", options(opponent)["with_secondary"])
        if not isinstance(with_secondary, bool):
            raise RuleError("'vs_with_secondary' must be true or false.", "invalid")
        if with_secondary:
            names.append(opponent["sheet"]["secondary"])
        pool = sum(current(opponent, c) for c in names)
        if pool < 1:
            raise RuleError("The opponent has no dice left to fight with.")
        return {"their_pool": pool}
    given(action, "vs_pool")
    wanted = {"skill": action["vs_skill"]} if action.get("vs_skill") is not None else \
        {"skill": action.get("skill"), "characteristics": action.get("characteristics")}
    pool = skill_pool(opponent, wanted)["pool"]
    if pool < 1:
        raise RuleError("The opponent has no dice to roll.")
    return {"vs_pool": pool}


_SWAP = {"mine": "theirs", "mine_before": "theirs_before", "mine_after": "theirs_after", "mine_sum": "theirs_sum",
         "start_mine": "start_theirs", "my_attack": "their_attack", "my_defence": "their_defence",
         "to_me": "to_them", "damage_taken": "damage_dealt", "my_hit": "their_hit", "my_even": "their_even",
         "my_miss": "their_miss"}
_SWAP.update({v: k for k, v in list(_SWAP.items())})
_SIDE_VALUES = {"mine": "theirs", "theirs": "mine"}
_OUTCOMES = {"win": "lose", "lose": "win"}


def _mirror(value, key: str | None = None):
    if isinstance(value, dict):
        return {_SWAP.get(k, k): _mirror(v, k) for k, v in value.items()}
    if isinstance(value, list):
        return [_mirror(v, key) for v in value]
    if key in ("winner", "side", "at_time_out") and value in _SIDE_VALUES:
        return _SIDE_VALUES[value]
    return value


def side_view(event: Event, opponent: dict | None, actor_id: int, actor_name: str = "") -> dict | None:
    """A contest's event as the opponent reads it: the same contest, every "mine" its "theirs"."""
    p = event.payload
    if event.type == "contest_started":
        contest = _mirror(copy_json(p["contest"]))
        contest.update(pool={"pool": contest["mine"]}, opponent=actor_id)
        return {"contest": contest}
    view = _mirror(copy_json(dict(p)))
    if event.type == "round_rolled":
        view["outcome"] = _OUTCOMES.get(p["outcome"], p["outcome"])
        view["success"] = view["outcome"] == "win"
    elif event.type == "combat_round_rolled":
        mine, theirs = p["outcome"].split("/")
        view["outcome"] = f"{theirs}/{mine}"
    elif event.type == "contest_ended":
        view["damage_to_assign"] = min(view["damage_taken"], damage_room(opponent))
        if "result" in p:
            view.pop("result")  # hiding is a hider's contest: the seeker's side has no "hidden" result
    elif event.type != "penalty_imposed":
        return None
    for key in ("odds", "dice_log", "command_id", "action", "nonce", "answers"):
        view.pop(key, None)  # the record of the acting side's command, not the opponent's
    return view


def fill_round(action: dict, opponent: Mapping) -> dict:
    """A round against a character reads its conditions' penalty dice now (docs/rules.md, Conditions
    6 and 7): ``their_conditions``, only when it has some."""
    if action.get("their_conditions") is not None:
        raise RuleError("'their_conditions' is read from the opponent's sheet: leave it out.", "invalid")
    off = max(0, effect(opponent)[0])
    return {"their_conditions": off} if off else {}


CONTESTS = Contests(
    opposable=OPPOSABLE, fill=fill, continuing=CONTINUING, sided=CONTINUING | OPPOSABLE, side_view=side_view,
    # None decided from the acting side alone (``own_side_only``): a contest's end says how much damage
    # the opponent has room for (``damage_room``), and a round may end it.
    # A combat round sets both sides' portions, and an end ends it for both.
    both_sides=frozenset({"combat_round", "end_contest"}),
    fill_round=fill_round,
)


# --- fights of several sides -------------------------------------------------------------------

TALE_DEFENCE = ("each", "split")


def read_tale_portions(choices: Mapping, sides: Mapping[Side, Mapping], defence_rule: str,
                       names: Mapping[Side, str] | None = None) -> dict[Side, dict]:
    """Each side's portions: ``{"attack": {target: n}, "defence": n}`` (``split``: ``{attacker: n}``),
    within the dice it may portion out this round (``sides[s]["available"]``)."""
    if defence_rule not in TALE_DEFENCE:
        raise RuleError(f"'defence' must be one of {', '.join(TALE_DEFENCE)}.", "invalid")
    out = {}
    for side, info in sides.items():
        chosen = choices.get(side, {}) if isinstance(choices, Mapping) else None
        if not isinstance(chosen, Mapping):
            raise RuleError("Each side's portions are an object.", "invalid")
        attack = chosen.get("attack") or {}
        defence = chosen.get("defence") or ({} if defence_rule == "split" else 0)
        if not isinstance(attack, Mapping) or any(str(t) not in sides or str(t) == side for t in attack):
            raise RuleError("A side attacks only other sides of the fight.", "invalid")
        attack = {str(t): count(n, "An attack portion", MAX_POOL) for t, n in attack.items()}
        if defence_rule == "split":
            if not isinstance(defence, Mapping) or any(str(t) not in sides or str(t) == side for t in defence):
                raise RuleError("A split defence names the sides it defends against.", "invalid")
            defence = {str(t): count(n, "A defence portion", MAX_POOL) for t, n in defence.items()}
            spent = sum(attack.values()) + sum(defence.values())
        else:
            defence = count(defence, "The defence portion", MAX_POOL)
            spent = sum(attack.values()) + defence
        if spent > info["available"]:
            raise RuleError(f"{(names or {}).get(side, side)} has only {info['available']}D to portion out this round, not {spent}D.",
                            "invalid")
        out[side] = {"attack": attack, "defence": defence}
    return out


def tale_combat_odds(portions: Mapping[Side, dict], defence_rule: str) -> list[dict]:
    """Exact hit / even / miss of every attack this round, in the order :func:`tale_combat_round`
    rolls them."""
    result = []
    for by, chosen in portions.items():
        for against, n in chosen["attack"].items():
            if not n:
                continue
            hit, even, miss = compare(n, _defence_dice(portions, by, against, defence_rule))
            result.append({"by": by, "against": against, "odds": {"hit": hit, "even": even, "miss": miss}})
    return result


def _defence_dice(portions: Mapping[Side, dict], by: Side, against: Side, defence_rule: str) -> int:
    defence = portions[against]["defence"]
    return defence.get(by, 0) if defence_rule == "split" else defence


def tale_combat_round(sides: Mapping[Side, Mapping], choices: Mapping, dice: DiceSource, ties: str = "stop",
                      defence_rule: str = "each") -> dict:
    """One combat round of several sides, all at once (tale-rpg.txt:61-65).

    ``sides``: ``{side: {"dice": its pool, "available": what it may portion out}}`` in acting order;
    ``choices``: each side's portions (:func:`read_tale_portions`).

    Dice, in order: each side's attack portions (sides in order, its targets in the order it names
    them); then each side's defence (``each``: once, if anything attacks it with dice; ``split``: the
    part against each attacker in side order, if that attacker attacks it with dice).
    """
    portions = read_tale_portions(choices, sides, defence_rule)
    chances = tale_combat_odds(portions, defence_rule)
    attacks = {s: {t: [dice.roll(6) for _ in range(n)] for t, n in p["attack"].items()} for s, p in portions.items()}
    attackers = {s: [b for b in sides if portions[b]["attack"].get(s)] for s in sides}
    defences: dict[Side, dict] = {}
    for s in sides:
        d = portions[s]["defence"]
        if defence_rule == "split":
            defences[s] = {b: [dice.roll(6) for _ in range(d.get(b, 0))] for b in attackers[s]}
        else:
            defences[s] = {"all": [dice.roll(6) for _ in range(d)] if attackers[s] else []}
    exchanges, damage, penalties = [], {s: 0 for s in sides}, {s: 0 for s in sides}
    for x in chances:
        by, against = x["by"], x["against"]
        own = defences[against]["all" if defence_rule == "each" else by]
        # Past this exchange's defence, the defender's other rolled dice, then its unrolled ones.
        others = [f for key, faces in defences[against].items() if faces is not own for f in faces]
        others += [f for faces in attacks[against].values() for f in faces]
        rolled = sum(len(f) for f in defences[against].values()) + sum(len(f) for f in attacks[against].values())
        idle = max(0, sides[against]["dice"] - rolled)
        result = _exchange(attacks[by][against], own, others, idle, ties)
        damage[against] += result["damage"]
        penalties[by] += result["penalty"]
        exchanges.append({"by": by, "against": against, "attack": attacks[by][against], "defence": own,
                          **{k: result[k] for k in ("outcome", "attack_sum", "defence_sum", "columns", "eliminated",
                                                    "damage")},
                          "odds": odds_json(x["odds"])})
    damage = {s: min(n, sides[s]["dice"]) for s, n in damage.items()}
    return {"kind": "combat", "ties": ties, "defence": defence_rule, "portions": portions, "exchanges": exchanges,
            "damage": damage, "after": {s: sides[s]["dice"] - damage[s] for s in sides}, "penalties": penalties}


def tale_iterated_round(sides: Mapping[Side, int], exchanges, dice: DiceSource, ties: str = "stop",
                        sitting_out: Mapping[Side, int] | None = None) -> dict:
    """One iterated round of several sides (tale-rpg.txt:8-10): ``sides`` maps each to its dice;
    ``sitting_out``, the dice a side's conditions keep out of this round (rules/tale/odds.py
    ``sitting_out``): it rolls the rest, and only those can be eliminated.

    Dice, in order: each side's pool, sides in order (a side in no exchange rolls nothing). Each
    named pair compares sums; the loser's dice, sorted high to low, are walked against the winner's;
    equal sums: nothing. Eliminations from several pairs add up, at most the side's dice."""
    pairs = read_exchanges(exchanges, sides)
    taking_part = {s for pair in pairs for s in pair}
    out_of_round = {s: min(max(0, (sitting_out or {}).get(s, 0)), n) for s, n in sides.items()}
    rolled = {s: n - out_of_round[s] for s, n in sides.items()}
    rolls = {s: descending([dice.roll(6) for _ in range(n)]) if s in taking_part else [] for s, n in rolled.items()}
    lost = {s: 0 for s in sides}
    out = []
    for by, against in pairs:
        win, tie, lose = compare(rolled[by], rolled[against])
        a, b = sum(rolls[by]), sum(rolls[against])
        outcome = "win" if a > b else "lose" if a < b else "tie"
        verdicts = []
        if outcome != "tie":
            winner, loser = (by, against) if outcome == "win" else (against, by)
            verdicts = walk(rolls[winner], rolls[loser], ties)
            lost[loser] += verdicts.count("eliminated")
        out.append({"by": by, "against": against, "sums": [a, b], "outcome": outcome, "verdicts": verdicts,
                    "odds": odds_json({"win": win, "tie": tie, "lose": lose})})
    lost = {s: min(n, sides[s]) for s, n in lost.items()}
    return {"kind": "iterated", "ties": ties, "dice": rolls, "exchanges": out, "eliminated": lost,
            "after": {s: sides[s] - lost[s] for s in sides},
            **({"sitting_out": {s: n for s, n in out_of_round.items() if n}} if any(out_of_round.values()) else {})}


def _ready(state: Mapping) -> None:
    if state["unassigned_damage"]:
        raise RuleError("must spread its damage first.")


def _entry(dice: int) -> dict:
    if dice < 1:
        raise RuleError("has no dice to fight with.")
    return {"dice": dice, "start": dice, "penalty": 0, "damage_taken": 0}


def _combat_entry(state: Mapping, spec: Mapping) -> dict:
    """A side of a combat: its combat pool (``with_secondary``: the secondary characteristic too)."""
    _ready(state)
    with_secondary = spec.get("with_secondary", False)
    if not isinstance(with_secondary, bool):
        raise RuleError("'with_secondary' must be true or false.", "invalid")
    return _entry(sum(current(state, c) for c in combat_pool(state, with_secondary)))


def _iterated_entry(state: Mapping, spec: Mapping) -> dict:
    """A side of an iterated contest: the pool of the ``skill`` (or ``characteristics``) the GM names."""
    _ready(state)
    return _entry(skill_pool(state, {"skill": spec.get("skill"), "characteristics": spec.get("characteristics")})["pool"])


def _available(fight: Mapping, side: Side) -> int:
    """What a side may portion out this round: its dice, less last round's misses and its conditions'
    penalty dice (tale-rpg.txt:64-66, rules/conditions.py)."""
    entry = fight["entries"][side]
    return max(0, entry["dice"] - entry["penalty"] - in_fight(fight, side))


def _combat_choice(fight: Mapping, standing: list[Side], side: Side, choice: Mapping) -> dict:
    """A side's portions this round: ``attack`` (``{side: dice}``) and ``defence``."""
    sides = {s: {"dice": fight["entries"][s]["dice"], "available": _available(fight, s)} for s in standing}
    return read_tale_portions({side: {"attack": choice.get("attack"), "defence": choice.get("defence")}},
                              sides, fight["settings"]["defence"], fight["names"])[side]


def _last_team(fight: Mapping, standing: list[Side], after: Mapping) -> dict | None:
    """The fight's end once at most one team has dice left."""
    teams = {fight["teams"][s] for s in standing if after[s]["dice"] > 0}
    if len(teams) > 1:
        return None
    return {"winner": next(iter(teams)) if teams else None, "reason": "pool_exhausted" if teams else "both_exhausted"}


def _combat_round(fight: Mapping, standing: list[Side], choices: Mapping, dice: DiceSource, after: dict):
    entries, settings = fight["entries"], fight["settings"]
    sides = {s: {"dice": entries[s]["dice"], "available": _available(fight, s)} for s in standing}
    result = tale_combat_round(sides, {s: choices.get(s, {}) for s in standing}, dice, settings["ties"],
                               settings["defence"])
    for s in standing:
        after[s].update(dice=result["after"][s], penalty=result["penalties"][s],
                        damage_taken=entries[s]["damage_taken"] + result["damage"][s])
    return result, _last_team(fight, standing, after)


def _iterated_round(fight: Mapping, standing: list[Side], choices: Mapping, dice: DiceSource, after: dict):
    entries = fight["entries"]
    exchanges = exchanges_chosen(standing, choices)
    # A side's conditions' penalty dice sit this round out (rules/tale/odds.py ``sitting_out``).
    result = tale_iterated_round({s: entries[s]["dice"] for s in standing}, exchanges, dice, fight["settings"]["ties"],
                                 {s: in_fight(fight, s) for s in standing})
    for s in standing:
        after[s].update(dice=result["after"][s], damage_taken=entries[s]["damage_taken"] + result["eliminated"][s])
    return result, _last_team(fight, standing, after)


def _settings(state: Mapping) -> dict:
    chosen = options(state)
    return {"ties": chosen["ties"], "defence": chosen["fights"]["defence"]}


def _standing(fight: Mapping) -> list[Side]:
    """A side with no dice left is out."""
    return [s for s in fight["order"] if fight["entries"][s]["dice"] > 0]


FIGHTS = Fights(
    kinds=(FightKind("combat", "a combat", _combat_entry, _combat_choice, _combat_round, damage=True),
           FightKind("iterated", "an iterated contest", _iterated_entry, choose_against, _iterated_round)),
    settings=_settings, standing=_standing,
)
