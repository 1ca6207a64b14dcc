"""How the suite starts Chromium (tests/browser/conftest.py ``ARGS``)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

pytestmark = pytest.mark.browser


def _descendants(pid: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def _cmdline(pid: int) -> list[str]:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace").split("\0")
    except OSError:
        return []


def test_our_disable_features_keep_every_feature_playwright_disables(browser):
    """Chromium obeys only the last ``--disable-features`` on its command line: the suite's must
    repeat every feature Playwright's own switch turns off, or adding ours would turn those back on."""
    browsers = [args for args in map(_cmdline, _descendants(os.getpid()))
                if "--remote-debugging-pipe" in args and not any(a.startswith("--type=") for a in args)]
    assert browsers, "the suite's Chromium was not found among this process's descendants"
    for args in browsers:
        switches = [a.split("=", 1)[1].split(",") for a in args if a.startswith("--disable-features=")]
        assert len(switches) >= 2, "Playwright's switch and the suite's are both expected"
        last = set(switches[-1])
        missing = {feature for earlier in switches[:-1] for feature in earlier} - last
        assert not missing, f"add these to PLAYWRIGHTS_DISABLED_FEATURES in tests/browser/conftest.py: {sorted(missing)}"
        assert "PreloadTopChromeWebUI" in last
