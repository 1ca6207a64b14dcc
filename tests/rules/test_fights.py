"""Fights of several sides (rules/fights.py), each test citing the text's line it reads."""

from fractions import Fraction

import pytest

from rules import fights
from rules.base import RuleError, ScriptedDice
from rules.mdt.odds import DEFAULT_OPTIONS as MDT_OPTIONS
from rules.mdt.odds import odds_of_contest_round, odds_of_opposed
from rules.tale.odds import compare
from rules.wyrm.odds import opposed_odds

from .tale.helpers import act, state


def _p(odds: dict) -> dict:
    return {k: Fraction(v["p"]) for k, v in odds.items()}


def _dice(faces):
    return ScriptedDice(list(faces))


def _used(dice):
    assert dice.remaining == [], f"unused scripted faces: {dice.remaining}"


# --- Tale combat: tale-rpg.txt:61 "compared to the corresponding rolls of the opponent (attack vs.
# defence)", :62 "if at any point the defence portion is exhausted, roll over onto the attack portion",
# :64 "the attacker misses the attack and gets a 1D penalty", :65 "the attacks and defences all happen
# at the same time".

def test_tale_two_sides_read_as_the_two_sided_combat_round_does():
    """tale-rpg.txt:61-65: two sides in a fight of sides decide exactly what combat_round decides."""
    st = state()
    _, st = act(st, {"type": "start_combat", "their_pool": 6})
    mine = {"attack": 3, "defence": 2, "their_attack": 3, "their_defence": 3}
    my_attack, my_defence, their_attack, their_defence = [6, 5, 4], [1, 1], [3, 2, 2], [3, 2, 1]
    events, _ = act(st, {"type": "combat_round", **mine}, my_attack + my_defence + their_attack + their_defence)
    two = events[0].payload
    dice = _dice(my_attack + their_attack + my_defence + their_defence)
    fight = fights.tale_combat_round(
        {"a": {"dice": 6, "available": 6}, "b": {"dice": 6, "available": 6}},
        {"a": {"attack": {"b": 3}, "defence": 2}, "b": {"attack": {"a": 3}, "defence": 3}}, dice)
    _used(dice)
    assert fight["damage"] == {"a": two["damage"]["to_me"], "b": two["damage"]["to_them"]}
    assert [x["outcome"] for x in fight["exchanges"]] == two["outcome"].split("/")
    assert fight["exchanges"][0]["odds"] == {"hit": two["odds"]["my_hit"], "even": two["odds"]["my_even"],
                                             "miss": two["odds"]["my_miss"]}


def test_tale_two_against_one_each_attack_meets_the_one_defence_roll():
    """tale-rpg.txt:65 "all happen at the same time": with fights.defence ``each`` the bandit's one
    defence roll stands against both attacks; eliminations add up; each miss costs its attacker 1D."""
    sides = {"ana": {"dice": 6, "available": 6}, "ben": {"dice": 6, "available": 6},
             "bandit": {"dice": 8, "available": 8}}
    choices = {"ana": {"attack": {"bandit": 3}, "defence": 3}, "ben": {"attack": {"bandit": 2}, "defence": 0},
               "bandit": {"attack": {"ana": 4}, "defence": 4}}
    # ana's attack, ben's attack, the bandit's attack; then ana's defence, the bandit's defence (ben is
    # not attacked: he rolls none).
    dice = _dice([6, 6, 5] + [1, 1] + [2, 2, 2, 2] + [5, 5, 5] + [4, 3, 2, 1])
    fight = fights.tale_combat_round(sides, choices, dice)
    _used(dice)
    by_pair = {(x["by"], x["against"]): x for x in fight["exchanges"]}
    ana, ben, bandit = by_pair["ana", "bandit"], by_pair["ben", "bandit"], by_pair["bandit", "ana"]
    assert ana["defence"] == ben["defence"] == [4, 3, 2, 1]
    # 17 vs 10: 6>4, 6>3, 5>2 eliminate; ana's three dice meet three defence dice.
    assert (ana["outcome"], ana["damage"]) == ("hit", 3)
    assert (ben["outcome"], ben["damage"]) == ("miss", 0)  # 2 vs 10
    assert (bandit["outcome"], bandit["damage"]) == ("miss", 0)  # 8 vs 15
    assert fight["damage"] == {"ana": 0, "ben": 0, "bandit": 3}
    assert fight["after"] == {"ana": 6, "ben": 6, "bandit": 5}
    assert fight["penalties"] == {"ana": 0, "ben": 1, "bandit": 1}
    hit, even, miss = compare(2, 4)
    assert _p(ben["odds"]) == {"hit": hit, "even": even, "miss": miss}


def test_tale_split_defence_rolls_each_part_against_its_attacker_alone():
    """fights.defence ``split`` (the text is silent on two attackers): the bandit's defence against
    ana is rolled apart from its defence against ben, and the odds read each part."""
    sides = {"ana": {"dice": 4, "available": 4}, "ben": {"dice": 4, "available": 4},
             "bandit": {"dice": 6, "available": 6}}
    choices = {"ana": {"attack": {"bandit": 2}}, "ben": {"attack": {"bandit": 2}},
               "bandit": {"defence": {"ana": 1, "ben": 3}}}
    dice = _dice([6, 6] + [2, 2] + [5] + [3, 3, 3])
    fight = fights.tale_combat_round(sides, choices, dice, defence_rule="split")
    _used(dice)
    ana, ben = fight["exchanges"]
    assert (ana["defence"], ana["outcome"]) == ([5], "hit")
    assert (ben["defence"], ben["outcome"]) == ([3, 3, 3], "miss")
    assert _p(ana["odds"])["hit"] == compare(2, 1)[0]
    # ana's 6 beats the 5; her second 6 rolls over onto the bandit's other defence (a 3).
    assert ana["damage"] == 2 and fight["after"]["bandit"] == 4


def test_tale_portions_belong_to_the_dice_a_side_has():
    sides = {"a": {"dice": 3, "available": 2}, "b": {"dice": 3, "available": 3}}
    with pytest.raises(RuleError, match="only 2D"):
        fights.tale_combat_round(sides, {"a": {"attack": {"b": 2}, "defence": 1}}, _dice([]))
    with pytest.raises(RuleError, match="only other sides"):
        fights.tale_combat_round(sides, {"a": {"attack": {"a": 1}}}, _dice([]))


def test_tale_iterated_round_of_three_walks_each_pair():
    """tale-rpg.txt:10: "compare the sums ... eliminating the loser's die if it is lower than the
    winner's": every named pair reads the same rolls; a side beaten twice loses both walks' dice."""
    dice = _dice([6, 5, 4] + [3, 3, 3] + [2, 2])
    fight = fights.tale_iterated_round({"a": 3, "b": 3, "c": 2},
                                       [{"by": "a", "against": "b"}, {"by": "c", "against": "b"}], dice)
    _used(dice)
    ab, cb = fight["exchanges"]
    assert ab["outcome"] == "win" and ab["verdicts"] == ["eliminated", "eliminated", "eliminated"]
    assert cb["outcome"] == "lose" and cb["verdicts"] == ["eliminated", "eliminated"]
    assert fight["eliminated"] == {"a": 0, "b": 3, "c": 2}
    win, tie, lose = compare(2, 3)
    assert _p(cb["odds"]) == {"win": win, "tie": tie, "lose": lose}


# --- MdT: mundo-das-trevas-lite-testes.pt.txt:24 "ambos rolam o mesmo atributo. Quem obter mais
# sucessos, ou um certo número de sucessos primeiro ..., vence a disputa."

def test_mdt_opposed_of_two_has_the_two_sided_odds():
    two = odds_of_opposed(4, 3)
    many = fights.mdt_opposed_odds({"a": 4, "b": 3})
    assert (many["a"], many["b"], many["none"]) == (two["win"], two["loss"], two["tie"])


def test_mdt_opposed_of_three_most_successes_wins_alone():
    odds = fights.mdt_opposed_odds({"a": 3, "b": 3, "c": 3})
    assert odds["a"] == odds["b"] == odds["c"] and sum(odds.values()) == 1
    dice = _dice([10, 1, 1] + [7, 8, 2] + [9, 2, 3])
    test = fights.mdt_opposed({"a": 3, "b": 3, "c": 3}, dice, MDT_OPTIONS)
    _used(dice)
    assert test["winner"] is None  # a and b: two successes each
    dice = _dice([10, 7, 1] + [7, 8, 2] + [9, 2, 3])
    assert fights.mdt_opposed({"a": 3, "b": 3, "c": 3}, dice, MDT_OPTIONS)["winner"] == "a"


def test_mdt_race_of_two_has_the_two_sided_odds_and_a_group_race_is_won_ahead():
    """A race to N: the side ahead once anyone reaches N wins; equal leaders race on (MdT 16)."""
    two = odds_of_contest_round(3, 4, 2, 1, 3)
    many = fights.mdt_race_odds({"a": {"pool": 3, "mine": 2}, "b": {"pool": 4, "mine": 1}}, 3)
    assert (many["a"], many["b"], many["continue"]) == (two["win"], two["loss"], two["continue"])
    sides = {"a": {"pool": 2, "mine": 2}, "b": {"pool": 2, "mine": 1}, "c": {"pool": 1, "mine": 0}}
    dice = _dice([7, 1] + [10, 1] + [8])
    race = fights.mdt_race_round(sides, 3, dice, MDT_OPTIONS)
    _used(dice)
    assert race["totals"] == {"a": 3, "b": 3, "c": 1} and race["winner"] is None  # equal leaders race on
    dice = _dice([7, 1] + [8, 1] + [8])
    race = fights.mdt_race_round(sides, 3, dice, MDT_OPTIONS)
    assert race["winner"] == "a" and race["finished"]
    assert sum(_p(race["odds"]).values()) == 1


# --- WYRM: wyrm-srd-rules-mechanics.txt:23 "The DL of the active character is determined by a roll
# made by the passive character."

def test_wyrm_one_thief_past_two_guards_each_guard_rolls_her_dl():
    sides = {"thief": {"bonus": 5, "explodes": True}, "g1": {"bonus": 3, "explodes": True},
             "g2": {"bonus": 1, "explodes": False}}
    exchanges = [{"by": "thief", "against": "g1"}, {"by": "thief", "against": "g2"}]
    dice = _dice([4, 2] + [6, 6, 1])  # g1, thief; g2 (no skill: a 6 stays), thief 6 explodes
    fight = fights.wyrm_opposed_round(sides, exchanges, dice)
    _used(dice)
    first, second = fight["exchanges"]
    assert (first["passive"]["dl"], first["total"], first["outcome"]) == (7, 7, "success")  # equal succeeds
    assert (second["passive"]["dl"], second["total"], second["outcome"]) == (7, 12, "success")
    assert _p(second["odds"]) == opposed_odds(5, True, 1, False)


def test_wyrm_two_against_one_passive_rolls_once_when_the_setting_says_so():
    sides = {"a": {"bonus": 2, "explodes": False}, "b": {"bonus": 2, "explodes": False},
             "ogre": {"bonus": 3, "explodes": False}}
    exchanges = [{"by": "a", "against": "ogre"}, {"by": "b", "against": "ogre"}]
    dice = _dice([3, 4, 2])
    fight = fights.wyrm_opposed_round(sides, exchanges, dice, passive_rolls="once")
    _used(dice)
    assert [x["passive"]["dl"] for x in fight["exchanges"]] == [6, 6]
    assert [x["outcome"] for x in fight["exchanges"]] == ["success", "failure"]
    each = _dice([3, 4, 2, 2])
    fight = fights.wyrm_opposed_round(sides, exchanges, each)
    _used(each)
    assert [x["passive"]["dl"] for x in fight["exchanges"]] == [6, 5]


def test_a_round_names_distinct_sides_and_pairs():
    with pytest.raises(RuleError, match="itself"):
        fights.read_exchanges([{"by": "a", "against": "a"}], ["a", "b"])
    with pytest.raises(RuleError, match="once"):
        fights.read_exchanges([{"by": "a", "against": "b"}] * 2, ["a", "b"])
    with pytest.raises(RuleError, match="two sides"):
        fights.read_exchanges([{"by": "a", "against": "z"}], ["a", "b"])


def test_each_system_plays_with_several_sides_the_procedures_its_text_has():
    """docs/rules.md, Fights 9: Tale's iterated resolution and combat (tale-rpg.txt:8), MdT's opposed
    test and race (mundo-das-trevas-lite-testes.pt.txt:24), WYRM's opposed check alone
    (wyrm-srd-rules-mechanics.txt:23: one roll, no race), and no fight in TOTE (no opposed test)."""
    from rules import get_system

    kinds = {name: sorted(k.name for k in get_system(name).fights.kinds) if get_system(name).fights else []
             for name in ("tale", "mdt", "wyrm", "tote")}
    assert kinds == {"tale": ["combat", "iterated"], "mdt": ["opposed", "race"], "wyrm": ["opposed"], "tote": []}
