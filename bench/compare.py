"""Two `make bench` runs side by side, target by target, as a Markdown table.

    .venv/bin/python bench/compare.py bench/results/<before>.json bench/results/<after>.json

Each row is one target (docs/performance.md; `targets` in the JSON), with the floor and the measurement of each run
(every floor was measured in its own run: compare ratios, not milliseconds across runs).
"""

from __future__ import annotations

import json
import re
import sys


def key(target: str) -> str:
    """A target's name without the bound it states (the wording of the bound changed between runs)."""
    return re.split(r" within| \(max", target)[0]


def verdict(met) -> str:
    return "INFO" if met is None else "**PASS**" if met else "MISS"


def main(before_path: str, after_path: str) -> None:
    before, after = (json.load(open(p)) for p in (before_path, after_path))
    old = {key(t["target"]): t for t in before["targets"]}
    for run in (before, after):
        m = run.get("machine", {})
        print(f"- `{run['run_id']}` ({run['started']}): load average {m.get('load_average')} at the start, {m.get('busy_pct_before', '?')}% busy before; `{run['command']}`")
    print()
    print("| target | before: measured (floor) | | after: measured (floor) | |")
    print("|---|---|---|---|---|")
    for t in after["targets"]:
        b = old.get(key(t["target"]), {})
        print(f"| {t['target']} | {b.get('measured', '-')} ({b.get('floor', '-')}) | {verdict(b.get('met')) if b else '-'} "
              f"| {t['measured']} ({t['floor']}) | {verdict(t['met'])} |")
    met = [t for t in after["targets"] if t["met"] is not None]
    print(f"\n{sum(1 for t in met if t['met'])} of {len(met)} scored targets met after "
          f"({sum(1 for t in before['targets'] if t['met'])} before).")


if __name__ == "__main__":
    main(*sys.argv[1:3])
