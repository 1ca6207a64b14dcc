"""Talekeeper's rules engines: pure Python, no Django, no I/O.

``get_system(name)`` is the only entry point the rest of the project uses; it
never needs to know which system a campaign plays.
"""

from importlib import import_module

from .base import (  # noqa: F401  (re-exported: the public interface)
    DiceSource,
    Event,
    RuleError,
    RuleSystem,
    ScriptedDice,
    SecretDice,
    SeededDice,
    SheetError,
    fraction_json,
    odds_json,
)

__all__ = [
    "DiceSource", "Event", "RuleError", "RuleSystem", "ScriptedDice", "SecretDice", "SeededDice", "SheetError",
    "fraction_json", "odds_json", "get_system", "get_settings", "system_choices", "SYSTEM_MODULES", "SYSTEM_TITLES",
]

# name -> module that defines ``SYSTEM``. A fifth system is one more line here.
SYSTEM_MODULES = {
    "tote": "rules.tote",
    "wyrm": "rules.wyrm",
    "tale": "rules.tale",
    "mdt": "rules.mdt",
}


def get_system(name: str) -> RuleSystem:
    """Return the rule system called ``name``; ``KeyError`` if there is none."""
    if name not in SYSTEM_MODULES:
        raise KeyError(name)
    return import_module(SYSTEM_MODULES[name]).SYSTEM


def get_settings(name: str) -> tuple:
    """The campaign settings system ``name`` declares (``rules/<system>/settings.py``, ``rules.options.Option``)."""
    if name not in SYSTEM_MODULES:
        raise KeyError(name)
    return import_module(SYSTEM_MODULES[name] + ".settings").OPTIONS


# Titles without importing the engines (choices are read at import time).
SYSTEM_TITLES = {
    "tote": "Tales from the Torn Earth",
    "wyrm": "WYRM (Warrior, Rogue & Mage)",
    "tale": "Tale RPG",
    "mdt": "Mundo das Trevas Lite",
}


def system_choices() -> list[tuple[str, str]]:
    """``[(name, title), ...]`` for forms and pickers."""
    return [(name, SYSTEM_TITLES[name]) for name in SYSTEM_MODULES]
