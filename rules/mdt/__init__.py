"""Mundo das Trevas Lite: d10 pools, successes on 7+ (10 counts two).

See ``docs/rules.md`` for every interpretation of the source text, the
actions and their JSON fields, and the event types with their payloads.
"""

from ..base import ConditionsRead, Damage, RuleSystem
from ..health import harm_action

# Modules, not their functions, so ``rules.mdt.odds`` etc. stay importable as modules.
from . import actions, evolve, odds, opposed, sheet

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
    contests=opposed.CONTESTS,
    fights=opposed.FIGHTS,
    # A test or an opposed test deals its successes (the World of Darkness family's reading), a
    # generic roll its total (docs/rules.md, "Damage that reaches a track").
    damage=Damage({"test_rolled": "successes", "opposed_test_rolled": "successes", "roll": "total"}, harm_action),
    quick_sheet=sheet.quick_sheet,
    # A condition's dice on every pool the character rolls (mundo-das-trevas-lite-testes.pt.txt:3).
    conditions=ConditionsRead(frozenset({"test", "opposed_test", "contest_round", "project_roll"}), "{signed} {dice}"),
    example_sheet={
        "attributes": {"intelligence": 2, "wits": 2, "resolve": 2, "strength": 1, "dexterity": 2,
                       "stamina": 2, "presence": 3, "manipulation": 2, "composure": 2},
        "specializations": {"Ocultismo": 2},
    },
)
