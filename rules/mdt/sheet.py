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

SHEET_KEYS = {"name", "concept", "attributes", "specializations", "options"}


def _int(value: Any, field: str, lo: int, hi: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
        raise SheetError(field, f"allowed range is a whole number from {lo} to {hi}.")
    return value


def _text(value: Any, field: str, max_len: int, min_len: int = 0) -> str:
    if not isinstance(value, str):
        raise SheetError(field, f"must be text of {min_len} to {max_len} characters.")
    value = value.strip()
    if not min_len <= len(value) <= max_len:
        raise SheetError(field, f"must be text of {min_len} to {max_len} characters.")
    return value


def _object(value: Any, field: str) -> dict:
    if not isinstance(value, dict) or not all(isinstance(k, str) for k in value):
        raise SheetError(field, "must be a JSON object.")
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


def validate_sheet(sheet: Any) -> dict:
    """Check a submitted sheet and return it normalised (options filled in).

    Raises :class:`SheetError` naming the field and the allowed range for any
    wrong type, missing attribute, out-of-range number or unknown key.
    """
    sheet = _object(sheet, "sheet")
    unknown = set(sheet) - SHEET_KEYS
    if unknown:
        raise SheetError(sorted(unknown)[0], f"unknown field; allowed fields are {', '.join(sorted(SHEET_KEYS))}.")

    attributes = _object(sheet.get("attributes"), "attributes")
    for key in attributes:
        if key not in ATTRIBUTES:
            raise SheetError(f"attributes.{key}", f"unknown attribute; the attributes are {', '.join(ATTRIBUTES)}.")
    clean_attributes = {}
    for key in ATTRIBUTES:
        if key not in attributes:
            raise SheetError(f"attributes.{key}", f"missing; allowed range is {ATTRIBUTE_MIN} to {ATTRIBUTE_MAX}.")
        clean_attributes[key] = _int(attributes[key], f"attributes.{key}", ATTRIBUTE_MIN, ATTRIBUTE_MAX)

    specializations = _object(sheet.get("specializations", {}), "specializations")
    if len(specializations) > MAX_SPECIALIZATIONS:
        raise SheetError("specializations", f"allowed range is at most {MAX_SPECIALIZATIONS} specializations.")
    clean_specs: dict[str, int] = {}
    for raw_name, rating in specializations.items():
        name = clean_specialization_name(raw_name, f"specializations.{raw_name[:MAX_SPECIALIZATION_NAME]}")
        if find_specialization(clean_specs, name) is not None:
            raise SheetError(f"specializations.{name}", "listed twice (names are compared ignoring case).")
        clean_specs[name] = _int(rating, f"specializations.{name}", SPECIALIZATION_MIN, SPECIALIZATION_MAX)

    clean_options = sheet_options(settings.OPTIONS, _object(sheet.get("options", {}), "options"))

    return {
        "name": _text(sheet.get("name", ""), "name", MAX_NAME),
        "concept": _text(sheet.get("concept", ""), "concept", MAX_CONCEPT),
        "attributes": clean_attributes,
        "specializations": clean_specs,
        "options": clean_options,
    }


def initial_state(sheet: dict) -> dict:
    """A new character: the validated sheet, no points, no contest, no projects."""
    return {
        "sheet": validate_sheet(sheet),
        "points": {"earned": 0, "spent": 0},
        "contest": None,
        "projects": {},
    }


# What a new character's form shows (rules/declare.py); ``validate_sheet`` above is the check.

SHEET = SheetSpec({
    "name": Text(MAX_NAME, optional=True, label="Name"),
    "concept": Text(MAX_CONCEPT, optional=True, label="Concept"),
    "attributes": Group({a: Integer(ATTRIBUTE_MIN, ATTRIBUTE_MAX, label=label) for a, label in ATTRIBUTES.items()},
                        label="Attributes"),
    "specializations": Group({}, optional=True, label="Specializations",
                             help=f"{{name: {SPECIALIZATION_MIN}..{SPECIALIZATION_MAX}}}, at most "
                                  f"{MAX_SPECIALIZATIONS}, names of 1 to {MAX_SPECIALIZATION_NAME} characters."),
}, help="Nine attributes and a few specializations.")
