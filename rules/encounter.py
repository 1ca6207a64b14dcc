"""Encounters and turn order, folded from the campaign's encounter events. Pure.

None of the four texts has an initiative rule (TOTE, WYRM, Tale and MdT
resolve conflicts without a turn order), so the order is the GM's: combatants
act in the order they were added until the GM sets another (docs/rules.md,
"Encounters"). A system that gains a rule adds an ``order`` function here.

Events (all campaign-level, no character):
``encounter_started`` {name}, ``combatant_added`` {character, name},
``turn_order_set`` {order: [ids]}, ``turn_advanced`` {round, turn, acting},
``encounter_ended`` {rounds}.
"""

from __future__ import annotations

from typing import Iterable, Mapping

STARTED, ADDED, ORDERED, ADVANCED, ENDED = (
    "encounter_started", "combatant_added", "turn_order_set", "turn_advanced", "encounter_ended")
EVENTS = frozenset({STARTED, ADDED, ORDERED, ADVANCED, ENDED})
MAX_COMBATANTS = 30
# The GM's turn: one neutral slot in the order where the NPCs the players may not see act. It names
# no character (its id is 0, never a character's) and counts none, so the table learns neither who
# nor how many (docs/rules.md, platform 11).
GM_TURN = 0
GM_TURN_NAME = "GM's turn"


def evolve(encounter: dict | None, kind: str, payload: Mapping) -> dict | None:
    """The encounter after one of its events (``None``: none running)."""
    if kind == STARTED:
        return {"name": payload["name"], "combatants": [], "round": 0, "turn": None, "acting": None}
    if encounter is None:
        return None
    if kind == ADDED:
        encounter["combatants"].append({"character": payload["character"], "name": payload["name"]})
    elif kind == ORDERED:
        by_id = {c["character"]: c for c in encounter["combatants"]}
        encounter["combatants"] = [by_id[i] for i in payload["order"]]
        if encounter["acting"] is not None:
            encounter["turn"] = payload["order"].index(encounter["acting"])
    elif kind == ADVANCED:
        encounter.update(round=payload["round"], turn=payload["turn"], acting=payload["acting"])
    elif kind == ENDED:
        return None
    return encounter


def fold(events: Iterable[tuple[str, Mapping]]) -> dict | None:
    encounter = None
    for kind, payload in events:
        encounter = evolve(encounter, kind, payload)
    return encounter


def next_turn(encounter: dict) -> dict:
    """The ``turn_advanced`` payload: the next combatant in order, a new round after the last."""
    count = len(encounter["combatants"])
    if encounter["turn"] is None or encounter["round"] == 0:
        turn, round_ = 0, 1
    elif encounter["turn"] + 1 >= count:
        turn, round_ = 0, encounter["round"] + 1
    else:
        turn, round_ = encounter["turn"] + 1, encounter["round"]
    acting = encounter["combatants"][turn]
    name = "the GM" if acting["character"] == GM_TURN else acting["name"]  # "gave the turn to the GM"
    return {"round": round_, "turn": turn, "acting": acting["character"], "name": name}
