"""Shared helpers for the WYRM tests: a character factory and a one-step player."""


from rules import get_system
from rules.base import ScriptedDice

WYRM = get_system("wyrm")

THIEF = {
    "name": "Mira the thief",
    "attributes": {"warrior": 1, "rogue": 3, "mage": 2},
    "skills": [
        {"name": "Stealth", "attribute": "rogue"},
        {"name": "Climbing", "attribute": "rogue"},
        {"name": "Swords", "attribute": "warrior"},
    ],
    "fate": 2,
}


def make(sheet=None, **changes):
    """A new character from ``THIEF`` with top-level sheet fields replaced."""
    sheet = dict(THIEF if sheet is None else sheet)
    sheet.update(changes)
    return WYRM.initial_state(WYRM.validate_sheet(sheet))


def play(state, action, faces=()):
    """Decide ``action`` with exactly ``faces`` (all must be used); return (events, new state)."""
    dice = ScriptedDice(faces)
    events = WYRM.decide(state, action, dice)
    assert dice.remaining == [], f"dice scripted but not rolled: {dice.remaining}"
    return events, WYRM.replay(state, events)


