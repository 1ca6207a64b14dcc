"""Every example and rule statement of the WYRM text, played with scripted dice.

The text has one worked example (the thief sneaking past the guard) and gives
no numbers for it; the numbers below are ours, the arithmetic is the text's.
WYRM has no multi-round contests: each check is one roll (or two, opposed),
so nothing is carried from one round to the next.
"""

from fractions import Fraction

from rules.base import Event

from .helpers import WYRM, make, play

GUARD = {"attribute": 2, "skills": 1}  # Mage 2, owns Awareness (+2)


def test_basic_check_d6_plus_attribute_equal_or_higher_succeeds():
    thief = make()
    # Warrior 1, no skill: d6 + 1 against DL 5. A 4 makes exactly 5: success.
    (event,), _ = play(thief, {"type": "check", "attribute": "warrior", "dl": 5}, [4])
    p = event.payload
    assert (p["die_total"], p["attribute_value"], p["skill_bonus"], p["total"], p["dl"]) == (4, 1, 0, 5, 5)
    assert p["success"] and p["outcome"] == "success"
    (event,), _ = play(thief, {"type": "check", "attribute": "warrior", "dl": 5}, [3])
    assert event.payload["total"] == 4 and event.payload["outcome"] == "failure"


def test_a_known_skill_adds_two():
    (event,), _ = play(make(), {"type": "check", "attribute": "rogue", "skills": ["Stealth"], "dl": 9}, [4])
    p = event.payload
    assert (p["die_total"], p["attribute_value"], p["skill_bonus"], p["total"]) == (4, 3, 2, 9)
    assert p["success"]


def test_optional_second_skill_adds_two_more_when_the_gm_allows():
    action = {"type": "check", "attribute": "rogue", "skills": ["Stealth", "Climbing"], "dl": 11, "gm_allows_second_skill": True}
    (event,), _ = play(make(), action, [2])
    assert (event.payload["skill_bonus"], event.payload["total"], event.payload["success"]) == (4, 9, False)
    # ...or as a campaign option on the sheet.
    thief = make(options={"second_skill_bonus": True})
    del action["gm_allows_second_skill"]
    (event,), _ = play(thief, action, [4])
    assert (event.payload["total"], event.payload["success"]) == (11, True)


def test_a_six_explodes_when_the_character_owns_a_skill():
    # 6, then 6 again, then 2: the die totals 14; with Rogue 3 and Stealth, 19.
    (event,), state = play(make(), {"type": "check", "attribute": "rogue", "skills": ["Stealth"], "dl": 18}, [6, 6, 2])
    p = event.payload
    assert [d["face"] for d in p["dice"]] == [6, 6, 2]
    assert [d["exploded"] for d in p["dice"]] == [True, True, False]
    assert (p["die_total"], p["total"], p["success"]) == (14, 19, True)
    assert state["last_roll"]["total"] == 19


def test_a_six_does_not_explode_without_a_skill():
    (event,), _ = play(make(), {"type": "check", "attribute": "mage", "dl": 9}, [6])
    p = event.payload
    assert p["dice"] == [{"face": 6, "exploded": False}] and p["explodes"] is False
    assert (p["total"], p["success"]) == (8, False)


def test_damage_rolls_always_explode():
    (event,), _ = play(make(), {"type": "damage", "dice": 1, "bonus": 2}, [6, 3])
    p = event.payload
    assert p["dice"] == [[{"face": 6, "exploded": True}, {"face": 3, "exploded": False}]]
    assert (p["die_totals"], p["bonus"], p["total"], p["outcome"]) == ([9], 2, 11, "11")
    assert Fraction(p["odds"]["11"]["p"]) == Fraction(1, 36)


def test_explosions_stop_at_the_cap():
    # Six 6s: the sixth is the fifth explosion, the cap, and adds no more dice.
    (event,), _ = play(make(), {"type": "damage"}, [6] * 6)
    chain = event.payload["dice"][0]
    assert len(chain) == 6 and chain[-1] == {"face": 6, "exploded": False, "capped": True}
    assert event.payload["total"] == 36


def test_automatic_success_needs_no_roll():
    (event,), state = play(make(), {"type": "automatic_success", "attribute": "rogue", "skill": "climbing", "task": "climb a garden wall"})
    p = event.payload
    assert p["dice"] == [] and p["success"] and p["skill"] == "Climbing"
    assert state["rolls"] == 0 and state["last_roll"] is None


def test_unopposed_check_against_the_gms_dl():
    (event,), _ = play(make(), {"type": "check", "attribute": "rogue", "dl": 7}, [4])
    assert (event.payload["opposed"], event.payload["dl"], event.payload["total"], event.payload["success"]) == (False, 7, 7, True)


def test_thief_sneaks_past_the_guard():
    """The text's example: the guard rolls d6 + Mage + 2 (Awareness); that is the thief's DL."""
    action = {"type": "check", "attribute": "rogue", "skills": ["Stealth"], "vs": GUARD, "task": "sneak past the guard"}
    # Guard rolls 3: 3 + 2 + 2 = 7. Thief rolls 2: 2 + 3 + 2 = 7 >= 7: unnoticed.
    (event,), _ = play(make(), action, [3, 2])
    p = event.payload
    assert p["opposition"]["dice"] == [{"face": 3, "exploded": False}]
    assert (p["opposition"]["total"], p["dl"], p["total"], p["outcome"]) == (7, 7, 7, "success")
    # The guard owns Awareness, so his 6 explodes too: 6 + 5 + 4 = 15; thief 5 + 5 = 10.
    (event,), _ = play(make(), action, [6, 5, 5])
    p = event.payload
    assert (p["opposition"]["die_total"], p["dl"], p["total"], p["outcome"]) == (11, 15, 10, "failure")


def test_static_opposition_adds_three_instead_of_rolling():
    action = {"type": "check", "attribute": "rogue", "skills": ["Stealth"], "vs": dict(GUARD, static=True)}
    (event,), _ = play(make(), action, [1])  # only the thief's die is rolled
    p = event.payload
    assert p["opposition"]["dice"] == [] and p["opposition"]["total"] == 2 + 2 + 3 == p["dl"]
    assert (p["total"], p["success"]) == (6, False)
    assert event.payload["odds"]["success"]["p"] == "5/6"  # the die needs 2+


def test_circumstantial_modifiers_add_to_the_dl():
    # No tools: +2 to a DL 8 crafting task.
    (event,), _ = play(make(), {"type": "check", "attribute": "mage", "dl": 8, "modifier": 2}, [6])
    p = event.payload
    assert (p["dl_base"], p["modifier"], p["dl"], p["total"], p["success"]) == (8, 2, 10, 8, False)
    # Bad lighting makes hiding easier: -2 on the guard's rolled DL.
    action = {"type": "check", "attribute": "rogue", "skills": ["Stealth"], "vs": GUARD, "modifier": -2}
    (event,), _ = play(make(), action, [5, 1])
    p = event.payload
    assert (p["dl_base"], p["dl"], p["total"], p["success"]) == (9, 7, 6, False)


def test_fate_reroll_a_single_die_roll():
    thief = make()
    _, thief = play(thief, {"type": "check", "attribute": "rogue", "skills": ["Stealth"], "dl": 10}, [1])
    (request,), thief = play(thief, {"type": "spend_fate", "use": "reroll"})
    assert request.type == "fate_requested" and thief["fate"] == 2  # nothing spent yet
    (spent,), thief = play(thief, {"type": "approve_fate"}, [6, 3])
    p = spent.payload
    assert p["roll"] == 1 and p["original_dice"] == [{"face": 1, "exploded": False}]
    assert [d["face"] for d in p["new_dice"]] == [6, 3]
    assert (p["original_total"], p["total"], p["original_outcome"], p["outcome"]) == (6, 14, "failure", "success")
    assert p["odds"]["success"]["p"] == "1/3"  # the die needs 5+
    assert thief["fate"] == 1 and thief["last_roll"]["total"] == 14 and thief["last_roll"]["fate_used"]


def test_fate_plus_two_to_a_single_check():
    thief = make()
    _, thief = play(thief, {"type": "check", "attribute": "warrior", "dl": 6}, [3])
    _, thief = play(thief, {"type": "spend_fate", "use": "plus_two"})
    (spent,), thief = play(thief, {"type": "approve_fate"})
    p = spent.payload
    assert (p["original_total"], p["bonus"], p["total"], p["outcome"]) == (4, 2, 6, "success")
    assert thief["fate"] == 1 and thief["last_roll"]["success"]


def test_fate_ignore_a_killing_attack_and_change_a_minor_detail():
    thief = make()
    _, thief = play(thief, {"type": "spend_fate", "use": "ignore_attack", "detail": "the ogre's club"})
    (spent,), thief = play(thief, {"type": "approve_fate"})
    assert spent.payload["use"] == "ignore_attack" and thief["fate"] == 1
    _, thief = play(thief, {"type": "spend_fate", "use": "minor_detail", "detail": "I know this innkeeper"})
    (spent,), thief = play(thief, {"type": "approve_fate"})
    assert spent.payload["detail"] == "I know this innkeeper" and thief["fate"] == 0


def test_fate_does_not_regenerate_but_the_gm_grants_it():
    thief = make(fate=0)
    for n in range(3):
        thief = play(thief, {"type": "check", "attribute": "mage", "dl": 3}, [3])[1]
        for event_type, payload in (("scene_ended", {"scene": n}), ("session_ended", {"session": n})):
            thief = _campaign(thief, event_type, payload)
    assert thief["fate"] == 0
    (event,), thief = play(thief, {"type": "grant_fate", "amount": 1, "reason": "held the bridge alone"})
    assert event.type == "fate_granted" and thief["fate"] == 1


def _campaign(state, event_type, payload):
    return WYRM.evolve(state, Event(event_type, payload))
