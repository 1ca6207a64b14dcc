"""The import contracts in ``.importlinter`` hold: ``rules/`` imports nothing of Django,
Channels or the project, and no module inside ``rules/`` imports one that imports it back.

Runs in ``make test-fast`` too (no Django needed): adding ``import django.db`` to
``rules/base.py`` turns this red.
"""

from pathlib import Path

from importlinter.cli import lint_imports

ROOT = Path(__file__).resolve().parents[2]


def test_import_contracts_are_kept(monkeypatch, capsys):
    monkeypatch.chdir(ROOT)  # lint-imports finds .importlinter and the packages from the root
    monkeypatch.syspath_prepend(str(ROOT))
    exit_code = lint_imports(config_filename=str(ROOT / ".importlinter"), no_cache=True, no_logo=True)
    assert exit_code == 0, capsys.readouterr().out
