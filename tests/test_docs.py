"""The docs' relative links lead somewhere: every linked file exists, and every #anchor names a
heading of the page it points into (GitHub's heading ids)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = sorted([*ROOT.glob("docs/*.md"), ROOT / "README.md", ROOT / "bench/README.md", ROOT / "rules/README.md"])
LINK = re.compile(r"\]\(([^)\s]+)\)")


def heading_ids(page: Path) -> set[str]:
    ids = set()
    for line in page.read_text().splitlines():
        if m := re.match(r"#+\s+(.*)", line):
            text = re.sub(r"[`*_]", "", m.group(1).strip().lower())
            ids.add(re.sub(r"[^\w\- ]", "", text).replace(" ", "-"))
    return ids


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_resolves(page):
    broken = []
    for target in LINK.findall(page.read_text()):
        if re.match(r"[a-z]+:", target):  # https:, mailto:
            continue
        path, _, anchor = target.partition("#")
        dest = (page.parent / path).resolve() if path else page
        if not dest.exists():
            broken.append(target)
        elif anchor and dest.suffix == ".md" and anchor not in heading_ids(dest):
            broken.append(target)
    assert broken == []
