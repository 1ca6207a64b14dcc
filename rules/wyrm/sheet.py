"""WYRM character sheets: schema, validation and a new character's state.

A sheet, as a person submits it (only ``attributes`` is required)::

    {
      "name": "Mira",                                   # optional, 1..80 characters
      "attributes": {"warrior": 1, "rogue": 3, "mage": 2},
      "skills": [{"name": "Stealth", "attribute": "rogue"}],
      "fate": 2,                                        # starting Fate points, 0..99
      "options": {                                      # campaign settings, all optional
        "second_skill_bonus": false,   # +2 more for a second relevant skill, always
        "ties_succeed": true,          # a total equal to the DL succeeds
        "attribute_max": 6,            # highest attribute rating, 1..10
        "advance_costs": {"attribute": 10, "skill": 5}
      }
    }

``validate_sheet`` returns the sheet with every default filled in and every
name normalised (attribute keys lower case, skill names stripped).
"""

from __future__ import annotations

from typing import Any, Mapping

from ..base import RuleError, SheetError
from ..declare import Choice, Group, Integer, ListOf, SheetSpec, Text
from ..options import defaults, sheet_options
from . import settings
from .settings import ATTRIBUTE_HARD_MAX, MAX_COST  # noqa: F401  (the hard bounds, with the options)

ATTRIBUTES = ("warrior", "rogue", "mage")

DEFAULT_ATTRIBUTE_MAX = 6
MAX_SKILLS = 30
MAX_NAME = 80
MAX_TEXT = 500
MAX_FATE = 99
MAX_POINTS = 1_000_000

DEFAULT_OPTIONS = defaults(settings.OPTIONS)


# --- small readers shared by the sheet, the actions and the odds ------------


def is_int(value: Any) -> bool:
    """True for a JSON whole number (``bool`` is not one)."""
    return isinstance(value, int) and not isinstance(value, bool)


def parse_attribute(value: Any, field: str = "attribute") -> str:
    """Read an attribute name ("Warrior", "rogue", ...) and return it in lower case."""
    if isinstance(value, str) and value.strip().lower() in ATTRIBUTES:
        return value.strip().lower()
    raise RuleError(f"'{field}' must be one of Warrior, Rogue or Mage.", "invalid")


def read_text(mapping: Mapping, key: str, limit: int = MAX_TEXT, required: bool = False) -> str | None:
    """Read an optional (or required) free-text field of at most ``limit`` characters."""
    value = mapping.get(key)
    if value is None and not required:
        return None
    if not isinstance(value, str) or not value.strip():
        raise RuleError(f"'{key}' must be some text.", "invalid")
    if len(value) > limit:
        raise RuleError(f"'{key}' must be at most {limit} characters.", "invalid")
    return value.strip()


def read_bool(mapping: Mapping, key: str, default: bool = False) -> bool:
    """Read an optional true/false field."""
    value = mapping.get(key, default)
    if not isinstance(value, bool):
        raise RuleError(f"'{key}' must be true or false.", "invalid")
    return value


def find_skill(skills: list[dict], name: Any) -> dict | None:
    """The skill called ``name`` (case-insensitive) in ``skills``, or None."""
    if not isinstance(name, str):
        return None
    wanted = name.strip().casefold()
    for skill in skills:
        if skill["name"].casefold() == wanted:
            return skill
    return None


# --- the sheet ---------------------------------------------------------------


def _attribute_keys(raw: Any) -> Any:
    """The attributes object with its keys read as attribute names ("Warrior" is warrior)."""
    if not isinstance(raw, dict):
        return raw  # the declaration refuses it
    attributes: dict[str, Any] = {}
    for key, value in raw.items():
        try:
            name = parse_attribute(key)
        except RuleError:
            raise SheetError(f"attributes.{key}", "unknown attribute; allowed: warrior, rogue, mage.") from None
        if name in attributes:
            raise SheetError(f"attributes.{name}", "is given twice.")
        attributes[name] = value
    return attributes


def validate_sheet(sheet: Any) -> dict:
    """Check a submitted sheet; return it normalised or raise :class:`SheetError`.

    Shapes and ranges are the declaration's (``SHEET`` below); here only what
    depends on other fields: the campaign's attribute ceiling, skills named twice."""
    if isinstance(sheet, dict) and "attributes" in sheet:
        sheet = {**sheet, "attributes": _attribute_keys(sheet["attributes"])}
    clean = SHEET.validate(sheet, extra=("options",))
    options = sheet_options(settings.OPTIONS, sheet.get("options"))
    top = options["attribute_max"]
    for name, value in clean["attributes"].items():
        if value > top:
            raise SheetError(f"attributes.{name}", f"allowed range is a whole number from 0 to {top}"
                             " (the campaign's highest attribute).")
    skills: list[dict] = []
    for i, skill in enumerate(clean["skills"]):
        if find_skill(skills, skill["name"]):
            raise SheetError(f"skills[{i}].name", f"the skill '{skill['name']}' is listed twice.")
        skills.append(skill)
    result: dict[str, Any] = {"attributes": {a: clean["attributes"][a] for a in ATTRIBUTES}, "skills": skills,
                              "fate": clean["fate"], "options": options}
    if clean["name"] is not None:
        result["name"] = clean["name"]
    return result


def initial_state(sheet: dict) -> dict:
    """A new character: current ratings and Fate copied from the (validated) sheet.

    ``sheet`` keeps what the player submitted; ``attributes``, ``skills`` and
    ``fate`` are the live values that advances and Fate spending change.
    """
    sheet = validate_sheet(sheet)
    return {
        "sheet": sheet,
        "attributes": dict(sheet["attributes"]),
        "skills": [dict(s) for s in sheet["skills"]],
        "fate": sheet["fate"],
        "points": {"earned": 0, "spent": 0},
        "rolls": 0,  # how many rolls this character has made; numbers each roll
        "last_roll": None,  # the roll a Fate reroll or +2 applies to
        "pending_fate": None,  # a Fate spend waiting for the GM's approval
    }


# What a sheet holds, once: the creation form shows it and ``validate_sheet`` checks with it.

SHEET = SheetSpec({
    "name": Text(MAX_NAME, optional=True, label="Name"),
    "attributes": Group({a: Integer(0, ATTRIBUTE_HARD_MAX, label=a.title(),
                                    help=f"0 to the campaign's highest attribute ({DEFAULT_OPTIONS['attribute_max']} "
                                         "unless the GM changed it).") for a in ATTRIBUTES}, label="Attributes"),
    "skills": ListOf(Group({"name": Text(MAX_NAME, label="Skill"),
                            "attribute": Choice([(a, a.title()) for a in ATTRIBUTES], label="Attribute")}),
                     MAX_SKILLS, default=[], label="Skills", help="Each skill helps checks of its attribute."),
    "fate": Integer(0, MAX_FATE, default=0, label="Fate points"),
}, help="Three attributes (usually 0 to 6), any skills, and starting Fate.")


def quick_sheet(rating: int) -> dict:
    """A quick NPC (rules/npc.py): every attribute at ``rating``, at most the default ceiling."""
    return {"attributes": {a: min(rating, DEFAULT_ATTRIBUTE_MAX) for a in ATTRIBUTES}}
