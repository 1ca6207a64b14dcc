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


# --- no import cycle among the modules of campaign/ and sessions/ ----------------------------------
# The ``acyclic_siblings`` contract looks at siblings; this looks at every module, a package's
# ``__init__`` included, and at every import grimp reads (those inside functions too): any two modules
# of the server that import each other, however far round, are a cycle.

SERVER = ("campaign", "sessions")


def import_cycles(graph, packages=SERVER) -> list[list[str]]:
    """Each set of modules of ``packages`` that import one another round a cycle (Tarjan's strongly
    connected components, without recursion), sorted; none when the imports are a tree."""
    modules = sorted(m for m in graph.modules if m.split(".")[0] in packages)
    inside = set(modules)
    edges = {m: sorted(i for i in graph.find_modules_directly_imported_by(m) if i in inside) for m in modules}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles = []
    for root in modules:
        if root in index:
            continue
        work = [(root, 0)]
        while work:
            node, i = work.pop()
            if i == 0:
                index[node] = low[node] = len(index)
                stack.append(node)
                on_stack.add(node)
            if i < len(edges[node]):
                work.append((node, i + 1))
                nxt = edges[node][i]
                if nxt not in index:
                    work.append((nxt, 0))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            if work:  # back in the caller: it reaches whatever this node reaches
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    cycles.append(sorted(component))
    return sorted(cycles)


def test_no_module_of_campaign_or_sessions_imports_one_that_imports_it_back():
    import grimp

    graph = grimp.build_graph(*SERVER, cache_dir=None)
    assert len([m for m in graph.modules if m.split(".")[0] in SERVER]) > 100
    assert import_cycles(graph) == []


def test_the_cycle_check_finds_a_cycle_however_far_round_and_a_package_and_its_module():
    import grimp

    graph = grimp.ImportGraph()
    for module in ("campaign", "campaign.a", "campaign.b", "campaign.c", "campaign.d", "sessions", "sessions.x", "rules.y"):
        graph.add_module(module)
    for importer, imported in [("campaign.a", "campaign.b"), ("campaign.b", "campaign.c"), ("campaign.c", "campaign.a"),
                               ("campaign", "campaign.d"), ("campaign.d", "campaign"),
                               ("sessions.x", "rules.y"), ("rules.y", "sessions.x"),  # rules/ is not the server's
                               ("sessions.x", "campaign.a")]:
        graph.add_import(importer=importer, imported=imported)
    assert import_cycles(graph) == [["campaign", "campaign.d"], ["campaign.a", "campaign.b", "campaign.c"]]
