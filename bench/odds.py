"""First-call time of every odds form of every system, each in a cold cache.

Run as a module in a fresh interpreter (``python -m bench.odds``): before each
call every ``lru_cache`` in ``rules`` is cleared, so each time is what the
first player to ask for that form waits (imports are done before timing).
Each form is timed ``REPEAT`` times from cold caches and the best is kept, in
wall time and in this thread's CPU time: on the shared 2-core machine a single
call is often preempted for longer than it runs. Prints one JSON object: per
form, per system and overall maxima in ms.

The forms are every raw form ``manage.py odds`` accepts (``odds()`` of each
system), each at its largest inputs and at a few typical ones.
"""

from __future__ import annotations

import gc
import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
REPEAT = 9

FORMS = {
    "mdt": [
        *({"type": "test", "dice": d, "difficulty": 3} for d in (-30, 0, 1, 5, 10, 30)),
        {"type": "test", "dice": 30, "difficulty": 1, "luck_ten_successes": 2, "exceptional_margin": 5},
        {"type": "opposed_test", "dice": 30, "vs_pool": 30},
        {"type": "opposed_test", "dice": 30, "vs_pool": -30, "tie_goes_to": "character"},
        {"type": "opposed_test", "dice": -30, "vs_pool": -30, "luck_ten_successes": 2},
        {"type": "contest_round", "dice": 30, "vs_pool": 30, "target": 50, "mine": 0, "theirs": 0},
        {"type": "contest_round", "dice": 30, "vs_pool": 30, "target": 50, "mine": 49, "theirs": 49},
        {"type": "contest_round", "dice": 30, "vs_pool": 30, "target": 50, "mine": 9999, "theirs": 9999},
        {"type": "project_roll", "dice": 30, "target": 100, "progress": 0},
        {"type": "project_roll", "dice": 30, "target": 100, "progress": 99},
    ],
    "tote": [
        *({"type": "skill_test", "rating": r, "bonus": b, "target": t, "blocked": bl}
          for r in (0, 1, 3, 5) for b, t in ((0, 8), (20, 30), (-20, 1)) for bl in ([], [1, 3], [1, 2, 3, 4, 5, 6])),
        *({"type": "effect_test", "dice": d, "mode": m, "threshold": th}
          for d in (1, 5) for m in ("sum", "count") for th in (2, 6)),
        {"type": "effect_test", "dice": 5, "mode": "sum", "target": 30, "modifier": 10},
        {"type": "effect_test", "dice": 5, "mode": "count", "target": 5, "modifier": -10},
    ],
    "wyrm": [
        *({"type": "check", "attribute": a, "skills": s, "dl": dl}
          for a in (0, 10) for s in (0, 1, 2) for dl in (0, 9, 60)),
        {"type": "check", "attribute": 10, "skills": 2, "dl": 60, "modifier": -20, "ties_succeed": False},
        *({"type": "check", "attribute": 10, "skills": s, "vs": {"attribute": 10, "skills": vs, "static": st},
           "modifier": m} for s in (0, 2) for vs in (0, 2) for st in (False, True) for m in (-20, 20)),
        *({"type": "damage", "dice": d, "bonus": b} for d in (1, 2, 3) for b in (0, 20)),
    ],
    "tale": [
        *({"type": "straight_roll", "pool": p, "target": t} for p in (1, 6, 40) for t in (1, 21, 140, 240)),
        *({"type": "straight_roll", "pool": p, "vs_pool": v} for p in (1, 40) for v in (1, 40)),
        {"type": "straight_roll", "pool": 40, "vs_pool": 40, "on_tie": "success"},
        {"type": "straight_roll", "pool": 40, "vs_pool": 40, "average": True},
        *({"type": "hide", "pool": 40, "place": place}
          for place in ("open_space", "light_undergrowth", "heavy_undergrowth", "heavy_forest")),
        {"type": "hide", "pool": 40, "challenge": 40},
        *({"type": "iterated_round", "mine": m, "theirs": t} for m in (1, 40) for t in (1, 40)),
        {"type": "combat_round", "attack": 40, "defence": 0, "their_attack": 40, "their_defence": 0},
        {"type": "combat_round", "attack": 20, "defence": 20, "their_attack": 20, "their_defence": 20},
        {"type": "combat_round", "attack": 1, "defence": 39, "their_attack": 39, "their_defence": 1},
    ],
}


def _clear_caches() -> None:
    for module in list(sys.modules.values()):
        if getattr(module, "__name__", "").startswith("rules"):
            for value in list(vars(module).values()):
                if hasattr(value, "cache_clear"):
                    value.cache_clear()


def measure() -> dict:
    """In this interpreter: every form once from cold caches."""
    from rules import get_system

    forms, worst = [], {}
    for name, actions in FORMS.items():
        system = get_system(name)
        system.odds(actions[0])  # imports and first-use setup, not timed
        for action in actions:
            wall, cpu = [], []
            for _ in range(REPEAT):
                _clear_caches()
                gc.collect()
                t, c = time.perf_counter(), time.thread_time()
                system.odds(action)
                wall.append((time.perf_counter() - t) * 1000)
                cpu.append((time.thread_time() - c) * 1000)
            ms, cpu_ms = round(min(wall), 3), round(min(cpu), 3)
            forms.append({"system": name, "action": action, "ms": ms, "cpu_ms": cpu_ms})
            if ms > worst.get(name, {"ms": -1})["ms"]:
                worst[name] = {"ms": ms, "cpu_ms": cpu_ms, "action": action}
    return {"forms": forms, "worst_per_system": worst, "count": len(forms), "repeat": REPEAT,
            "max_ms": max(f["ms"] for f in forms), "max_cpu_ms": max(f["cpu_ms"] for f in forms)}


def run_odds(python: str = sys.executable) -> dict:
    """:func:`measure` in a fresh interpreter (no warm cache from anything else in this process)."""
    out = subprocess.run([python, "-m", "bench.odds"], cwd=ROOT, capture_output=True, text=True, timeout=300,
                         check=True).stdout
    return json.loads(out)


if __name__ == "__main__":
    print(json.dumps(measure()))
