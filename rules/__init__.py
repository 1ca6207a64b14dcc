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
    "fraction_json", "odds_json", "get_system", "get_settings", "system_choices", "SYSTEMS", "SYSTEM_MODULES",
    "SYSTEM_TITLES",
]

# name -> (the module that defines ``SYSTEM``, its title). A fifth system is one more line here: the
# title is here too so forms and pickers list systems without importing the engines (choices are read
# at import time), and campaigns store the name alone (no migration for a new system).
SYSTEMS = {
    "tote": ("rules.tote", "Tales from the Torn Earth"),
    "wyrm": ("rules.wyrm", "WYRM (Warrior, Rogue & Mage)"),
    "tale": ("rules.tale", "Tale RPG"),
    "mdt": ("rules.mdt", "Mundo das Trevas Lite"),
}
SYSTEM_MODULES = {name: module for name, (module, _) in SYSTEMS.items()}
SYSTEM_TITLES = {name: title for name, (_, title) in SYSTEMS.items()}


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


def system_choices() -> list[tuple[str, str]]:
    """``[(name, title), ...]`` for forms and pickers."""
    return [(name, SYSTEM_TITLES[name]) for name in SYSTEM_MODULES]
