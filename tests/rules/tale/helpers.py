"""Small shared helpers for the Tale RPG tests."""

from rules import get_system
from rules.base import Event, ScriptedDice

SYSTEM = get_system("tale")


def sheet(primary="brawn", secondary="wisecrack", skills=None, **chars):
    """A sheet of average (3) characteristics, with the ones given overridden."""
    values = {"brawn": 3, "deft": 3, "clever": 3, "skill": 3, "wisecrack": 3}
    values.update(chars)
    return {"characteristics": values, "primary": primary, "secondary": secondary, "skills": skills or {}}


def state(**kwargs):
    return SYSTEM.initial_state(sheet(**kwargs))


def act(st, action, faces=()):
    """Run an action with scripted faces (all of which must be used); return (events, new state)."""
    dice = ScriptedDice(list(faces))
    events = SYSTEM.decide(st, action, dice)
    assert dice.remaining == [], f"unused scripted faces: {dice.remaining}"
    return events, SYSTEM.replay(st, events)


def with_points(st, points):
    return SYSTEM.evolve(st, Event("award_points", {"points": points, "reason": "test"}))
