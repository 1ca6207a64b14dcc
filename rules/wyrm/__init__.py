"""WYRM (Warrior, Rogue & Mage): one d6 + attribute (+2 per helping skill) against a DL.

Interpretations of the source text are listed in ``docs/rules.md``.
"""

from ..base import RuleSystem
from .actions import ACTIONS
from .evolve import EVENTS, evolve
from .odds import odds as _odds, preview as _preview  # keep rules.wyrm.odds the module
from .sheet import SHEET, initial_state, validate_sheet

SYSTEM = RuleSystem(
    name="wyrm",
    title="WYRM (Warrior, Rogue & Mage)",
    validate_sheet=validate_sheet,
    initial_state=initial_state,
    actions=ACTIONS,
    evolve=evolve,
    odds=_odds,
    preview=_preview,
    events=EVENTS,
    sheet=SHEET,
    example_sheet={
        "attributes": {"warrior": 1, "rogue": 3, "mage": 2},
        "skills": [{"name": "Stealth", "attribute": "rogue"}, {"name": "Awareness", "attribute": "mage"}],
        "fate": 2,
    },
)
