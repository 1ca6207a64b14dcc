"""Each system's ``advances`` (what the buy-advance form shows) is what ``buy_advance`` charges: the
price comes from the rules' own ``advance_cost``, never from the page (docs/table.md)."""

from __future__ import annotations

import pytest

from rules import Event, RuleError, ScriptedDice, get_system


def rich(system: str) -> dict:
    rules = get_system(system)
    return rules.replay(rules.initial_state(rules.example_sheet), [Event("points_awarded", {"points": 500, "reason": ""})])


def choices(system: str, advances: dict):
    """``(price, action)`` for every choice the form offers, as the form sends it."""
    if system == "mdt":
        yield from ((p, {"attribute": a}) for a, p in advances["attribute"].items())
        yield from ((p, {"specialization": n or "Briga"}) for n, p in advances["specialization"].items())
    elif system == "tote":
        yield from ((p, {"advance": "skill", "skill": s}) for s, p in advances["skill"].items())
        yield from ((p, {"advance": "totem", "totem": t}) for t, p in advances["totem"].items())
        for skill, specs in advances["specialization"].items():
            yield from ((p, {"advance": "specialization", "skill": skill, "specialization": n or "Brand new"})
                        for n, p in specs.items())
    else:
        yield from ((p, {"characteristic": c}) for c, p in advances["characteristic"].items())
        yield from ((p, {"skill": s}) for s, p in advances["skill"].items())
        yield from ((p, {"skill": "Brand new", "characteristics": pair.split("+")})
                    for pair, p in advances["new_skill"].items())


@pytest.mark.parametrize("system", ["mdt", "tote", "tale"])
@pytest.mark.parametrize("skill_die_cost", ["own", "pool"])
def test_the_forms_prices_are_what_buy_advance_charges(system, skill_die_cost):
    rules = get_system(system)
    state = rich(system)
    if system == "tale":
        state["sheet"]["options"] = {**state["sheet"].get("options", {}), "skill_die_cost": skill_die_cost}
    advances = rules.advances(state)
    offered = list(choices(system, advances))
    assert offered
    for price, action in offered:
        [event] = rules.decide(state, {"type": "buy_advance", **action}, ScriptedDice([]))
        assert (price["to"], price["cost"]) == (event.payload["to"], event.payload["cost"]), action


def test_a_rating_at_its_maximum_is_offered_refused_in_the_rules_words():
    rules = get_system("mdt")
    state = rich("mdt")
    state["sheet"]["attributes"]["presence"] = 5
    refused = rules.advances(state)["attribute"]["presence"]["refused"]
    with pytest.raises(RuleError, match="maximum"):
        rules.decide(state, {"type": "buy_advance", "attribute": "presence"}, ScriptedDice([]))
    assert "maximum of 5" in refused


def test_wyrm_s_prices_are_on_its_sheet():
    assert get_system("wyrm").advances(rich("wyrm")) is None
