"""WYRM (Warrior, Rogue & Mage): one d6 + attribute (+2 per helping skill) against a DL.

Interpretations of the source text are listed in ``docs/rules.md``.
"""

from ..base import ConditionsRead, Damage, RuleSystem
from ..health import harm_action
from .actions import ACTIONS
from .evolve import EVENTS, evolve
from .odds import odds as _odds, preview as _preview  # keep rules.wyrm.odds the module
from .opposed import CONTESTS, FIGHTS
from .sheet import SHEET, initial_state, quick_sheet, validate_sheet

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
    contests=CONTESTS,
    fights=FIGHTS,
    # A damage roll deals its total, as any generic roll does (docs/rules.md, "Damage that reaches a track").
    damage=Damage({"damage_rolled": "total", "roll": "total"}, harm_action),
    quick_sheet=quick_sheet,
    # A condition's circumstantial modifier on an attribute check's DL (wyrm-srd-rules-mechanics.txt:31).
    conditions=ConditionsRead(frozenset({"check"}), "{signed} to the DL"),
    example_sheet={
        "attributes": {"warrior": 1, "rogue": 3, "mage": 2},
        "skills": [{"name": "Stealth", "attribute": "rogue"}, {"name": "Awareness", "attribute": "mage"}],
        "fate": 2,
    },
)
