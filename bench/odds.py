"""How long the exact odds of each system's largest allowed inputs take from cold caches.

``.venv/bin/python bench/odds.py``. Not a test: wall-clock numbers depend on the machine's load
(the tests check only that these inputs give probabilities). Each should stay well under 0.2 s on
a quiet machine, because the table asks for a preview on every form change.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from rules import get_system  # noqa: E402

LARGEST = {
    "tote": [{"type": "skill_test", "rating": 5, "bonus": 20, "target": 30, "blocked": [1, 3]},
             {"type": "effect_test", "dice": 10, "target": 60}],
    "wyrm": [{"type": "check", "attribute": 10, "skills": 2, "vs": {"attribute": 10, "skills": 2}, "modifier": -20},
             {"type": "damage", "dice": 3, "bonus": 20}],
    "tale": [{"type": "straight_roll", "pool": 40, "vs_pool": 40},
             {"type": "straight_roll", "pool": 40, "target": 140},
             {"type": "combat_round", "attack": 20, "defence": 20, "their_attack": 19, "their_defence": 21}],
    "mdt": [{"type": "test", "dice": 30, "difficulty": 3},
            {"type": "opposed_test", "dice": 30, "vs_pool": 30},
            {"type": "contest_round", "dice": 30, "vs_pool": 30, "target": 50, "mine": 49, "theirs": 49},
            {"type": "project_roll", "dice": 30, "target": 100, "progress": 0}],
}


def main() -> None:
    # One fresh process per run: the engines' lru_caches start cold.
    for name, actions in LARGEST.items():
        system = get_system(name)
        started = time.perf_counter()
        for action in actions:
            system.odds(action)
        print(f"{name:5} largest odds from cold caches: {(time.perf_counter() - started) * 1000:7.1f} ms")


if __name__ == "__main__":
    main()
