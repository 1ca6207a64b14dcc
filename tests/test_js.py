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

from campaign.platform_events import PLATFORM_EVENTS
from rules import SYSTEM_MODULES, get_system
from rules.declare import _FILLED, fill_description, system_json

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


def _put(payload: dict, path: str, value) -> dict:
    *outer, last = path.split(".")
    here = payload
    for key in outer:
        here = here.setdefault(key, {}) if isinstance(here.get(key, {}), dict) else here
    here[last] = value
    return payload


def _payloads(template: str) -> list[dict]:
    """Payloads that try every part of ``template``: each value missing, given as text, as 1, 2, 0 and
    −3, blank or null, every condition holding and none; a value a list-format reads as a list."""
    tokens = [m for m in _FILLED.finditer(template) if m.group(2)]
    listed = {m.group(2) for m in tokens if set((m.group(4) or "").split(":")) & {"count", "join", "plus", "changes"}}

    def each(value_of):
        payload: dict = {}
        for m in tokens:
            _put(payload, m.group(2), value_of(m))
        return payload

    def plain(value):
        return lambda m: ([value, "O'Brien"] if value is not None else []) if m.group(2) in listed else value

    changes = [{"path": "sheet.skills.Strike", "from": 2, "to": 3}, {"path": "resolve", "from": None, "to": "x"}]
    return [{}, each(plain("O'Brien “x”")), each(plain(1)), each(plain(2)), each(plain(0)), each(plain(-3)),
            each(lambda m: None if m.start() % 2 else ""),
            each(lambda m: m.group(3) if m.group(3) else (changes if ":changes" in (m.group(4) or "") else ["a_b", 1])
                 if m.group(2) in listed else "a_b"),
            each(lambda m: [] if m.group(2) in listed else "a_b" if m.group(3) else 1)]


def _declared_sentences():
    """Every declared sentence and tail, with the words its declaration gives: the platform's and each system's."""
    specs = list(PLATFORM_EVENTS)
    for name in SYSTEM_MODULES:
        specs += list(get_system(name).events)
    return [(template, {k: dict(v) for k, v in spec.words.items()}) for spec in specs
            for template in (spec.description, spec.tail) if template]


def test_every_declared_sentence_fills_in_javascript_as_in_python():
    """One sentence per event, read by both: the audit page and the exports fill it in Python
    (rules/declare.py fill_description), the table in JavaScript (format.js fillTemplate), every
    part of the template language tried on every declared sentence."""
    cases = [{"template": t, "payload": p, "words": w} for t, w in _declared_sentences() for p in _payloads(t)]
    assert len(cases) > 1000
    filled = json.loads(node("""
        import { fillTemplate } from "./static/talekeeper/format.js";
        let text = ""; for await (const chunk of process.stdin) text += chunk;
        console.log(JSON.stringify(JSON.parse(text).map((c) => fillTemplate(c.template, c.payload, c.words))));
    """, json.dumps(cases)))
    differ = [(c, js) for c, js in zip(cases, filled, strict=True)
              if fill_description(c["template"], c["payload"], c["words"]) != js]
    assert differ == []


def test_the_template_language_fills_alike_in_javascript_and_python():
    """Each part of the language on its own, beside what it says."""
    cases = [
        ("{a.b:signed} {c:cap} {d:words} {e:join} {e:plus} {f:count|die|dice}", {"a": {"b": -2}, "c": "strike", "d": "a_b",
         "e": ["x", 1], "f": [1]}, {}, "−2 Strike a b x, 1 x + 1 1 die"),
        ("{a:signed} {b:signed} {xs:cap:plus}", {"a": 0, "b": 3, "xs": ["brawn", "skill"]}, {}, "±0 +3 Brawn + Skill"),
        ("[raised {n:cap} from {f} to {t}{k=attribute}|learned {n}] for {c|point|points}",
         {"k": "attribute", "n": "wits", "f": 0, "t": 1, "c": 1}, {}, "raised Wits from 0 to 1 for 1 point"),
        ("[raised {n:cap} from {f} to {t}{k=attribute}|learned {n}] for {c|point|points}",
         {"k": "skill", "n": "Climb", "c": 4}, {}, "learned Climb for 4 points"),
        ("[{npc:if}the NPC|the character][ ({m:signed})]", {"npc": False, "m": 0}, {}, "the character"),
        ("spends {use:word}", {"use": "reroll"}, {"use": {"reroll": "a reroll"}}, "spends a reroll"),
        ("[whispered to {to.username:join}|said]", {"to": [{"username": "bob"}, {"username": "gm"}]}, {}, "whispered to bob, gm"),
        ("[whispered to {to.username:join}|said]", {"to": []}, {}, "said"),
        ("adjusted: {c:changes}", {"c": [{"path": "sheet.skills.Strike", "from": 2, "to": 3}]}, {}, "adjusted: skills.Strike 2 → 3"),
        ("changed: {c:changes}", {"c": {"ties": {"from": "a", "to": {"x": [1, 2]}}}}, {}, 'changed: ties a → {"x":[1,2]}'),
        ("said {text}", {"text": "{secret} [x{y}]"}, {}, "said {secret} [x{y}]"),
    ]
    said = json.loads(node("""
        import { fillTemplate } from "./static/talekeeper/format.js";
        let text = ""; for await (const chunk of process.stdin) text += chunk;
        console.log(JSON.stringify(JSON.parse(text).map(([t, p, w]) => fillTemplate(t, p, w))));
    """, json.dumps([c[:3] for c in cases])))
    assert said == [c[3] for c in cases]
    assert [fill_description(t, p, w) for t, p, w, _ in cases] == [c[3] for c in cases]


# Beside each system's evening (tests/contract/evenings.py): more of its actions, so that most of its
# events are said. (who, action); the platform's steps stand for their events.
MORE_OF_AN_EVENING = {
    "tote": [("gm", {"type": "award_points", "points": 30}),
             ("alice", {"type": "buy_advance", "advance": "totem", "totem": "Bear"}),
             ("alice", {"type": "buy_advance", "advance": "specialization", "skill": "Strike", "specialization": "Axes"}),
             ("gm", {"type": "heal_injury"}), ("gm", {"type": "grant_resolve", "amount": 1, "reason": "a song"}),
             ("alice", {"type": "effect_test", "dice": 3, "target": 9, "modifier": -1})],
    "wyrm": [("alice", {"type": "check", "attribute": "warrior", "dl": 6}),
             ("alice", {"type": "spend_fate", "use": "plus_two"}), ("gm", {"type": "deny_fate", "reason": "no"}),
             ("alice", {"type": "buy_advance", "advance": "skill", "skill": "Climb", "attribute": "rogue"})],
    "tale": [("alice", {"type": "hide", "place": "open_ground", "challenge": 2}),
             ("gm", {"type": "take_damage", "dice": 3, "reason": "a fall"})],
    "mdt": [("gm", {"type": "start_contest", "attribute": "dexterity", "target": 3, "vs_pool": 4,
                    "opponent_name": "the hound"}),
            ("alice", {"type": "contest_round"}), ("gm", {"type": "end_contest"}),
            ("gm", {"type": "abandon_project", "project": "Translate the tome", "reason": "burnt"})],
}
PLATFORM_STEPS = {"start_session": ("session_started", {"session": 1}), "start_scene": ("scene_started", {"scene": 1}),
                  "end_scene": ("scene_ended", {"scene": 1}), "end_session": ("session_ended", {"session": 1})}


def _an_evening(name: str) -> list[dict]:
    """The events ``name``'s evening and its other actions record, decided and folded by its rules alone."""
    from rules import Event, ScriptedDice
    from rules.base import RuleError
    from tests.contract.evenings import EVENINGS, FACES

    rules = get_system(name)
    state, dice, events = rules.initial_state(dict(rules.example_sheet)), ScriptedDice(list(FACES)), []
    for _, action in EVENINGS[name] + MORE_OF_AN_EVENING[name]:
        action = {k: v for k, v in action.items() if k != "visibility"}
        if action["type"] in PLATFORM_STEPS:
            state = rules.evolve(state, Event(*PLATFORM_STEPS[action["type"]]))
            continue
        try:
            decided = rules.decide(state, action, dice)
        except RuleError:  # an extra the evening's state does not allow: its event is said by the others'
            continue
        for event in decided:
            state = rules.evolve(state, event)
            events.append({"seq": len(events) + 1, "type": event.type, "payload": event.payload, "character": 1,
                           "character_name": "O'Brien", "visibility": "public"})
    return json.loads(json.dumps(events))


@pytest.mark.parametrize("name", sorted(SYSTEM_MODULES))
def test_every_event_of_an_evening_reads_on_the_table_as_the_audit_fills_its_sentence(name):
    """The table's describe() (static/talekeeper/describe.js with the system's module, under Node), on
    each event an evening of the system records, says exactly the event's declared sentence as
    rules/declare.py fills it for the audit: one sentence per event, whichever reads it."""
    lines = {spec.type: spec.description for spec in PLATFORM_EVENTS if spec.description}  # campaign/audit.py LINES
    rules = get_system(name)
    events = _an_evening(name)
    said = json.loads(node("""await import("./tests/js/describe.mjs");""", json.dumps({
        "system": name, "lines": lines, "declared": json.loads(json.dumps(system_json(rules))), "events": events})))
    assert said["failed"] == []
    python = [rules.events.specs[e["type"]].describe({"character_name": e["character_name"], **e["payload"]}) for e in events]
    assert said["said"] == python
    assert len({e["type"] for e in events}) >= 8


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


def test_who_could_send_each_command_reads_in_javascript_as_in_python():
    """senders.js ``Seats`` names the same commands, with the same words, as rules/senders.py does, on every
    log of tests/rules/test_senders.py (``CASES``), and agrees on whose character each is."""
    from tests.rules.test_senders import CASES

    said = json.loads(node("""
        import { Seats } from "./static/talekeeper/senders.js";
        let text = ""; for await (const chunk of process.stdin) text += chunk;
        const out = {};
        for (const [name, log] of Object.entries(JSON.parse(text))) {
          const seats = new Seats();
          out[name] = [];
          for (const ev of log) {
            const { problem } = seats.see(ev);
            if (problem) out[name].push([ev.seq, problem]);
          }
        }
        console.log(JSON.stringify(out));
    """, json.dumps({name: log for name, (log, _) in CASES.items()})))
    assert said == {name: [list(p) for p in expected] for name, (_, expected) in CASES.items()}
