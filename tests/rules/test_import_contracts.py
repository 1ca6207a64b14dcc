"""The import contracts in ``.importlinter`` hold: ``rules/`` imports nothing of Django,
Channels or the project; ``campaign/`` and ``sessions/`` keep their layers (docs/architecture.md,
"Layers"); and no module inside ``rules/``, ``campaign/`` or ``sessions/`` imports one that
imports it back.

Runs in ``make test-fast`` too (no Django needed): adding ``import django.db`` to
``rules/base.py``, or ``from .publish import publish_on_commit`` to ``campaign/eventlog/store.py``, turns this red.
"""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")


def test_import_contracts_are_kept():
    # A process of its own: import-linter's option check trips over classes that zope.interface
    # (loaded with daphne by other tests) has touched.
    checked = subprocess.run([str(LINT_IMPORTS), "--no-cache"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert checked.returncode == 0, checked.stdout + checked.stderr
