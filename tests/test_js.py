"""The table's JavaScript that needs no page: its unit tests under Node's own test runner
(``tests/js/*.test.mjs``: formatting, the waiting list, the press that holds updates, the chain
checks, receipts), and what the JavaScript and the Python must say alike. Node is Debian's ``nodejs``
(``.ci/run`` installs it); the browser suite (tests/browser) drives the same modules in Chromium."""

from __future__ import annotations

import base64
import hashlib
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


# --- witnessed rolls: the browser's verifier and rules/witness.py, reason for reason -----------------------

def _witness_logs() -> list[list[dict]]:
    """Logs that break every rule rules/witness.py checks, each event as the events API serves it (``hidden``
    and no payload when sealed from the reader); ids: the GM 1, alice 2, bob 3, carol 4."""
    from rules.witness import commitment, digest

    def entropy(tag: str) -> str:
        return base64.urlsafe_b64encode(hashlib.sha256(tag.encode()).digest()).rstrip(b"=").decode()

    def ev(seq, kind, payload, actor=1, session=1):
        return {"seq": seq, "type": kind, "payload": payload, "actor_id": actor,
                "actor": {1: "gm", 2: "alice", 3: "bob", 4: "carol"}.get(actor), "session": session}

    def sealed(seq, actor=1):
        return {"seq": seq, "type": "sealed", "hidden": True, "payload": {"hidden": True}, "actor_id": actor,
                "actor": None, "session": 1}

    def start(seq, session, marked=True):
        return ev(seq, "session_started", {"session": session, "dice_scheme": "talekeeper-hmac-sha256-v3",
                                           **({"witness_commits": True} if marked else {})}, session=session)

    def pending(seq, witnesses=(2, 3)):
        return ev(seq, "roll_pending", {"witnesses": list(witnesses), "command_id": f"c{seq}",
                                        "action": {"type": "roll"}})

    def commit(seq, who, roll, text=None, signed=None):
        value = commitment(roll, who, entropy(text or str(who))) if text != "bad" else "not hex"
        return ev(seq, "roll_committed", {"roll": roll, "action": {"type": "witness_commit", "roll": signed or roll,
                                                                   "commitment": value}}, who)

    def close(seq, roll, committed):
        return ev(seq, "commitments_closed", {"command_of": roll, "committed": committed})

    def reveal(seq, who, roll, text=None, raw=None, signed=None):
        return ev(seq, "roll_witnessed", {"roll": roll, "action": {"type": "witness_roll", "roll": signed or roll,
                                                                   "entropy": raw or entropy(text or str(who))}}, who)

    def decide(seq, roll, came, **extra):
        payload = {"command_of": roll, "dice_scheme": "talekeeper-hmac-sha256-v4", "dice_log": [[6, 2]],
                   "witnessed_by": [s for s, _, _ in came], "witness_digest": digest(came), **extra}
        if not came:
            payload.setdefault("unwitnessed", True)
        return ev(seq, "roll", {k: v for k, v in payload.items() if v is not None})

    def came(*rows):
        return [(seq, who, entropy(str(who))) for seq, who in rows]

    created = ev(1, "campaign_created", {"gm": "gm", "witnessed_rolls": "gm"}, session=None)
    joined = [ev(2, "member_joined", {"username": "alice", "user_id": 2, "role": "player"}, session=None),
              ev(3, "member_joined", {"username": "bob", "user_id": 3, "role": "player"}, session=None),
              ev(4, "member_joined", {"username": "carol", "user_id": 4, "role": "gm"}, session=None)]
    opening = [created, *joined, start(5, 1)]
    return [
        # The settings: no setting; changed inside a session, otherwise than its line says; a GM stepping down
        # inside one; a later session that stops committing; a GM's roll stored without waiting.
        [ev(1, "campaign_created", {"gm": "gm", "witnessed_rolls": "always"}, session=None)],
        [ev(1, "campaign_created", {"gm": "gm", "witnessed_rolls": None}, session=None)],
        [*opening, ev(6, "campaign_configured", {"witnessed_rolls": "gm",
                                                 "changed": {"witnessed_rolls": {"to": "off"}}}),
         ev(7, "member_role_changed", {"username": "carol", "user_id": 4, "role": "player"}),
         ev(8, "roll", {"command_id": "x", "dice_log": [[20, 3]], "dice_scheme": "talekeeper-hmac-sha256-v3"}, 4),
         ev(9, "session_ended", {"session": 1}), start(10, 2, marked=False)],
        # A roll's witnesses, commitments, close, reveals and decision, each rule broken.
        [*opening, pending(6, witnesses=(3, 1)), pending(7), ev(8, "witness_call", {"witnesses": [2], "command_of": 7}),
         commit(9, 2, 7, text="bad"), commit(10, 2, 7, signed=6), commit(11, 4, 7), commit(12, 9, 99),
         commit(13, 2, 7), commit(14, 2, 7), reveal(15, 2, 7), close(16, 7, [13, 20]), close(17, 7, [13]),
         commit(18, 3, 7), reveal(19, 3, 7), reveal(20, 2, 7, raw="A" * 42), reveal(21, 2, 7, text="other"),
         reveal(22, 2, 7, signed=6), reveal(23, 2, 7), reveal(24, 2, 7), close(25, 99, []), decide(26, 99, []),
         decide(27, 7, came((23, 2)), dice_scheme="talekeeper-hmac-sha256-v3"), decide(28, 7, came((23, 2))),
         reveal(29, 3, 7), commit(30, 3, 7), close(31, 7, [])],
        [*opening, pending(6), commit(7, 2, 6), commit(8, 3, 6), close(9, 6, [7, 8]), reveal(10, 2, 6),
         reveal(11, 3, 6), decide(12, 6, came((10, 2)))],
        [*opening, pending(6), commit(7, 2, 6), close(8, 6, [7]), reveal(9, 2, 6),
         decide(10, 6, came((9, 2)), witness_digest="0" * 64)],
        [*opening, pending(6), commit(7, 2, 6), close(8, 6, [7]), reveal(9, 2, 6),
         decide(10, 6, came((9, 2)), witnessed_by="9")],
        [*opening, pending(6, witnesses=()), decide(7, 6, [], witnessed_by=None)],
        [*opening, pending(6), commit(7, 2, 6), close(8, 6, [7]), reveal(9, 2, 6), decide(10, 6, [], unwitnessed=True)],
        [*opening, pending(6), decide(7, 6, [])],
        [*opening, pending(6, witnesses=()), decide(7, 6, [], unwitnessed=False)],
        # Never decided: named (#9, sealed from the reader but called), unless an event sealed from the reader
        # since may be its decision (#6).
        [*opening, pending(6), commit(7, 2, 6), close(8, 6, [7]), sealed(9), ev(10, "witness_call",
         {"witnesses": [2, 3], "command_of": 9}), ev(11, "session_ended", {"session": 1})],
        # One phase, in a session from before commitments: no commitment, no close.
        [*[e for e in opening if e["type"] != "session_started"], start(5, 1, marked=False), pending(6),
         reveal(7, 2, 6), reveal(8, 3, 6, raw="/" * 43), decide(9, 6, came((7, 2)))],
    ]


def test_the_browsers_witness_checks_name_what_rules_witness_names_in_its_words():
    """The table's chain check and the verification page (static/talekeeper/witness.js) and every Python
    verifier (rules/witness.py: verify_dice, verify_log, the standalone verifier) name the same events of
    the same logs, for the same reasons, in the same words."""
    from rules.witness import Seen, problems

    logs = _witness_logs()
    python = [[list(p) for p in problems(Seen(e["seq"], None if e.get("hidden") else e["type"],
                                              None if e.get("hidden") else e["payload"], e["actor_id"], e["actor"],
                                              e["session"]) for e in log)] for log in logs]
    browser = json.loads(node("""
        import { WitnessBook } from "./static/talekeeper/witness.js";
        import { sha256Hex } from "./static/talekeeper/chain.js";
        let text = ""; for await (const chunk of process.stdin) text += chunk;
        const out = [];
        for (const log of JSON.parse(text)) {
          const book = new WitnessBook(sha256Hex);
          const said = [];
          for (const ev of log) for (const p of await book.see(ev)) said.push([p.seq, p.why]);
          out.push(said);
        }
        console.log(JSON.stringify(out));
    """, json.dumps(logs)))
    assert browser == python
    assert all(python), [i for i, said in enumerate(python) if not said]  # every log breaks a rule
    # Every reason rules/witness.py gives (up to its first placeholder, where that leaves words enough to
    # tell it) is given here: no rule went untried.
    reasons = [why for said in python for _, why in said]
    source = (ROOT / "rules" / "witness.py").read_text()
    given = {m.split("{")[0].split(" #")[0].rstrip(" ,")
             for m in re.findall(r'(?:return|out\.append\(\(\w+(?:\.seq)?,)\s*f?"([^"]+)', source)}
    missing = {g for g in given if len(g) > 12 and not any(r.startswith(g) for r in reasons)}
    assert not missing, missing
    assert len(given) > 20


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
