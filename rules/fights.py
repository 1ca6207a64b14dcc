"""Fights of several sides: any number of characters in one round of a Tale combat or iterated
contest, an MdT race or opposed test, a WYRM opposed check. Pure.

A round names its exchanges, who acts against whom (``{"by": side, "against": side}``); sides are
named by strings (a character's id as the log's JSON keys it). Every function rolls each die the
round needs exactly once, in the order its docstring gives, and returns the round as one JSON
object: the dice, each exchange with its exact odds (Fractions, as the systems' odds code computes
them, turned into JSON by :func:`rules.base.odds_json`), and what the round leaves each side.

The texts describe two sides only; where they are silent about more, the reading is a campaign
setting (``fights.*`` in each system's settings.py) and an entry of docs/rules.md
("Fights of several sides"):

* Tale combat (tale-rpg.txt:61-65): each side portions its dice into one attack portion per side it
  attacks and a defence; "the attacks and defences all happen at the same time", so every exchange
  reads the dice as rolled. Setting ``fights.defence``: ``each`` (one defence roll stands against
  every attack on that side) or ``split`` (the defence is portioned per attacker, each part rolled
  against that attacker alone). A hit eliminates like iterated resolution, rolling over onto the
  defender's other rolled dice, then onto its unrolled ones (0 each); eliminations from several
  exchanges add up, at most the defender's dice. Each missed attack is 1D of penalty next round.
* Tale iterated resolution (tale-rpg.txt:8-10): every side rolls its pool once; each named pair
  compares sums and the loser's dice are walked against the winner's, as two sides do.
* MdT (mundo-das-trevas-lite-testes.pt.txt:24): "quem obter mais sucessos, ou um certo número de
  sucessos primeiro ... vence": every side rolls the same attribute; the most successes wins alone (a
  tie at the top: nobody), and a race is won by the one side ahead once anyone reaches the target
  (equal leaders race on, as two sides do: docs/rules.md MdT 16).
* WYRM opposed checks (wyrm-srd-rules-mechanics.txt:21-25): "the DL of the active character is
  determined by a roll made by the passive character". Setting ``fights.passive_rolls``: ``each``
  (a passive side rolls once per exchange against it) or ``once`` (one roll sets its DL for every
  exchange against it this round).
"""

from __future__ import annotations

import copy
from fractions import Fraction
from typing import Iterable, Mapping

from .base import DiceSource, Event, RuleError, odds_json

MAX_SIDES = 12
MAX_EXCHANGES = 66  # every pair of twelve sides

Side = str


# --- reading a round -------------------------------------------------------------------------------


def read_sides(sides, minimum: int = 2) -> list[Side]:
    """The round's sides, in the order they act (and roll)."""
    if not isinstance(sides, list) or not minimum <= len(sides) <= MAX_SIDES:
        raise RuleError(f"A fight has {minimum} to {MAX_SIDES} sides.", "invalid")
    named = [str(s) for s in sides]
    if len(set(named)) != len(named) or any(not s or len(s) > 40 for s in named):
        raise RuleError("Each side of a fight is named once.", "invalid")
    return named


def read_exchanges(exchanges, sides: Iterable[Side]) -> list[tuple[Side, Side]]:
    """``[(by, against), ...]``: who acts against whom, each pair of distinct sides at most once."""
    known = set(sides)
    if not isinstance(exchanges, list) or not 1 <= len(exchanges) <= MAX_EXCHANGES:
        raise RuleError(f"A round names 1 to {MAX_EXCHANGES} exchanges (who acts against whom).", "invalid")
    pairs = []
    for x in exchanges:
        if not isinstance(x, Mapping) or str(x.get("by")) not in known or str(x.get("against")) not in known:
            raise RuleError("Each exchange names two sides of the fight: 'by' and 'against'.", "invalid")
        pair = (str(x["by"]), str(x["against"]))
        if pair[0] == pair[1]:
            raise RuleError("A side can't act against itself.", "invalid")
        if pair in pairs:
            raise RuleError("Each exchange is named once a round.", "invalid")
        pairs.append(pair)
    return pairs


def _count(value, what: str, hi: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= hi:
        raise RuleError(f"{what} must be a whole number of dice from 0 to {hi}.", "invalid")
    return value


def _desc(faces: list[int]) -> list[int]:
    return sorted(faces, reverse=True)


# --- Tale ----------------------------------------------------------------------------------------

TALE_DEFENCE = ("each", "split")


def read_tale_portions(choices: Mapping, sides: Mapping[Side, Mapping], defence_rule: str,
                       names: Mapping[Side, str] | None = None) -> dict[Side, dict]:
    """Each side's portions: ``{"attack": {target: n}, "defence": n}`` (``split``: ``{attacker: n}``),
    within the dice it may portion out this round (``sides[s]["available"]``)."""
    from .tale.odds import MAX_POOL

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
        attack = {str(t): _count(n, "An attack portion", MAX_POOL) for t, n in attack.items()}
        if defence_rule == "split":
            if not isinstance(defence, Mapping) or any(str(t) not in sides or str(t) == side for t in defence):
                raise RuleError("A split defence names the sides it defends against.", "invalid")
            defence = {str(t): _count(n, "A defence portion", MAX_POOL) for t, n in defence.items()}
            spent = sum(attack.values()) + sum(defence.values())
        else:
            defence = _count(defence, "The defence portion", MAX_POOL)
            spent = sum(attack.values()) + defence
        if spent > info["available"]:
            raise RuleError(f"{(names or {}).get(side, side)} has only {info['available']}D to portion out this round, not {spent}D.",
                            "invalid")
        out[side] = {"attack": attack, "defence": defence}
    return out


def tale_combat_odds(portions: Mapping[Side, dict], defence_rule: str) -> list[dict]:
    """Exact hit / even / miss of every attack this round, in the order :func:`tale_combat_round`
    rolls them."""
    from .tale.odds import compare

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
    from .tale.actions import _exchange

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


def tale_iterated_round(sides: Mapping[Side, int], exchanges, dice: DiceSource, ties: str = "stop") -> dict:
    """One iterated round of several sides (tale-rpg.txt:8-10): ``sides`` maps each to its dice.

    Dice, in order: each side's pool, sides in order (a side in no exchange rolls nothing). Each
    named pair compares sums; the loser's dice, sorted high to low, are walked against the winner's;
    equal sums: nothing. Eliminations from several pairs add up, at most the side's dice."""
    from .tale.actions import walk
    from .tale.odds import compare

    pairs = read_exchanges(exchanges, sides)
    taking_part = {s for pair in pairs for s in pair}
    rolls = {s: _desc([dice.roll(6) for _ in range(n)]) if s in taking_part else [] for s, n in sides.items()}
    lost = {s: 0 for s in sides}
    out = []
    for by, against in pairs:
        win, tie, lose = compare(sides[by], sides[against])
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
            "after": {s: sides[s] - lost[s] for s in sides}}


# --- MdT -----------------------------------------------------------------------------------------


def _distribution(pool: int, luck_ten: int) -> list[Fraction]:
    from .mdt.odds import successes

    return list(successes(pool, luck_ten))


def _best_alone(totals: Mapping[Side, list[Fraction]], me: Side, finished) -> Fraction:
    """P(``me`` ends the round alone ahead of every other side), ``finished(total)`` saying which
    totals count at all (a race: only those at the target)."""
    def below(side: Side, t: int) -> Fraction:  # P(side's total < t, or it does not count)
        return sum((p for k, p in enumerate(totals[side]) if k < t or not finished(k)), Fraction(0))

    return sum((p * _product(below(o, k) for o in totals if o != me)
                for k, p in enumerate(totals[me]) if p and finished(k)), Fraction(0))


def _product(values: Iterable[Fraction]) -> Fraction:
    out = Fraction(1)
    for v in values:
        out *= v
    return out


def mdt_opposed_odds(pools: Mapping[Side, int], luck_ten: int = 1) -> dict[str, Fraction]:
    """P(each side has the most successes alone), and ``none`` (a tie at the top)."""
    dists = {s: _distribution(n, luck_ten) for s, n in pools.items()}
    chances = {s: _best_alone(dists, s, lambda k: True) for s in pools}
    return {**chances, "none": 1 - sum(chances.values())}


def mdt_opposed(pools: Mapping[Side, int], dice: DiceSource, options: Mapping) -> dict:
    """An opposed test of several sides (mundo-das-trevas-lite-testes.pt.txt:24): all roll the same
    attribute; the most successes wins, alone. Dice, in order: each side's pool, sides in order."""
    from .mdt.actions import roll_pool

    chances = mdt_opposed_odds(pools, options["luck_ten_successes"])
    rolls = {s: roll_pool(dice, n, options) for s, n in pools.items()}
    best = max(r["successes"] for r in rolls.values())
    top = [s for s, r in rolls.items() if r["successes"] == best]
    return {"kind": "opposed", "rolls": rolls, "winner": top[0] if len(top) == 1 else None,
            "odds": odds_json(chances)}


def mdt_race_odds(sides: Mapping[Side, Mapping], target: int, luck_ten: int = 1) -> dict[str, Fraction]:
    """P(each side wins the race this round), and ``continue``: ``sides[s]`` is ``{"pool", "mine"}``."""
    dists = {}
    for s, info in sides.items():
        shifted = [Fraction(0)] * info["mine"] + _distribution(info["pool"], luck_ten)
        dists[s] = shifted
    chances = {s: _best_alone(dists, s, lambda k: k >= target) for s in sides}
    return {**chances, "continue": 1 - sum(chances.values())}


def mdt_race_round(sides: Mapping[Side, Mapping], target: int, dice: DiceSource, options: Mapping) -> dict:
    """One round of a race of several sides to ``target`` successes. ``sides[s]``: ``{"pool", "mine"}``
    (successes so far). Dice, in order: each side's pool, sides in order. Once any side reaches the
    target, the side ahead of every other wins; equal leaders race on (docs/rules.md MdT 16)."""
    from .mdt.actions import roll_pool

    chances = mdt_race_odds(sides, target, options["luck_ten_successes"])
    rolls = {s: roll_pool(dice, info["pool"], options) for s, info in sides.items()}
    totals = {s: sides[s]["mine"] + rolls[s]["successes"] for s in sides}
    best = max(totals.values())
    top = [s for s, t in totals.items() if t == best]
    winner = top[0] if best >= target and len(top) == 1 else None
    return {"kind": "race", "target": target, "rolls": rolls, "totals": totals, "winner": winner,
            "finished": winner is not None, "odds": odds_json(chances)}


# --- WYRM ----------------------------------------------------------------------------------------

WYRM_PASSIVE_ROLLS = ("each", "once")


def wyrm_opposed_round(sides: Mapping[Side, Mapping], exchanges, dice: DiceSource, ties_succeed: bool = True,
                       passive_rolls: str = "each") -> dict:
    """Opposed checks of several sides (wyrm-srd-rules-mechanics.txt:21-25): in each exchange ``by``
    is active and ``against`` passive. ``sides[s]``: ``{"bonus": attribute + skill bonuses,
    "explodes": a skill applies}`` (a side's numbers as active and passive are the same here).

    Dice, in order, exchange by exchange: the passive side's die and its explosions (``once``: only
    at its first exchange; its later ones read the same DL), then the active side's."""
    from .wyrm.actions import chain_total, roll_die
    from .wyrm.odds import opposed_odds

    if passive_rolls not in WYRM_PASSIVE_ROLLS:
        raise RuleError(f"'passive_rolls' must be one of {', '.join(WYRM_PASSIVE_ROLLS)}.", "invalid")
    pairs = read_exchanges(exchanges, sides)
    set_dl: dict[Side, dict] = {}
    out = []
    for by, against in pairs:
        a, p = sides[by], sides[against]
        chances = opposed_odds(a["bonus"], a["explodes"], p["bonus"], p["explodes"], 0, ties_succeed)
        if passive_rolls == "once" and against in set_dl:
            passive = set_dl[against]
        else:
            chain = roll_die(dice, p["explodes"])
            passive = {"dice": chain, "dl": chain_total(chain) + p["bonus"]}
            set_dl[against] = passive
        chain = roll_die(dice, a["explodes"])
        total = chain_total(chain) + a["bonus"]
        success = total >= passive["dl"] if ties_succeed else total > passive["dl"]
        out.append({"by": by, "against": against, "passive": passive, "dice": chain, "total": total,
                    "outcome": "success" if success else "failure", "odds": odds_json(chances)})
    return {"kind": "opposed", "passive_rolls": passive_rolls, "exchanges": out}


# --- a fight's life: started, each side's choice, rounds, ended ----------------------------------
#
# Campaign-level events (campaign/actions/fights.py stores them); each side's character state folds
# its own part of them through ``sides`` (rules/common.py ``fight``: its numbers in the fight).

STARTED, CHOSEN, ROUND, ENDED = "fight_started", "fight_choice_made", "fight_round_rolled", "fight_ended"
EVENTS = frozenset({STARTED, CHOSEN, ROUND, ENDED})
KINDS = {"tale": ("combat", "iterated"), "mdt": ("race", "opposed"), "wyrm": ("opposed",)}
KIND_WORDS = {"combat": "a combat", "iterated": "an iterated contest", "race": "a race", "opposed": "an opposed test"}
MAX_TEAM = 40


def read_kind(system: str, kind) -> str:
    kinds = KINDS.get(system, ())
    if not kinds:
        raise RuleError("This system's text has no opposed test: there is nothing to fight with several sides.")
    if kind is None:
        return kinds[0]
    if kind not in kinds:
        raise RuleError(f"A fight here is one of: {', '.join(kinds)}.", "invalid")
    return kind


def side_entry(system: str, kind: str, state: Mapping, spec: Mapping) -> dict:
    """A side's numbers in a new fight, read from its character's state and what the GM named for it
    (``spec``: Tale ``with_secondary`` for a combat, ``skill``/``characteristics`` for an iterated
    contest; MdT ``attribute``, ``specialization``; WYRM ``attribute``, ``skills``)."""
    spec = spec if isinstance(spec, Mapping) else {}
    if state.get("fight"):
        raise RuleError("is already in a fight: it must end first.")
    if state.get("contest"):
        raise RuleError("is in a contest: it must end first.")
    if system == "tale":
        from .tale.actions import combat_pool
        from .tale.sheet import current, skill_pool

        if state["unassigned_damage"]:
            raise RuleError("must spread its damage first.")
        if kind == "combat":
            with_secondary = spec.get("with_secondary", False)
            if not isinstance(with_secondary, bool):
                raise RuleError("'with_secondary' must be true or false.", "invalid")
            dice = sum(current(state, c) for c in combat_pool(state, with_secondary))
        else:
            dice = skill_pool(state, {"skill": spec.get("skill"), "characteristics": spec.get("characteristics")})["pool"]
        if dice < 1:
            raise RuleError("has no dice to fight with.")
        return {"dice": dice, "start": dice, "penalty": 0, "damage_taken": 0}
    if system == "mdt":
        filled = contests_fill("mdt", spec, state)
        return {"pool": filled["vs_pool"], "mine": 0}
    filled = contests_fill("wyrm", spec, state)["vs"]
    return {"bonus": filled["attribute"] + 2 * filled["skills"], "explodes": filled["skills"] > 0}


def contests_fill(system: str, spec: Mapping, state: Mapping) -> dict:
    """A side's numbers as an opposed test reads an opponent's (rules/contests.py), from its spec."""
    from .contests import _fill_mdt, _fill_wyrm

    if system == "mdt":
        return _fill_mdt({"type": "opposed_test", "vs_attribute": spec.get("attribute"),
                          "vs_specialization": spec.get("specialization")}, state)
    return _fill_wyrm({"type": "check", "vs_attribute": spec.get("attribute"), "vs_skills": spec.get("skills") or []},
                      state)


def settings_of(system: str, state: Mapping) -> dict:
    """The campaign settings a fight plays under, fixed when it starts (the first side's options)."""
    if system == "tale":
        from .tale.settings import options

        chosen = options(state)
        return {"ties": chosen["ties"], "defence": chosen["fights"]["defence"]}
    from .options import complete

    if system == "mdt":
        from .mdt.settings import OPTIONS as MDT

        chosen = complete(MDT, state["sheet"].get("options"))
        return {k: chosen[k] for k in ("luck_ten_successes", "luck_dramatic_failure")}
    from .wyrm.settings import OPTIONS as WYRM

    chosen = complete(WYRM, state["sheet"].get("options"))
    return {"ties_succeed": chosen["ties_succeed"], "passive_rolls": chosen["fights"]["passive_rolls"]}


def standing(system: str, fight: Mapping) -> list[Side]:
    """The sides still in the fight, in order: a Tale side with no dice left is out."""
    if system != "tale":
        return list(fight["order"])
    return [s for s in fight["order"] if fight["entries"][s]["dice"] > 0]


def read_choice(system: str, fight: Mapping, side: Side, choice: Mapping) -> dict:
    """What ``side`` does this round, checked: Tale combat ``attack``/``defence``; Tale iterated and
    WYRM ``against`` (the sides it acts against); MdT nothing (every side rolls)."""
    up = standing(system, fight)
    if side not in up:
        raise RuleError("That side is out of the fight.")
    if fight["kind"] == "combat":
        sides = {s: {"dice": fight["entries"][s]["dice"],
                     "available": max(0, fight["entries"][s]["dice"] - fight["entries"][s]["penalty"])} for s in up}
        return read_tale_portions({side: {"attack": choice.get("attack"), "defence": choice.get("defence")}},
                                  sides, fight["settings"]["defence"], fight["names"])[side]
    if system == "mdt":
        return {}
    against = choice.get("against") or []
    if not isinstance(against, list) or any(str(a) not in up or str(a) == side for a in against) \
            or len(set(map(str, against))) != len(against):
        raise RuleError("'against' lists other sides still in the fight, each once.", "invalid")
    return {"against": [str(a) for a in against]}


def _teams_up(fight: Mapping, up: list[Side]) -> set[str]:
    return {fight["teams"][s] for s in up}


def resolve(system: str, fight: Mapping, choices: Mapping[Side, dict], dice: DiceSource) -> dict:
    """The round every standing side has chosen for: ``{"round", "result", "entries", "ended"}``;
    ``ended`` (``None`` while it goes on) is ``{"winner": team or None, "reason"}``."""
    kind, settings, entries = fight["kind"], fight["settings"], fight["entries"]
    up = standing(system, fight)
    after = {s: dict(e) for s, e in entries.items()}
    ended = None
    if kind == "combat":
        sides = {s: {"dice": entries[s]["dice"], "available": max(0, entries[s]["dice"] - entries[s]["penalty"])}
                 for s in up}
        result = tale_combat_round(sides, {s: choices.get(s, {}) for s in up}, dice, settings["ties"],
                                   settings["defence"])
        for s in up:
            after[s].update(dice=result["after"][s], penalty=result["penalties"][s],
                            damage_taken=entries[s]["damage_taken"] + result["damage"][s])
    elif kind == "iterated":
        exchanges = [{"by": s, "against": a} for s in up for a in choices.get(s, {}).get("against", [])]
        if not exchanges:
            raise RuleError("Nobody acts against anybody this round: name whom each side acts against.")
        result = tale_iterated_round({s: entries[s]["dice"] for s in up}, exchanges, dice, settings["ties"])
        for s in up:
            after[s].update(dice=result["after"][s],
                            damage_taken=entries[s]["damage_taken"] + result["eliminated"][s])
    elif kind == "race":
        result = mdt_race_round({s: entries[s] for s in up}, fight["target"], dice, settings)
        for s in up:
            after[s]["mine"] = result["totals"][s]
        if result["winner"] is not None:
            ended = {"winner": fight["teams"][result["winner"]], "reason": "target_reached"}
    elif system == "mdt":
        result = mdt_opposed({s: entries[s]["pool"] for s in up}, dice, settings)
        ended = {"winner": None if result["winner"] is None else fight["teams"][result["winner"]],
                 "reason": "most_successes" if result["winner"] is not None else "tie"}
    else:
        exchanges = [{"by": s, "against": a} for s in up for a in choices.get(s, {}).get("against", [])]
        if not exchanges:
            raise RuleError("Nobody acts against anybody this round: name whom each side acts against.")
        result = wyrm_opposed_round({s: entries[s] for s in up}, exchanges, dice, settings["ties_succeed"],
                                    settings["passive_rolls"])
    if kind in ("combat", "iterated"):
        left = [s for s in up if after[s]["dice"] > 0]
        teams = _teams_up(fight, left)
        if len(teams) <= 1:
            ended = {"winner": next(iter(teams)) if teams else None,
                     "reason": "pool_exhausted" if teams else "both_exhausted"}
    return {"round": fight["round"] + 1, "result": result, "entries": after, "ended": ended}


def ending(fight: Mapping) -> dict[Side, dict]:
    """Each side's part of a fight's end: ``{"fight": None}``, and for a Tale combat the damage it
    took, to spread (the character's state caps it at what its primary characteristic and Skill have
    room for, rules/tale/evolve.py, so the end reads no side's sheet)."""
    out = {}
    for s in fight["order"]:
        view: dict = {"fight": None}
        if fight["kind"] == "combat":
            view["damage_taken"] = fight["entries"][s]["damage_taken"]
        out[s] = view
    return out


def round_events(system: str, filled: Mapping, action: Mapping, dice: DiceSource) -> list[Event]:
    """The round the acting side's choice completes, from what the server read (``filled``: the
    running ``fight``, the seq of its start, the other sides' ``choices``) and the action: the
    ``fight_round_rolled`` event, and ``fight_ended`` when the round decided the fight. What a replay
    of the command decides again (campaign/fairdice.py)."""
    fight = filled["fight"]
    side = str(action.get("character"))
    choices = {**filled["choices"], side: read_choice(system, fight, side, action)}
    decided = resolve(system, fight, choices, dice)
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
