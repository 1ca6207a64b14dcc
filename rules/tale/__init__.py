"""Tale RPG: pools of d6 summed; straight rolls, iterated resolution with the sorted
elimination, hiding, combat with attack/defence portions, damage, recovery and advancement.

Interpretations of the source text are in ``docs/rules.md``.
"""

from dataclasses import replace

from ..base import ConditionsRead, Damage, RuleSystem
from .actions import ACTIONS, advances
from .evolve import EVENTS, evolve
from .odds import MAX_POOL, odds, preview
from .opposed import CONTESTS, FIGHTS
from .settings import with_settings
from .sheet import SHEET, initial_state, quick_sheet, validate_sheet


def _settled(fn):
    """An action (or preview), validated by its declaration, with the campaign's settings
    as the defaults of the fields it leaves out."""
    def settled(state, action, *rest):
        return fn(state, with_settings(state, action), *rest)
    settled.__name__, settled.__doc__ = fn.__name__, fn.__doc__
    return settled


def _take_damage(amount: int, reason: str) -> dict:
    """A roll's damage, taken outside combat as dice to spread."""
    return {"type": "take_damage", "dice": min(amount, MAX_POOL), "reason": reason}


SYSTEM = RuleSystem(
    name="tale",
    title="Tale RPG",
    validate_sheet=validate_sheet,
    initial_state=initial_state,
    actions={kind: replace(spec, decide=_settled(spec.decide)) for kind, spec in ACTIONS.items()},
    evolve=evolve,
    odds=odds,
    preview=_settled(preview),
    events=EVENTS,
    advances=advances,
    sheet=SHEET,
    contests=CONTESTS,
    fights=FIGHTS,
    # A generic roll deals its total (docs/rules.md, "Damage that reaches a track").
    damage=Damage({"roll": "total"}, _take_damage),
    quick_sheet=quick_sheet,
    # A condition's penalty dice in a combat or iterated round (tale-rpg.txt:9, 64-66).
    conditions=ConditionsRead(frozenset({"combat_round", "iterated_round"}), "{n} penalty {dice}"),
    example_sheet={
        "characteristics": {"brawn": 4, "deft": 3, "clever": 3, "skill": 3, "wisecrack": 2},
        "primary": "brawn",
        "secondary": "skill",
        "skills": {"Ride": {"characteristics": ["deft", "brawn"], "dice": 1}},
        "archetype": "barbarian",
    },
)
