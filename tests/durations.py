"""How long each test file took in a quiet ``make test`` run: the workers take the longest files first.

pytest-xdist hands a worker whole files (``--dist loadgroup``, tests/workers.py) and, by default, in
order of their number of tests, so a file of a few long tests (a two-worlds search, a browser
module) started last and ran on alone at the end of the run while the other workers idled. The
Makefile turns that order off (``--no-loadscope-reorder``) and tests/workers.py sorts the files by
the seconds recorded here, longest first; a file not listed goes after them, in collection order.
The figures only order the work: a stale one costs speed, never a result.

Regenerate from a run's own report (every test's setup, call and teardown)::

    make test-postgres PYTEST_ARGS="--durations=0 --durations-min=0" | tee run.log
    .venv/bin/python -m tests.durations < run.log > tests/durations.json
"""

from __future__ import annotations

import json
import re
import sys
from collections import Counter
from pathlib import Path

RECORDED = Path(__file__).with_name("durations.json")
LINE = re.compile(r"([\d.]+)s (?:setup|call|teardown)\s+([^:\s]+)::")


def recorded() -> dict[str, float]:
    """Seconds per test file (its path from the repository's root), as last recorded."""
    try:
        return json.loads(RECORDED.read_text())
    except (OSError, ValueError):
        return {}


def from_report(lines) -> dict[str, float]:
    """Seconds per file, summed over a pytest ``--durations`` report's lines, longest first."""
    seconds = Counter()
    for line in lines:
        match = LINE.match(line)
        if match:
            seconds[match[2]] += float(match[1])
    return {path: round(total, 1) for path, total in seconds.most_common() if total >= 1}


if __name__ == "__main__":
    json.dump(from_report(sys.stdin), sys.stdout, indent=0)
    sys.stdout.write("\n")
