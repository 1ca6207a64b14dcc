"""Tale RPG character sheets: the schema, validation and the starting state.

A sheet (normalised form, as stored under ``state["sheet"]``)::

    {
      "characteristics": {"brawn": 3, "deft": 3, "clever": 3, "skill": 3, "wisecrack": 3},
      "primary": "brawn",
      "secondary": "wisecrack",
      "skills": {"Ride": {"characteristics": ["deft", "brawn"], "dice": 1}},
      "archetype": "barbarian"
    }

The five characteristics are the ones the text names (an average value is 3).
A skill is two characteristics plus its bought dice ("Ride: +1D"). The text's
list of skills is cut off; the three skills it does name come with their
characteristics (``DEFAULT_SKILLS``) and every other skill names its own pair.
"""

from __future__ import annotations

import copy
from typing import Any

from ..base import RuleError, SheetError
from ..declare import Choice, Group, Integer, SheetSpec, Text
from ..options import sheet_options
from . import settings

CHARACTERISTICS = ("brawn", "deft", "clever", "skill", "wisecrack")
AVERAGE = 3
CHARACTERISTIC_MIN, CHARACTERISTIC_MAX = 1, 10
SKILL_DICE_MAX = 10
MAX_SKILLS = 50
MAX_NAME = 40
MAX_ARCHETYPE = 60

# The skills whose characteristics the text gives (jumping, hiding, spotting).
DEFAULT_SKILLS = {
    "Jump": ("deft", "skill"),
    "Hide": ("clever", "deft"),
    "Spot Hidden": ("clever", "skill"),
}

def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _characteristic_name(value: Any, field: str) -> str:
    if not isinstance(value, str) or value.strip().lower() not in CHARACTERISTICS:
        raise SheetError(field, f"allowed values: {', '.join(CHARACTERISTICS)}")
    return value.strip().lower()


def skill_name(value: Any, field: str = "skill") -> str:
    """A skill name, trimmed; 1 to 40 characters. Raises :class:`RuleError`."""
    if not isinstance(value, str) or not 1 <= len(value.strip()) <= MAX_NAME:
        raise RuleError(f"'{field}' must be a skill name of 1 to {MAX_NAME} characters.", "invalid")
    return " ".join(value.split())


def find_skill(names, name: str) -> str | None:
    """The spelling of ``name`` among ``names``, ignoring case; ``None`` if absent."""
    for known in names:
        if known.lower() == name.lower():
            return known
    return None


def _skill(name: str, value: Any) -> dict:
    """Normalise one skill entry: ``2`` (a default skill) or ``{"characteristics": [a, b], "dice": 2}``."""
    field = f"skills.{name}"
    default = find_skill(DEFAULT_SKILLS, name)
    if _is_int(value):
        value = {"dice": value}
    if not isinstance(value, dict):
        raise SheetError(field, "allowed: a number of dice 0..10, or {\"characteristics\": [two of "
                         f"{', '.join(CHARACTERISTICS)}], \"dice\": 0..10}}")
    unknown = set(value) - {"characteristics", "dice"}
    if unknown:
        raise SheetError(field, f"unknown keys {sorted(map(str, unknown))}; allowed: characteristics, dice")
    dice = value.get("dice", 0)
    if not _is_int(dice) or not 0 <= dice <= SKILL_DICE_MAX:
        raise SheetError(f"{field}.dice", f"allowed range 0..{SKILL_DICE_MAX}")
    pair = value.get("characteristics")
    if pair is None:
        if default is None:
            raise SheetError(f"{field}.characteristics", "required for a skill the rules do not list: two of "
                             + ", ".join(CHARACTERISTICS))
        pair = list(DEFAULT_SKILLS[default])
    if not isinstance(pair, list) or len(pair) != 2:
        raise SheetError(f"{field}.characteristics", "allowed: a list of two different characteristics")
    pair = [_characteristic_name(c, f"{field}.characteristics") for c in pair]
    if pair[0] == pair[1]:
        raise SheetError(f"{field}.characteristics", "allowed: two *different* characteristics")
    return {"characteristics": pair, "dice": dice}


def _skills(raw: Any) -> dict[str, dict]:
    """Skills are a map of free names to dice (or a pair and dice), a shape the declared field
    kinds do not have: its limits are the constants the declaration's help text shows."""
    if not isinstance(raw, dict) or len(raw) > MAX_SKILLS:
        raise SheetError("skills", f"allowed: an object of at most {MAX_SKILLS} skills")
    skills: dict[str, dict] = {}
    for raw_name, value in raw.items():
        try:
            name = skill_name(raw_name)
        except RuleError:
            raise SheetError("skills", f"skill names must be 1 to {MAX_NAME} characters") from None
        if find_skill(skills, name):
            raise SheetError(f"skills.{name}", "listed twice")
        skills[name] = _skill(name, value)
    return skills


def validate_sheet(sheet: Any) -> dict:
    """Check a submitted sheet and return it normalised; :class:`SheetError` names the bad field.

    Shapes and ranges are the declaration's (``SHEET`` below); here only the primary and
    secondary differing, and the skills map."""
    declared = SHEET.validate({k: v for k, v in sheet.items() if k != "skills"} if isinstance(sheet, dict)
                              else sheet, extra=("options",))
    if declared["primary"] == declared["secondary"]:
        raise SheetError("secondary", "must differ from the primary characteristic")
    clean = {"characteristics": {c: declared["characteristics"][c] for c in CHARACTERISTICS},
             "primary": declared["primary"], "secondary": declared["secondary"],
             "skills": _skills(sheet.get("skills", {})), "archetype": declared["archetype"]}
    if sheet.get("options") is not None:
        # Only campaign settings put options in a Tale sheet; older sheets have none (defaults apply).
        clean["options"] = sheet_options(settings.OPTIONS, sheet["options"])
    return clean


def initial_state(sheet: dict) -> dict:
    """The state of a new character: no points, no damage, no contest running."""
    sheet = validate_sheet(sheet)
    return {
        "sheet": copy.deepcopy(sheet),
        "points": {"earned": 0, "spent": 0},
        "damage": {name: 0 for name in CHARACTERISTICS},  # dice lost per characteristic
        "unassigned_damage": 0,  # dice taken but not yet spread over primary/skill
        "contest": None,
    }


# --- reading a character's current dice ---------------------------------------------------------

def current(state: dict, name: str) -> int:
    """A characteristic's dice now: the rating less the damage on it (never below 0)."""
    return max(0, state["sheet"]["characteristics"][name] - state["damage"].get(name, 0))


def damage_targets(state: dict) -> list[str]:
    """Where damage goes: the primary characteristic and Skill (the text's 'skill and the primary')."""
    primary = state["sheet"]["primary"]
    return [primary] if primary == "skill" else [primary, "skill"]


def damage_room(state: dict) -> int:
    """How many more dice of damage the primary characteristic and Skill can still take."""
    return max(0, sum(current(state, c) for c in damage_targets(state)) - state["unassigned_damage"])


def read_pair(chosen: Any) -> list[str]:
    """An action's ``characteristics``: two different characteristic names. Raises :class:`RuleError`."""
    if not isinstance(chosen, list) or len(chosen) != 2:
        raise RuleError(f"'characteristics' must be a list of two of {', '.join(CHARACTERISTICS)}.", "invalid")
    try:
        pair = [_characteristic_name(c, "characteristics") for c in chosen]
    except SheetError:
        raise RuleError(f"'characteristics' must name two of {', '.join(CHARACTERISTICS)}.", "invalid") from None
    if pair[0] == pair[1]:
        raise RuleError("'characteristics' must name two different characteristics.", "invalid")
    return pair


def skill_pool(state: dict, action: dict) -> dict:
    """The dice pool an action rolls, from ``skill`` or ``characteristics`` in the action.

    Returns ``{"pool", "characteristics", "skill", "skill_dice", "defaulted"}``. A skill on the
    sheet or among the text's skills uses its pair; an unknown skill, or none, defaults to the
    primary + secondary characteristics as the text says. Raises :class:`RuleError`.
    """
    sheet = state["sheet"]
    pair = None
    skill = action.get("skill")
    dice = 0
    defaulted = False
    if skill is not None:
        skill = skill_name(skill)
        on_sheet = find_skill(sheet["skills"], skill)
        default = find_skill(DEFAULT_SKILLS, skill)
        if on_sheet:
            skill = on_sheet
            pair, dice = sheet["skills"][on_sheet]["characteristics"], sheet["skills"][on_sheet]["dice"]
        elif default:
            skill, pair = default, list(DEFAULT_SKILLS[default])
    if pair is None and action.get("characteristics") is not None:
        pair = read_pair(action["characteristics"])
    if pair is None:
        pair, defaulted = [sheet["primary"], sheet["secondary"]], True
    pool = current(state, pair[0]) + current(state, pair[1]) + dice
    return {"pool": pool, "characteristics": list(pair), "skill": skill, "skill_dice": dice, "defaulted": defaulted}


# What a new character's form shows (rules/declare.py); ``validate_sheet`` above is the check.
# Characteristics are labelled as the sheet says them ("Brawn"); the values stay the stored words.
NAMED_CHARACTERISTICS = [(c, c.capitalize()) for c in CHARACTERISTICS]

SHEET = SheetSpec({
    "characteristics": Group({c: Integer(CHARACTERISTIC_MIN, CHARACTERISTIC_MAX, label=c.capitalize())
                              for c in CHARACTERISTICS}, label="Characteristics", help="An average value is 3."),
    "primary": Choice(NAMED_CHARACTERISTICS, label="Primary characteristic"),
    "secondary": Choice(NAMED_CHARACTERISTICS, label="Secondary characteristic"),
    "skills": Group({}, optional=True, label="Skills",
                    help=f"{{name: {{\"characteristics\": [two of {', '.join(CHARACTERISTICS)}], \"dice\": "
                         f"0..{SKILL_DICE_MAX}}}}}, at most {MAX_SKILLS}; Jump, Hide and Spot Hidden take just their "
                         "dice."),
    "archetype": Text(MAX_ARCHETYPE, default="", label="Archetype"),
}, help="Five characteristics, a primary and a secondary, skills bought in dice.")


def ready_to_roll(state: dict) -> None:
    """Pools are only right once combat damage sits on the characteristics it was spread over: a roll,
    a contest, a rest, a purchase and their previews are refused until it does."""
    if state["unassigned_damage"]:
        raise RuleError(f"Spread your {state['unassigned_damage']}D of damage over "
                        f"{' and '.join(damage_targets(state))} first (assign_damage).")


def quick_sheet(rating: int) -> dict:
    """A quick NPC (rules/npc.py): every characteristic at ``rating``; Brawn primary, Deft secondary."""
    return {"characteristics": {c: rating for c in CHARACTERISTICS}, "primary": "brawn", "secondary": "deft"}
