"""Tales from the Torn Earth (TOTE), basic rules v1.1.

Skill tests roll one d6 per skill rating, select the best die the injury track
allows, add the Paragon d6 and bonuses, and compare with a target number.
Interpretations of the text are in ``docs/rules.md``.
"""

from ..base import ConditionsRead, RuleSystem
from .actions import ACTIONS, advances, odds, preview
from .evolve import EVENTS, evolve
from .sheet import SHEET, initial_state, quick_sheet, validate_sheet

SYSTEM = RuleSystem(
    name="tote",
    title="Tales from the Torn Earth",
    validate_sheet=validate_sheet,
    initial_state=initial_state,
    actions=ACTIONS,
    evolve=evolve,
    odds=odds,
    preview=preview,
    events=EVENTS,
    advances=advances,
    sheet=SHEET,
    # No contests or fights: the text has no opposed test. No roll applies as damage (apply_damage).
    quick_sheet=quick_sheet,
    # A condition's bonus or penalty on a skill test's total (tote-basic-rules-v1.1.txt:8).
    conditions=ConditionsRead(frozenset({"skill_test"}), "{signed} to the total"),
    example_sheet={
        # Each row and column of the default grid sums to 4, no skill above 2.
        "skills": {
            "Strike": 2, "Sneak": 1, "Shoot": 1, "Grapple": 0,
            "Move": 1, "Hunt": 2, "Journey": 0, "Survive": 1,
            "Craft": 1, "Know": 0, "Guide": 2, "Heal": 1,
            "Command": 0, "Bargain": 1, "Judge": 1, "Persuade": 2,
        },
        "aspect": "Sworn to the old roads",
    },
)
