"""Mundo das Trevas Lite: d10 pools, successes on 7+ (10 counts two).

See ``docs/rules.md`` for every interpretation of the source text, the
actions and their JSON fields, and the event types with their payloads.
"""

from ..base import RuleSystem

# Modules, not their functions, so ``rules.mdt.odds`` etc. stay importable as modules.
from . import actions, evolve, odds, sheet

SYSTEM = RuleSystem(
    name="mdt",
    title="Mundo das Trevas Lite",
    validate_sheet=sheet.validate_sheet,
    initial_state=sheet.initial_state,
    actions=actions.ACTIONS,
    evolve=evolve.evolve,
    odds=odds.odds,
    preview=actions.plan_odds,
    events=evolve.EVENTS,
    advances=actions.advances,
    sheet=sheet.SHEET,
    example_sheet={
        "attributes": {"intelligence": 2, "wits": 2, "resolve": 2, "strength": 1, "dexterity": 2,
                       "stamina": 2, "presence": 3, "manipulation": 2, "composure": 2},
        "specializations": {"Ocultismo": 2},
    },
)
