"""Quick NPCs: a valid sheet of any system from a template or one number.

The GM makes an opponent in seconds (``"quick": {"template": "veteran"}`` or
``{"rating": 4}``) and adjusts it later (``adjust_sheet``) if it matters. A
rating is the character's typical number in the system's own scale, clamped
to what the sheet allows; every trait gets it. Each system says what that
sheet is (its ``quick_sheet`` hook, in its sheet.py).
"""

from __future__ import annotations

from typing import Any

from .base import RuleError, RuleSystem, require_int

# Template -> rating: a nobody, a capable fighter, the villain.
TEMPLATES = {"minion": 1, "veteran": 3, "boss": 5}
MAX_RATING = 10


def read_quick(quick: Any) -> int:
    """The rating a ``quick`` object asks for. Raises :class:`RuleError`."""
    if not isinstance(quick, dict) or len(quick) != 1 or not ({"template", "rating"} & set(quick)):
        raise RuleError("'quick' must be {\"template\": one of " + ", ".join(TEMPLATES)
                        + "} or {\"rating\": 1..10}.", "invalid")
    if "template" in quick:
        if not isinstance(quick["template"], str) or quick["template"] not in TEMPLATES:
            raise RuleError(f"'quick.template' must be one of: {', '.join(TEMPLATES)}.", "invalid")
        return TEMPLATES[quick["template"]]
    return require_int(quick, "rating", 1, MAX_RATING)


def quick_sheet(system: RuleSystem | str, quick: Any) -> dict:
    """A sheet of ``system`` (a rule system, or its name) whose every trait is the rating ``quick``
    asks for (clamped to its range)."""
    if isinstance(system, str):
        from . import get_system

        system = get_system(system)
    rating = read_quick(quick)
    if system.quick_sheet is None:
        raise RuleError(f"No quick NPCs for '{system.name}'.", "invalid")
    return system.quick_sheet(rating)
