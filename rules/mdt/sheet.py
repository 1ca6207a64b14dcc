"""Mundo das Trevas Lite: the character sheet and a new character's state.

The source text names no attributes and gives no ranges, so Talekeeper uses the
classic nine World of Darkness attributes (0..5) and free-text specializations
(1..3). ``options`` carries the campaign's choices where the text is ambiguous;
every option has a default, see ``docs/rules.md``.
"""

from __future__ import annotations

from typing import Any

from ..base import SheetError
from ..declare import Group, Integer, SheetSpec, Text
from ..options import sheet_options
from . import settings
# The dice options (name -> (default, low, high)) are campaign settings; odds.py reads them for raw forms.
from .settings import DICE_OPTIONS as OPTIONS  # noqa: F401

# key -> Portuguese label (the game's own word, for the UI).
ATTRIBUTES: dict[str, str] = {
    "intelligence": "Inteligência",
    "wits": "Raciocínio",
    "resolve": "Determinação",
    "strength": "Força",
    "dexterity": "Destreza",
    "stamina": "Vigor",
    "presence": "Presença",
    "manipulation": "Manipulação",
    "composure": "Autocontrole",
}
ATTRIBUTE_MIN, ATTRIBUTE_MAX = 0, 5
SPECIALIZATION_MIN, SPECIALIZATION_MAX = 1, 3
MAX_SPECIALIZATIONS = 20
MAX_SPECIALIZATION_NAME = 40
MAX_NAME, MAX_CONCEPT = 100, 200

def _text(value: Any, field: str, max_len: int, min_len: int = 0) -> str:
    if not isinstance(value, str):
        raise SheetError(field, f"must be text of {min_len} to {max_len} characters.")
    value = value.strip()
    if not min_len <= len(value) <= max_len:
        raise SheetError(field, f"must be text of {min_len} to {max_len} characters.")
    return value


def clean_specialization_name(value: Any, field: str = "specialization") -> str:
    """A specialization name, stripped; ``SheetError`` unless 1..40 characters of text."""
    return _text(value, field, MAX_SPECIALIZATION_NAME, 1)


def find_specialization(specializations: dict[str, int], name: str) -> str | None:
    """The sheet's spelling of ``name`` (matched case-insensitively), or None."""
    wanted = name.strip().casefold()
    for known in specializations:
        if known.casefold() == wanted:
            return known
    return None


def _specializations(raw: Any) -> dict[str, int]:
    """Specializations are a map of free names to ratings, a shape the declared field kinds
    do not have: its limits are the constants the declaration's help text shows."""
    if not isinstance(raw, dict):
        raise SheetError("specializations", "must be a JSON object {name: rating}.")
    if len(raw) > MAX_SPECIALIZATIONS:
        raise SheetError("specializations", f"allowed range is at most {MAX_SPECIALIZATIONS} specializations.")
    clean: dict[str, int] = {}
    for raw_name, rating in raw.items():
        name = clean_specialization_name(raw_name, f"specializations.{raw_name[:MAX_SPECIALIZATION_NAME]}")
        if find_specialization(clean, name) is not None:
            raise SheetError(f"specializations.{name}", "listed twice (names are compared ignoring case).")
        if isinstance(rating, bool) or not isinstance(rating, int) or not SPECIALIZATION_MIN <= rating <= SPECIALIZATION_MAX:
            raise SheetError(f"specializations.{name}",
                             f"allowed range is a whole number from {SPECIALIZATION_MIN} to {SPECIALIZATION_MAX}.")
        clean[name] = rating
    return clean


def validate_sheet(sheet: Any) -> dict:
    """Check a submitted sheet and return it normalised (options filled in).

    Shapes and ranges are the declaration's (``SHEET`` below), which names the
    field of any wrong type, missing attribute, out-of-range number or unknown key."""
    declared = SHEET.validate({k: v for k, v in sheet.items() if k != "specializations"} if isinstance(sheet, dict)
                              else sheet, extra=("options",))
    options = sheet.get("options", {})
    if not isinstance(options, dict):
        raise SheetError("options", "must be a JSON object.")
    return {
        "name": declared["name"],
        "concept": declared["concept"],
        "attributes": {key: declared["attributes"][key] for key in ATTRIBUTES},
        "specializations": _specializations(sheet.get("specializations", {})),
        "options": sheet_options(settings.OPTIONS, options),
    }


def initial_state(sheet: dict) -> dict:
    """A new character: the validated sheet, no points, no contest, no projects."""
    return {
        "sheet": validate_sheet(sheet),
        "points": {"earned": 0, "spent": 0},
        "contest": None,
        "projects": {},
    }


# What a sheet holds, once: the creation form shows it and ``validate_sheet`` checks with it.

SHEET = SheetSpec({
    "name": Text(MAX_NAME, default="", label="Name"),
    "concept": Text(MAX_CONCEPT, default="", label="Concept"),
    "attributes": Group({a: Integer(ATTRIBUTE_MIN, ATTRIBUTE_MAX, label=label) for a, label in ATTRIBUTES.items()},
                        label="Attributes"),
    "specializations": Group({}, optional=True, label="Specializations",
                             help=f"{{name: {SPECIALIZATION_MIN}..{SPECIALIZATION_MAX}}}, at most "
                                  f"{MAX_SPECIALIZATIONS}, names of 1 to {MAX_SPECIALIZATION_NAME} characters."),
}, help="Nine attributes and a few specializations.")


def quick_sheet(rating: int) -> dict:
    """A quick NPC (rules/npc.py): every attribute at ``rating``, at most the attributes' maximum."""
    return {"attributes": {a: min(rating, ATTRIBUTE_MAX) for a in ATTRIBUTES}}
