"""Mundo das Trevas Lite: the source text's examples, played with scripted dice.

The text gives no example with concrete dice; it names situations (climbing a
rope, a cliff, a volcano; lying to a guest, a guard, a ghost; arm wrestling and
chess; repairing a car, translating a tome). Each is played here round by
round with ScriptedDice, asserting successes, outcomes and the running counts
carried from one round to the next.
"""

from rules import ScriptedDice, get_system

MDT = get_system("mdt")

ATTRS = dict(intelligence=2, wits=2, resolve=2, strength=3, dexterity=2,
             stamina=2, presence=2, manipulation=3, composure=2)


def character(specializations=None, options=None, **attributes):
    sheet = {"name": "Helena", "attributes": {**ATTRS, **attributes},
             "specializations": specializations or {}}
    if options:
        sheet["options"] = options
    return MDT.initial_state(sheet)


def act(state, action, faces):
    dice = ScriptedDice(faces)
    events = MDT.decide(state, action, dice)
    assert dice.remaining == [], "the action rolled fewer dice than scripted"
    return events


def play(state, action, faces):
    events = act(state, action, faces)
    return MDT.replay(state, events), events[0].payload


def test_pool_is_one_plus_attribute_plus_specialization_plus_modifiers():
    # Strength 3 + Climbing 1 + 1, one disadvantage (wet rope): 1 + 3 + 1 - 1 = 4 dice.
    state = character({"Climbing": 1})
    [event] = act(state, {"type": "test", "attribute": "strength", "specialization": "Climbing",
                          "modifier": -1}, [2, 3, 4, 5])
    p = event.payload
    assert (p["attribute_rating"], p["specialization_rating"], p["modifier"], p["pool"]) == (3, 1, -1, 4)
    assert len(p["dice"]) == 4


def test_seven_eight_nine_are_one_success_and_ten_is_two():
    state = character()
    [event] = act(state, {"type": "test", "attribute": "strength"}, [7, 8, 9, 10])
    assert [d["successes"] for d in event.payload["dice"]] == [1, 1, 1, 2]
    assert event.payload["successes"] == 5


def test_climbing_a_rope_is_dramatic_difficulty_1():
    # "Escalar uma corda": one success is enough, at the minimum competence.
    state = character()
    [event] = act(state, {"type": "test", "attribute": "strength", "difficulty": "dramático"}, [7, 2, 3, 4])
    p = event.payload
    assert (p["difficulty"], p["difficulty_name"], p["difficulty_label"]) == (1, "dramatic", "Dramático")
    assert p["successes"] == 1 and p["success"] and p["outcome"] == "success"


def test_climbing_a_cliff_is_dangerous_difficulty_2():
    state = character()
    [failed] = act(state, {"type": "test", "attribute": "strength", "difficulty": 2}, [9, 2, 3, 4])
    assert failed.payload["successes"] == 1 and failed.payload["outcome"] == "failure"
    [made] = act(state, {"type": "test", "attribute": "strength", "difficulty": 2}, [10, 2, 3, 4])
    assert made.payload["successes"] == 2 and made.payload["outcome"] == "success"


def test_climbing_a_volcano_is_desperate_difficulty_3():
    state = character()
    [event] = act(state, {"type": "test", "attribute": "strength", "difficulty": "desperate"}, [10, 8, 5, 6])
    assert event.payload["difficulty_label"] == "Desesperado"
    assert event.payload["successes"] == 3 and event.payload["success"]


def test_lying_to_a_suspicious_guard_and_to_an_ancient_ghost():
    state = character({"Lábia": 2})  # Manipulation 3 + Lábia 2 + 1 = 6 dice
    guard = {"type": "test", "attribute": "manipulation", "specialization": "lábia", "difficulty": "perigoso"}
    [event] = act(state, guard, [7, 7, 1, 2, 3, 4])
    assert event.payload["pool"] == 6 and event.payload["outcome"] == "success"
    ghost = {**guard, "difficulty": "desesperado"}
    [event] = act(state, ghost, [7, 7, 1, 2, 3, 4])
    assert event.payload["outcome"] == "failure" and not event.payload["dramatic_failure"]


def test_exceptional_success_is_four_more_successes_than_needed():
    state = character()
    dramatic = {"type": "test", "attribute": "strength", "difficulty": 1}
    [event] = act(state, dramatic, [10, 10, 8, 2])  # 5 = 1 needed + 4
    assert event.payload["exceptional_at"] == 5
    assert event.payload["outcome"] == "exceptional" and event.payload["exceptional"]
    [event] = act(state, dramatic, [10, 10, 2, 2])  # 4: a plain success
    assert event.payload["outcome"] == "success" and not event.payload["exceptional"]
    dangerous = {**dramatic, "difficulty": 2}
    [event] = act(state, dangerous, [10, 10, 8, 2])  # 5 < 2 + 4
    assert event.payload["outcome"] == "success"
    [event] = act(state, dangerous, [10, 10, 10, 2])  # 6 = 2 + 4
    assert event.payload["outcome"] == "exceptional"


def test_luck_test_when_modifiers_leave_no_dice():
    # Strength 3 + 1 = 4 dice, four disadvantages: 0 dice, so one Luck die.
    state = character()
    luck = {"type": "test", "attribute": "strength", "modifier": -4}
    [event] = act(state, luck, [10])
    p = event.payload
    assert p["pool"] == 0 and p["luck_test"] and len(p["dice"]) == 1
    assert p["successes"] == 1 and p["outcome"] == "success"  # a 10 is "um sucesso": one
    [event] = act(state, luck, [9])
    assert event.payload["successes"] == 0 and event.payload["outcome"] == "failure"
    [event] = act(state, luck, [1])
    assert event.payload["outcome"] == "dramatic_failure"
    # One success can never meet difficulty 2: a Luck Test cannot beat a dangerous test.
    [event] = act(state, {**luck, "difficulty": 2, "modifier": -7}, [10])
    assert event.payload["pool"] == -3 and event.payload["outcome"] == "failure"


def test_luck_options_ten_counts_two_and_no_dramatic_failure():
    state = character(options={"luck_ten_successes": 2, "luck_dramatic_failure": False})
    luck = {"type": "test", "attribute": "strength", "modifier": -4, "difficulty": 2}
    [event] = act(state, luck, [10])
    assert event.payload["successes"] == 2 and event.payload["outcome"] == "success"
    [event] = act(state, luck, [1])
    assert event.payload["outcome"] == "failure" and not event.payload["dramatic_failure"]


def test_dramatic_failure_needs_no_successes_and_a_one():
    state = character()
    test = {"type": "test", "attribute": "strength"}
    [event] = act(state, test, [1, 4, 5, 6])
    assert event.payload["outcome"] == "dramatic_failure" and event.payload["dramatic_failure"]
    [event] = act(state, test, [2, 4, 5, 6])  # no 1: a plain failure
    assert event.payload["outcome"] == "failure"
    [event] = act(state, test, [1, 1, 5, 7])  # a success: no dramatic failure
    assert event.payload["outcome"] == "success" and not event.payload["dramatic_failure"]
    # Difficulty 2 with one success and a 1 is a failure, not dramatic.
    [event] = act(state, {**test, "difficulty": 2}, [1, 7, 5, 6])
    assert event.payload["outcome"] == "failure"


def test_arm_wrestling_opposed_test_more_successes_wins():
    # "uma queda de braço": both roll Strength; the arm wrestler opponent has 5 dice.
    state = character()
    wrestle = {"type": "opposed_test", "attribute": "strength", "vs_pool": 5, "opponent": "Marujo"}
    [event] = act(state, wrestle, [8, 10, 2, 3] + [7, 2, 3, 4, 5])
    p = event.payload
    assert p["roll"]["successes"] == 3 and p["opponent_roll"]["successes"] == 1
    assert p["outcome"] == "win" and p["success"]
    [event] = act(state, wrestle, [8, 2, 2, 3] + [7, 2, 3, 4, 5])
    assert event.payload["outcome"] == "tie"
    [event] = act(state, {**wrestle, "tie_goes_to": "opponent"}, [8, 2, 2, 3] + [7, 2, 3, 4, 5])
    assert event.payload["outcome"] == "loss"
    [event] = act(state, wrestle, [1, 2, 2, 3] + [7, 2, 3, 4, 5])
    assert event.payload["outcome"] == "loss" and event.payload["dramatic_failure"]


def test_chess_race_to_three_successes_round_by_round():
    # "jogando xadrez": Intelligence 2 (3 dice) against a 4-dice rival, first to 3 successes.
    state = character()
    state, p = play(state, {"type": "start_contest", "attribute": "intelligence", "vs_pool": 4,
                            "target": 3, "label": "xadrez"}, [])
    assert state["contest"]["mine"] == 0 and state["contest"]["theirs"] == 0

    state, p = play(state, {"type": "contest_round"}, [7, 2, 3] + [2, 3, 4, 5])
    assert (p["round"], p["roll"]["successes"], p["opponent_roll"]["successes"]) == (1, 1, 0)
    assert (p["mine"], p["theirs"], p["outcome"]) == (1, 0, "continue")
    assert (state["contest"]["mine"], state["contest"]["theirs"]) == (1, 0)

    state, p = play(state, {"type": "contest_round"}, [2, 3, 4] + [10, 7, 4, 5])
    assert p["carried_in"] == {"mine": 1, "theirs": 0}
    assert (p["mine"], p["theirs"], p["outcome"]) == (1, 3, "loss") and p["finished"]
    assert state["contest"] is None


def test_race_where_both_reach_the_target_together():
    state = character()
    state, _ = play(state, {"type": "start_contest", "attribute": "intelligence", "vs_pool": 3, "target": 2}, [])
    state, p = play(state, {"type": "contest_round"}, [10, 2, 3] + [10, 2, 3])
    assert (p["mine"], p["theirs"], p["outcome"]) == (2, 2, "continue")  # equal: race on
    assert (state["contest"]["mine"], state["contest"]["theirs"], state["contest"]["round"]) == (2, 2, 1)
    state, p = play(state, {"type": "contest_round", "modifier": 1}, [8, 2, 3, 4] + [2, 3, 4])
    assert p["pool"] == 4 and p["carried_in"] == {"mine": 2, "theirs": 2}
    assert (p["mine"], p["theirs"], p["outcome"]) == (3, 2, "win") and p["success"]
    assert state["contest"] is None


def test_repairing_a_car_project_accumulates_successes_each_hour():
    state = character({"Mecânica": 2})  # Intelligence 2 + Mecânica 2 + 1 = 5 dice
    state, p = play(state, {"type": "start_project", "name": "Consertar o carro", "target": 5,
                            "attribute": "intelligence", "specialization": "mecânica",
                            "interval": "hour"}, [])
    assert state["projects"]["Consertar o carro"]["progress"] == 0
    car = {"type": "project_roll", "project": "consertar o carro"}

    state, p = play(state, car, [7, 9, 2, 3, 4])
    assert (p["roll_number"], p["progress_before"], p["progress"], p["outcome"]) == (1, 0, 2, "continue")
    state, p = play(state, car, [1, 2, 3, 4, 5])  # a dramatic failure, progress kept by default
    assert p["dramatic_failure"] and not p["lost_progress"] and p["progress"] == 2
    state, p = play(state, car, [10, 2, 3, 4, 5])
    assert (p["progress_before"], p["progress"]) == (2, 4)
    assert state["projects"]["Consertar o carro"] == {**state["projects"]["Consertar o carro"],
                                                      "progress": 4, "rolls": 3}
    state, p = play(state, car, [8, 2, 3, 4, 5])
    assert (p["progress"], p["complete"], p["outcome"]) == (5, True, "complete")
    assert state["projects"] == {}


def test_translating_a_tome_loses_progress_on_dramatic_failure_when_set():
    state = character()
    state, _ = play(state, {"type": "start_project", "name": "Tomo antigo", "target": 10,
                            "attribute": "intelligence", "interval": "day",
                            "reset_on_dramatic_failure": True}, [])
    state, p = play(state, {"type": "project_roll", "project": "Tomo antigo"}, [10, 10, 8])
    assert p["progress"] == 5
    state, p = play(state, {"type": "project_roll", "project": "Tomo antigo"}, [1, 5, 6])
    assert p["lost_progress"] and p["progress"] == 0
    assert state["projects"]["Tomo antigo"]["progress"] == 0


def test_say_yes_succeeds_with_no_dice():
    state = character()
    [event] = act(state, {"type": "say_yes", "goal": "abrir a porta destrancada"}, [])
    assert event.payload["dice"] == [] and event.payload["success"]
    assert "say_yes" in MDT.gm_actions
