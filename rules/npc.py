"""Quick NPCs: a valid sheet of any system from a template or one number.

The GM makes an opponent in seconds (``"quick": {"template": "veteran"}`` or
``{"rating": 4}``) and adjusts it later (``adjust_sheet``) if it matters. A
rating is the character's typical number in the system's own scale, clamped
to what the sheet allows; every trait gets it.
"""

from __future__ import annotations

from typing import Any

from .base import RuleError, require_int

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


def quick_sheet(system: str, quick: Any) -> dict:
    """A sheet of ``system`` whose every trait is the rating ``quick`` asks for (clamped to its range)."""
    rating = read_quick(quick)
    if system == "tote":
        from .tote.sheet import DEFAULT_GRID, TOTEMS
        skills = {name: min(rating, 5) for row in DEFAULT_GRID["skills"] for name in row}
        return {"skills": skills, "totems": {t: min(max(rating - 1, 1), 5) for t in TOTEMS}}
    if system == "wyrm":
        return {"attributes": {a: min(rating, 6) for a in ("warrior", "rogue", "mage")}}
    if system == "tale":
        from .tale.sheet import CHARACTERISTICS
        return {"characteristics": {c: rating for c in CHARACTERISTICS}, "primary": "brawn", "secondary": "deft"}
    if system == "mdt":
        from .mdt.sheet import ATTRIBUTES
        return {"attributes": {a: min(rating, 5) for a in ATTRIBUTES}}
    raise RuleError(f"No quick NPCs for '{system}'.", "invalid")
