"""The table's JavaScript that needs no page: its unit tests under Node's own test runner
(``tests/js/*.test.mjs``: formatting, the waiting list, the press that holds updates, the chain
checks, receipts), and what the JavaScript and the Python must say alike. Node is Debian's ``nodejs``
(``.ci/run`` installs it); the browser suite (tests/browser) drives the same modules in Chromium."""

from __future__ import annotations

import importlib
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from campaign.audit import LINES
from rules import SYSTEM_MODULES, get_system
from rules.declare import fill_description, system_json

ROOT = Path(__file__).resolve().parents[1]
STATIC = ROOT / "static" / "talekeeper"


def node(script: str, stdin: str = "") -> str:
    binary = shutil.which("node")
    assert binary, "Node.js is needed for the table's JavaScript tests: apt-get install nodejs (.ci/run does)"
    done = subprocess.run([binary, "--input-type=module", "-e", script], input=stdin, capture_output=True,
                          text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_the_table_modules_unit_tests_pass_under_node():
    binary = shutil.which("node")
    assert binary, "Node.js is needed for the table's JavaScript tests: apt-get install nodejs (.ci/run does)"
    files = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "tests" / "js").glob("*.test.mjs"))
    assert files
    done = subprocess.run([binary, "--test", *files], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-2000:]
    assert re.search(r"^# fail 0$", done.stdout, re.M) and not re.search(r"^# pass 0$", done.stdout, re.M), done.stdout


def _payloads(template: str) -> list[dict]:
    keys = re.findall(r"\{(\w+)", template)
    return [{}, {k: "O'Brien “x”" for k in keys}, {k: 1 for k in keys}, {k: 2 for k in keys},
            {k: (None if i % 2 else "") for i, k in enumerate(keys)}, {k: 0 for k in keys[:1]}]


def test_every_declared_sentence_fills_in_javascript_as_in_python():
    """One description per event, read by both: the audit page and the exports fill it in Python
    (rules/declare.py fill_description), the table in JavaScript (format.js fillTemplate)."""
    templates = list(LINES.values())
    for name in SYSTEM_MODULES:
        templates += [e["description"] for e in system_json(get_system(name))["events"].values() if e.get("description")]
    cases = [{"template": t, "payload": p} for t in templates for p in _payloads(t)]
    assert len(cases) > 300
    filled = json.loads(node("""
        import { fillTemplate } from "./static/talekeeper/format.js";
        let text = ""; for await (const chunk of process.stdin) text += chunk;
        console.log(JSON.stringify(JSON.parse(text).map((c) => fillTemplate(c.template, c.payload))));
    """, json.dumps(cases)))
    differ = [(c, js) for c, js in zip(cases, filled, strict=True) if fill_description(c["template"], c["payload"]) != js]
    assert differ == []


@pytest.mark.parametrize("name", sorted(SYSTEM_MODULES))
def test_a_table_module_handles_only_declared_actions_and_every_one_it_lays_out(name):
    """``handles`` (systems/<name>.js) is what keeps a declared action from getting a second form
    built from its declaration: it names only the system's declared actions, and every declared
    action the module builds itself (``type: "..."`` in its source) is in it."""
    handles = json.loads(node(f"""
        const m = await import("./static/talekeeper/systems/{name}.js");
        console.log(JSON.stringify(m.handles));
    """))
    declared = set(system_json(get_system(name))["actions"])
    source = (STATIC / "systems" / f"{name}.js").read_text()
    laid_out = set(re.findall(r'\btype: "(\w+)"', source))
    if "healthTools(" in source:  # the health track's tools (health.js)
        laid_out |= {"mark_harm", "heal_harm"}
    assert len(handles) == len(set(handles))
    assert set(handles) <= declared
    assert laid_out & declared <= set(handles)


@pytest.mark.parametrize("name", sorted(SYSTEM_MODULES))
def test_a_table_module_says_what_each_declared_kind_of_fight_asks_of_a_side(name):
    """fight.js lays out a side's choice from the system module's ``fights`` alone: every kind the
    rules declare (rules/base.py ``Fights``) has its choice there, and the attributes it offers are
    the sheet's."""
    kinds = [k["name"] for k in system_json(get_system(name))["fights"]]
    fights = json.loads(node(f"""
        const m = await import("./static/talekeeper/systems/{name}.js");
        console.log(JSON.stringify(m.fights ?? null));
    """))
    if not kinds:
        assert fights is None
        return
    assert sorted(fights["choice"]) == sorted(kinds)
    assert set(fights["choice"].values()) <= {"portions", "against", "roll"}
    attributes = getattr(importlib.import_module(f"rules.{name}.sheet"), "ATTRIBUTES", None)
    assert fights["attributes"] == (list(attributes) if attributes is not None else None)


def test_the_fight_module_names_no_rule_system():
    source = (STATIC / "fight.js").read_text()
    assert not re.search(r"\bsystem\s*===?|data\.system|\b(?:tote|wyrm|tale|mdt)\b", source)


def test_a_condition_s_effect_reads_in_javascript_as_in_python():
    """conditions.js ``effectWords`` says a modifier as rules/conditions.py ``effect_words`` does, in
    every system's declared words."""
    from rules.conditions import effect_words

    cases = [{"template": get_system(name).conditions.effect, "modifier": m}
             for name in sorted(SYSTEM_MODULES) for m in (-3, -1, 0, 1, 2)]
    said = json.loads(node("""
        import { effectWords } from "./static/talekeeper/conditions.js";
        let text = ""; for await (const chunk of process.stdin) text += chunk;
        console.log(JSON.stringify(JSON.parse(text).map((c) => effectWords(c.template, c.modifier))));
    """, json.dumps(cases)))
    assert said == [effect_words(c["template"], c["modifier"]) for c in cases]
