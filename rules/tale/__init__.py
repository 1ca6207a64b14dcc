"""Tale RPG: pools of d6 summed; straight rolls, iterated resolution with the sorted
elimination, hiding, combat with attack/defence portions, damage, recovery and advancement.

Interpretations of the source text are in ``docs/rules.md``.
"""

from ..base import RuleSystem
from .actions import ACTIONS, GM_ACTIONS
from .evolve import evolve
from .odds import odds, preview
from .sheet import initial_state, validate_sheet

SYSTEM = RuleSystem(
    name="tale",
    title="Tale RPG",
    validate_sheet=validate_sheet,
    initial_state=initial_state,
    actions=ACTIONS,
    evolve=evolve,
    odds=odds,
    preview=preview,
    gm_actions=GM_ACTIONS,
    example_sheet={
        "characteristics": {"brawn": 4, "deft": 3, "clever": 3, "skill": 3, "wisecrack": 2},
        "primary": "brawn",
        "secondary": "skill",
        "skills": {"Ride": {"characteristics": ["deft", "brawn"], "dice": 1}},
        "archetype": "barbarian",
    },
)
