"""TOTE character sheet: the schema, its validation, and a new character's state.

A sheet is a JSON object::

    {
      "name": "Ayasha",                        # optional text
      "skills": {"Strike": 1, ...},            # all 16 skills of the grid, 0..5
      "totems": {"Bear": 1, ...},              # optional, 1..5, missing totems are 1
      "specializations": {"Hunt": [{"name": "Tracking", "bonus": 1}]},  # <= 3 per skill
      "resolve": 3,                            # optional starting Resolve, 0..resolve_max
      "aspect": "Never leaves a friend behind",  # optional text
      "grid": {...},                           # optional campaign grid, see DEFAULT_GRID
      "options": {...}                         # optional campaign options, see DEFAULT_OPTIONS
    }

``validate_sheet`` returns it normalised: every key present, names spelt as the
grid spells them, every skill listed under ``specializations``.
"""

from __future__ import annotations

import copy
from functools import lru_cache
from typing import Any

from ..base import SheetError
from ..declare import Group, Integer, ListOf, SheetSpec, Text
from ..options import defaults, sheet_options
from . import settings
from .settings import INJURY_TRACK_MAX, RESOLVE_MAX_LIMIT  # noqa: F401  (bounds of the options)

TOTEMS = ("Bear", "Bison", "Coyote", "Hawk", "Owl", "Stag", "Turtle", "Wolf")

# The real placement is not public (docs/rules.md). Rows are what a hero
# does (fight, wander, think, deal with people); columns are how (force,
# cunning, keen eyes, patience). Persuade sits under Stag and Turtle as the
# wiki says. Heal and Command are invented to fill the 16.
DEFAULT_GRID = {
    "rows": ["Wolf", "Bison", "Owl", "Stag"],
    "columns": ["Bear", "Coyote", "Hawk", "Turtle"],
    "skills": [
        ["Strike", "Sneak", "Shoot", "Grapple"],
        ["Move", "Hunt", "Journey", "Survive"],
        ["Craft", "Know", "Guide", "Heal"],
        ["Command", "Bargain", "Judge", "Persuade"],
    ],
}

DEFAULT_OPTIONS = defaults(settings.OPTIONS)

SKILL_MAX = 5
TOTEM_MIN, TOTEM_MAX = 1, 5
SPEC_BONUS_MAX = 5
SPECS_PER_SKILL = 3
DEFAULT_RESOLVE = 3
CREATION_SKILL_MAX = 2
CREATION_LINE_SUM = 4
NAME_MAX = 60
TEXT_MAX = 200

# --- small checkers -------------------------------------------------------


def show(value: Any) -> str:
    """A short, safe rendering of user input for error messages.

    Never ``str()`` a huge int: Python refuses ints over 4300 digits.
    """
    if isinstance(value, bool) or value is None:
        return repr(value)
    if isinstance(value, int):
        return str(value) if abs(value) < 10**12 else "a huge number"
    if isinstance(value, str):
        return repr(value[:40] + ("..." if len(value) > 40 else ""))
    return f"a {type(value).__name__}"


def check_int(value: Any, field: str, lo: int, hi: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise SheetError(field, f"must be a whole number, allowed range {lo}..{hi}, not {show(value)}")
    if not lo <= value <= hi:
        raise SheetError(field, f"allowed range {lo}..{hi}, not {show(value)}")
    return value


def check_text(value: Any, field: str, max_len: int, *, optional: bool = False) -> str | None:
    if value is None and optional:
        return None
    if not isinstance(value, str):
        raise SheetError(field, f"must be text of at most {max_len} characters")
    value = value.strip()
    if len(value) > max_len:
        raise SheetError(field, f"must be at most {max_len} characters")
    if not value:
        if optional:
            return None
        raise SheetError(field, "must not be empty")
    return value


def check_object(value: Any, field: str, allowed: set[str] | None = None) -> dict:
    if not isinstance(value, dict):
        raise SheetError(field, "must be a JSON object")
    if allowed is not None:
        for key in value:
            if key not in allowed:
                raise SheetError(field, f"unknown key {show(key)}; allowed: {', '.join(sorted(allowed))}")
    return value


def find_name(names, wanted: Any) -> str | None:
    """The canonical spelling of ``wanted`` among ``names`` (case-insensitive), or None."""
    if not isinstance(wanted, str):
        return None
    key = wanted.strip().casefold()
    for name in names:
        if name.casefold() == key:
            return name
    return None


# --- the grid ----------------------------------------------------------------


def grid_skills(grid: dict) -> list[str]:
    """The 16 skill names, row by row."""
    return [name for row in grid["skills"] for name in row]


def skill_position(grid: dict, skill: str) -> tuple[int, int]:
    """``(row, column)`` of a canonical skill name."""
    for r, row in enumerate(grid["skills"]):
        if skill in row:
            return r, row.index(skill)
    raise KeyError(skill)


def skill_totems(grid: dict, skill: str) -> tuple[str, str]:
    """A skill's two totems: its row's and its column's."""
    r, c = skill_position(grid, skill)
    return grid["rows"][r], grid["columns"][c]


def _grid(raw: Any) -> dict:
    if raw is None:
        return copy.deepcopy(DEFAULT_GRID)
    check_object(raw, "grid", {"rows", "columns", "skills"})
    lines = []
    for key in ("rows", "columns"):
        value = raw.get(key)
        if not isinstance(value, list) or len(value) != 4:
            raise SheetError(f"grid.{key}", "must be a list of 4 totems")
        for i, totem in enumerate(value):
            name = find_name(TOTEMS, totem)
            if name is None:
                raise SheetError(f"grid.{key}[{i}]", f"must be one of {', '.join(TOTEMS)}")
            lines.append(name)
    if len(set(lines)) != 8:
        raise SheetError("grid", "the 4 rows and 4 columns must use each of the eight totems exactly once")
    skills = raw.get("skills")
    if not isinstance(skills, list) or len(skills) != 4:
        raise SheetError("grid.skills", "must be 4 rows of 4 skill names")
    rows = []
    for r, row in enumerate(skills):
        if not isinstance(row, list) or len(row) != 4:
            raise SheetError(f"grid.skills[{r}]", "must be a row of 4 skill names")
        rows.append([check_text(name, f"grid.skills[{r}][{c}]", 30) for c, name in enumerate(row)])
    flat = [name.casefold() for row in rows for name in row]
    if len(set(flat)) != 16:
        raise SheetError("grid.skills", "the 16 skill names must all differ")
    return {"rows": lines[:4], "columns": lines[4:], "skills": rows}


# --- options -------------------------------------------------------------------


def _options(raw: Any) -> dict:
    return sheet_options(settings.OPTIONS, raw)


# --- the sheet ---------------------------------------------------------------------


def _canonical_keys(raw: Any, names: list[str], field: str) -> Any:
    """``raw`` with its keys spelt as in ``names`` (matched without regard to case); a key
    given twice is refused, an unknown one left for the declaration to name."""
    if not isinstance(raw, dict):
        return raw  # the declaration refuses it
    out: dict = {}
    for key, value in raw.items():
        name = find_name(names, key) or key
        if name in out:
            raise SheetError(f"{field}.{name}", "is given twice")
        out[name] = value
    return out


def _spec_names_differ(specs: dict) -> None:
    for skill, entries in specs.items():
        for i, entry in enumerate(entries):
            if find_name([s["name"] for s in entries[:i]], entry["name"]):
                raise SheetError(f"specializations.{skill}[{i}]",
                                 f"{skill} already has a specialization called {show(entry['name'])}")


def _creation_rules(skills: dict, totems: dict, grid: dict) -> None:
    """Character creation: skills at most 2, each row and column sums to 4, totems at 1."""
    for name, rating in skills.items():
        if rating > CREATION_SKILL_MAX:
            raise SheetError(f"skills.{name}", f"allowed range 0..{CREATION_SKILL_MAX} at character creation")
    for r, row in enumerate(grid["skills"]):
        total = sum(skills[n] for n in row)
        if total != CREATION_LINE_SUM:
            raise SheetError("skills", f"the {grid['rows'][r]} row ({', '.join(row)}) must sum to {CREATION_LINE_SUM} at character creation, not {total}")
    for c, totem in enumerate(grid["columns"]):
        column = [row[c] for row in grid["skills"]]
        total = sum(skills[n] for n in column)
        if total != CREATION_LINE_SUM:
            raise SheetError("skills", f"the {totem} column ({', '.join(column)}) must sum to {CREATION_LINE_SUM} at character creation, not {total}")
    for totem, value in totems.items():
        if value != TOTEM_MIN:
            raise SheetError(f"totems.{totem}", f"totems start at {TOTEM_MIN} at character creation")


def validate_sheet(sheet: Any, *, creation: bool = True) -> dict:
    """Check a sheet and return it normalised; raise :class:`SheetError` otherwise.

    ``creation=True`` (the default, what the platform calls for a submitted
    character) also enforces the creation rules: skills at most 2, each row and
    column summing to 4, every totem at 1. ``creation=False`` checks only the
    ranges, for a hero who has advanced (imported characters, replayed states).
    Idempotent: a normalised sheet validates to itself.
    """
    if not isinstance(sheet, dict):
        raise SheetError("sheet", "must be a JSON object")
    options = _options(sheet.get("options"))
    grid = _grid(sheet.get("grid"))
    names = grid_skills(grid)
    given = {**sheet, **{key: _canonical_keys(sheet[key], names if key != "totems" else list(TOTEMS), key)
                         for key in ("skills", "totems", "specializations") if key in sheet}}
    declared = sheet_spec(tuple(names)).validate(given, extra=("grid", "options"))
    skills = declared["skills"]
    totems = declared["totems"] or {t: TOTEM_MIN for t in TOTEMS}
    specs = {n: list((declared["specializations"] or {}).get(n) or []) for n in names}
    _spec_names_differ(specs)
    resolve = declared["resolve"]
    resolve = check_int(min(DEFAULT_RESOLVE, options["resolve_max"]) if resolve is None else resolve, "resolve", 0, options["resolve_max"])
    if creation:
        _creation_rules(skills, totems, grid)
    return {
        "name": declared["name"],
        "skills": {n: skills[n] for n in names},
        "totems": {t: totems[t] for t in TOTEMS},
        "specializations": specs,
        "resolve": resolve,
        "aspect": declared["aspect"],
        "grid": grid,
        "options": options,
    }


def initial_state(sheet: Any) -> dict:
    """The state of a new hero: full Resolve, no injuries, empty bubbles, no XP."""
    sheet = validate_sheet(sheet, creation=False)
    return {
        "sheet": sheet,
        "points": {"earned": 0, "spent": 0},
        "resolve": sheet["resolve"],
        "scene_resolve": 0,  # the aspect's free point, gone when the scene ends
        "aspect_invoked": False,  # by the player, this scene
        "gm_penalty": 0,  # -2 waiting for the next skill test after the GM invokes the aspect
        "injuries": 0,  # filled spots on the injury track, from the first
        "taken_out": False,  # the last injury spot is filled
        "bubbles": {"rows": [False] * 4, "columns": [False] * 4},
        "last_test": None,  # this scene's last skill test, for spend_resolve
    }


# What a hero's sheet holds, once: the creation form shows it (for the default grid) and
# ``validate_sheet`` checks with it (for the hero's grid, whose 16 skill names it names).

@lru_cache(maxsize=64)
def sheet_spec(skills: tuple[str, ...]) -> SheetSpec:
    return SheetSpec({
        "name": Text(NAME_MAX, optional=True, label="Name"),
        "skills": Group({skill: Integer(0, SKILL_MAX, label=skill) for skill in skills},
                        label="Skills", help=f"Every skill of the grid, 0 to {CREATION_SKILL_MAX} at creation; each row "
                                             f"and each column of the grid sums to {CREATION_LINE_SUM}."),
        "totems": Group({t: Integer(TOTEM_MIN, TOTEM_MAX, default=TOTEM_MIN, label=t) for t in TOTEMS}, optional=True,
                        label="Totems", help=f"All start at {TOTEM_MIN}."),
        "specializations": Group({skill: ListOf(Group({"name": Text(NAME_MAX, label="Specialization"),
                                                       "bonus": Integer(1, SPEC_BONUS_MAX, label="Bonus")}),
                                                SPECS_PER_SKILL, default=[], label=skill)
                                  for skill in skills}, optional=True, label="Specializations"),
        "resolve": Integer(0, RESOLVE_MAX_LIMIT, optional=True, label="Resolve",
                           help=f"Starting Resolve, up to the campaign's maximum ({DEFAULT_RESOLVE} if left out)."),
        "aspect": Text(TEXT_MAX, optional=True, label="Aspect"),
    }, help="The 16 skills of the grid, the eight totems, an aspect.")


SHEET = sheet_spec(tuple(grid_skills(DEFAULT_GRID)))


def quick_sheet(rating: int) -> dict:
    """A quick NPC (rules/npc.py): every skill of the default grid at ``rating``, every totem one less,
    each within its range."""
    return {"skills": {name: min(rating, SKILL_MAX) for row in DEFAULT_GRID["skills"] for name in row},
            "totems": {t: min(max(rating - 1, TOTEM_MIN), TOTEM_MAX) for t in TOTEMS}}
