"""What differs between rule systems is a hook on their ``RuleSystem`` (rules/base.py), never a
switch on a system's name in the shared code: adding a system touches its package, its table module
and one registry line."""

import ast
from pathlib import Path

import pytest

from rules import SYSTEM_MODULES, get_system
from rules.npc import quick_sheet

ROOT = Path(__file__).resolve().parents[2]
# Where a system's name may be written: the registry, and the command that makes a demo of one.
NAMED_ON_PURPOSE = {"rules/__init__.py", "campaign/management/commands/demo.py"}


def _shared_modules():
    for top in ("rules", "campaign", "sessions"):
        for path in sorted((ROOT / top).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            if rel in NAMED_ON_PURPOSE or "/migrations/" in rel or any(
                    rel.startswith(f"rules/{name}/") for name in SYSTEM_MODULES):
                continue
            yield rel, path


def test_no_shared_module_names_a_system():
    """No string in rules/, campaign/ or sessions/ outside a system's package is a system's name
    (``if system == "tale"``, ``{"mdt": ...}``)."""
    named = []
    for rel, path in _shared_modules():
        for node in ast.walk(ast.parse(path.read_text(), rel)):
            if isinstance(node, ast.Constant) and node.value in SYSTEM_MODULES:
                named.append(f"{rel}:{node.lineno}: {node.value!r}")
    assert named == []


@pytest.mark.parametrize("name", sorted(SYSTEM_MODULES))
def test_a_quick_npc_is_within_its_system_s_declared_ranges(name):
    """The ``quick_sheet`` hook gives a sheet within the ranges its system declares, at every rating
    (past the creation limits by design: the platform checks it as an established character's)."""
    rules = get_system(name)
    for rating in (1, 3, 10):
        sheet = quick_sheet(rules, {"rating": rating})
        assert rules.sheet.validate(sheet)
    assert quick_sheet(name, {"template": "boss"}) == quick_sheet(rules, {"rating": 5})


@pytest.mark.parametrize("name", sorted(SYSTEM_MODULES))
def test_every_hook_is_the_declared_kind_or_none(name):
    from rules.base import Contests, Damage, Fights

    rules = get_system(name)
    assert rules.contests is None or isinstance(rules.contests, Contests)
    assert rules.fights is None or isinstance(rules.fights, Fights)
    assert rules.damage is None or isinstance(rules.damage, Damage)
    if rules.contests is not None:
        assert rules.contests.opposable <= set(rules.actions)
        assert rules.contests.continuing <= set(rules.actions) and rules.contests.both_sides <= set(rules.actions)
    if rules.damage is not None:
        assert rules.damage.action(99, "x")["type"] in rules.gm_actions
