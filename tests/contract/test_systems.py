"""One contract, every rule system, every database.

For each system a short evening is played through the real command path
(database, projections, permissions). After every command:

* the state before it plus its events, folded by the rules, equals the
  projection fetched after it (the client's view can't drift from the server's);
* the state as of that seq, recomputed from the log, equals the projection then;

and at the end the chain verifies and a rebuild changes nothing.
"""

from __future__ import annotations

import pytest

from campaign.actions import ActionError, Forbidden
from campaign.eventlog import verify_chain
from campaign.models import CharacterProjection, Event
from campaign.projections import rebuild, rules_events, state_as_of
from rules import ScriptedDice, get_system

from .evenings import EVENINGS, FACES


@pytest.fixture(params=sorted(EVENINGS))
def evening(request, table_for):
    system = request.param
    table = table_for(system)
    rules = get_system(system)
    table.hero = table.create_character(table.alice, "Hero", rules.example_sheet)
    return system, table


def projection(character):
    return CharacterProjection.objects.get(character=character)


def test_an_evening_folds_exactly_into_the_projection(evening):
    system, table = evening
    rules = get_system(system)
    states_at = {}
    for who, action in EVENINGS[system]:
        action = {**action}
        if action["type"] in rules.actions:
            action["character"] = table.hero.id
        before = projection(table.hero).state
        result = table.command(getattr(table, who), action, dice=ScriptedDice(FACES))
        after = projection(table.hero)
        folded = before
        for event in result.events:
            for rules_event in rules_events(event):  # a hidden command's events come as one bundle
                folded = rules.evolve(folded, rules_event)
        assert folded == after.state, f"{action['type']}: events do not fold into the projection"
        assert after.last_seq == result.events[-1].seq
        states_at[after.last_seq] = after.state
    for seq, state in states_at.items():
        assert state_as_of(table.hero, seq) == state
    campaign = type(table.campaign).objects.get(pk=table.campaign.pk)
    assert verify_chain(campaign).ok
    assert rebuild(campaign, check=True) == []


def test_rolling_events_record_dice_outcome_and_exact_odds(evening):
    system, table = evening
    rules = get_system(system)
    for who, action in EVENINGS[system]:
        action = {**action}
        if action["type"] in rules.actions:
            action["character"] = table.hero.id
        table.command(getattr(table, who), action, dice=ScriptedDice(FACES))
    rolled = [e for e in Event.objects.filter(campaign=table.campaign, character=table.hero) if "odds" in e.payload]
    assert rolled, "the evening should contain rolls"
    for event in rolled:
        for outcome, odd in event.payload["odds"].items():
            p, q = (int(x) for x in odd["p"].split("/"))
            assert 0 <= p <= q and abs(p / q - odd["float"]) < 1e-12, (event.type, outcome)


def test_player_cannot_take_gm_actions_or_act_for_others(evening):
    system, table = evening
    rules = get_system(system)
    head = Event.objects.filter(campaign=table.campaign).count()
    for gm_action in sorted(rules.gm_actions):
        with pytest.raises(Forbidden):
            table.command(table.alice, {"type": gm_action, "character": table.hero.id})
    player_action = sorted(set(rules.actions) - set(rules.gm_actions))[0]
    with pytest.raises(Forbidden):
        table.command(table.bob, {"type": player_action, "character": table.hero.id})
    with pytest.raises(ActionError):
        table.command(table.alice, {"type": player_action})  # no character
    assert Event.objects.filter(campaign=table.campaign).count() == head


def test_voiding_an_event_rolls_the_projection_back(evening):
    system, table = evening
    award = {"type": "award_points", "points": 4, "reason": "a mistake", "character": table.hero.id}
    before = projection(table.hero).state
    result = table.command(table.gm, award)
    assert projection(table.hero).state != before
    table.command(table.gm, {"type": "void", "seq": result.events[0].seq, "reason": "wrong character"})
    assert projection(table.hero).state == before
    assert rebuild(type(table.campaign).objects.get(pk=table.campaign.pk), check=True) == []
    assert Event.objects.filter(campaign=table.campaign, seq=result.events[0].seq).exists()  # still in the log


def ask_alice_for_a_roll(evening):
    """The GM asks for a player action of the system; returns (table, request event, the answer to send)."""
    system, table = evening
    rules = get_system(system)
    wanted = next(a for _, a in EVENINGS[system] if a["type"] in rules.actions and a["type"] not in rules.gm_actions)
    asked = table.command(table.gm, {"type": "request_roll", "character": table.hero.id, "action": wanted}).events[0]
    return table, asked, {**wanted, "character": table.hero.id, "request": asked.seq}


def test_an_answer_to_a_roll_request_names_it(evening):
    from campaign.actions import Refused

    table, asked, answer = ask_alice_for_a_roll(evening)
    result = table.command(table.alice, answer, dice=ScriptedDice(FACES))
    assert result.events[0].payload["answers"] == asked.seq
    with pytest.raises(Refused, match=f"answered in #{result.events[0].seq}"):
        table.command(table.alice, answer, dice=ScriptedDice(FACES))
    with pytest.raises(ActionError, match="not a roll request"):
        table.command(table.alice, {**answer, "request": result.events[0].seq}, dice=ScriptedDice(FACES))


def test_a_voided_answer_opens_its_request_again(evening):
    from campaign.actions import Refused

    table, asked, answer = ask_alice_for_a_roll(evening)
    first = table.command(table.alice, answer, dice=ScriptedDice(FACES)).events[0]
    table.command(table.gm, {"type": "void", "seq": first.seq, "reason": "wrong skill"})
    again = table.command(table.alice, answer, dice=ScriptedDice(FACES)).events[0]
    assert again.payload["answers"] == asked.seq
    with pytest.raises(Refused, match=f"answered in #{again.seq}"):
        table.command(table.alice, answer, dice=ScriptedDice(FACES))
    # A voided request can't be answered at all.
    asked2 = table.command(table.gm, {"type": "request_roll", "character": table.hero.id, "action": asked.payload.get("asked", asked.payload["action"])}).events[0]
    table.command(table.gm, {"type": "void", "seq": asked2.seq, "reason": "never mind"})
    with pytest.raises(Refused, match=f"#{asked2.seq} was voided"):
        table.command(table.alice, {**answer, "request": asked2.seq}, dice=ScriptedDice(FACES))


def test_preview_of_an_action_that_rolls_nothing_is_empty(evening):
    system, table = evening
    rules = get_system(system)
    state = projection(table.hero).state
    assert rules.preview(state, {"type": "award_points", "points": 1, "reason": "x", "character": table.hero.id}) == {}
