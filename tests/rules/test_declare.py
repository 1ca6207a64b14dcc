"""The declaration vocabulary (rules/declare.py): validation, form JSON, JSON Schema
and reading old events, on small test-only declarations, then on every system."""

import json

import pytest

from rules import SYSTEM_MODULES, get_system
from rules.base import FRAME_EVENTS, Event, RuleError, evolver
from rules.declare import (
    ActionSpec,
    Choice,
    EventBook,
    EventSpec,
    Flag,
    Group,
    Integer,
    ListOf,
    Text,
    action,
    system_json,
)


@action("shove", title="Shove", rolls=True, emits=("shoved",), fields={
    "strength": Integer(1, 5, label="Strength"),
    "bonus": Integer(-3, 3, default=0),
    "note": Text(20, optional=True),
    "style": Choice([("push", "Push"), ("trip", "Trip")], default="push"),
    "loud": Flag(),
    "helpers": ListOf(Text(10), 2, unique=True),
    "dl": Integer(0, 9, optional=True),
    "vs": Group({"strength": Integer(0, 5)}, optional=True),
    "why": Text(30, required_when={"style": ["trip"]}),
}, one_of=[(("dl", "vs"), "Say 'dl' or 'vs', one of them.")])
def shove(state, act, dice):
    return [Event("shoved", {"action": act})]


def refused(act, match):
    with pytest.raises(RuleError, match=match) as caught:
        shove.validate({"type": "shove", "strength": 3, "dl": 4, **act})
    assert caught.value.code == "invalid"


def test_a_valid_action_is_normalised_with_every_default():
    assert shove.validate({"type": "shove", "strength": 3, "dl": 4, "note": "  hi ", "style": "TRIP", "why": "x",
                           "visibility": "gm", "character": 7}) == {
        "type": "shove", "strength": 3, "bonus": 0, "note": "hi", "style": "trip", "loud": False, "helpers": [],
        "dl": 4, "vs": None, "why": "x"}


@pytest.mark.parametrize("act, match", [
    ({"strength": None}, r"'strength' is required: a whole number from 1 to 5\."),
    ({"strength": 6}, r"'strength' must be from 1 to 5, not 6\."),
    ({"strength": True}, r"'strength' must be a whole number from 1 to 5, not true\."),
    ({"strength": 2.5}, r"'strength' must be a whole number"),
    ({"strength": 10**5000}, r"not a huge number"),
    ({"bonus": -4}, r"'bonus' must be from -3 to 3"),
    ({"note": "x" * 21}, r"'note' must be text of 1 to 20 characters"),
    ({"note": 5}, r"'note' must be text"),
    ({"style": "kick"}, r"'style' must be one of push or trip, not 'kick'"),
    ({"loud": "yes"}, r"'loud' must be true or false"),
    ({"helpers": "Ann"}, r"'helpers' must be a list of at most 2"),
    ({"helpers": ["a", "b", "c"]}, r"not 3 of them"),
    ({"helpers": ["Ann", "ann"]}, r"'helpers\[1\]': 'ann' is named twice"),
    ({"helpers": ["Ann", 5]}, r"'helpers\[1\]' must be text"),
    ({"helpers": [""]}, r"'helpers\[0\]' is required"),
    ({"dl": None}, r"Say 'dl' or 'vs'"),
    ({"vs": {"strength": 1}}, r"Say 'dl' or 'vs'"),
    ({"dl": None, "vs": [1]}, r"'vs' must be an object with 'strength'"),
    ({"dl": None, "vs": {"strength": 9}}, r"'vs.strength' must be from 0 to 5"),
    ({"style": "trip"}, r"'why' is required: text of 1 to 30 characters"),
])
def test_every_refusal_names_the_field_and_its_range(act, match):
    refused(act, match)


def test_calling_the_spec_validates_before_the_function_runs():
    (event,) = shove({}, {"type": "shove", "strength": "3", "dl": 1} | {"strength": 2}, None)
    assert event.payload["action"]["strength"] == 2
    with pytest.raises(RuleError):
        shove({}, {"type": "shove", "strength": 9, "dl": 1}, None)
    with pytest.raises(RuleError, match="JSON object"):
        shove.validate(["shove"])


def test_the_form_json_and_the_schema_say_what_validation_checks():
    form = shove.as_json()
    fields = {f["name"]: f for f in form["fields"]}
    assert (form["type"], form["rolls"], form["by"], form["emits"], form["oneOf"]) == ("shove", True, "player", ["shoved"], [["dl", "vs"]])
    assert fields["strength"] == {"name": "strength", "kind": "integer", "label": "Strength", "required": True, "min": 1, "max": 5}
    assert fields["style"]["choices"] == [{"value": "push", "label": "Push"}, {"value": "trip", "label": "Trip"}]
    assert fields["why"]["requiredWhen"] == {"style": ["trip"]} and fields["vs"]["fields"][0]["max"] == 5
    schema = shove.json_schema()
    assert schema["required"] == ["type", "strength"]
    assert schema["properties"]["strength"] == {"type": "integer", "minimum": 1, "maximum": 5, "description": "Strength."}
    assert schema["properties"]["helpers"]["maxItems"] == 2 and schema["properties"]["note"]["maxLength"] == 20
    json.dumps(form), json.dumps(schema)


def test_a_bad_declaration_is_refused_at_import():
    with pytest.raises(ValueError):
        ActionSpec("x", shove.decide, "X", by="everyone")
    with pytest.raises(ValueError):
        action("x", title="X", fields={"a": Integer(0, 1)}, one_of=[(("a",), "a")])(shove.decide)
    with pytest.raises(ValueError, match="no upcaster"):
        EventSpec("shoved", version=2)
    with pytest.raises(ValueError, match="declared twice"):
        EventBook([EventSpec("a", formerly=("b",)), EventSpec("b")])


# --- reading old events -------------------------------------------------------------------

def _add_force(payload):
    return {**payload, "force": payload["strength"] * 2}


BOOK = EventBook([EventSpec("shoved", "shoved with force {force}", version=2, formerly=("shove",), upcasters={1: _add_force})])


def test_an_old_event_reads_under_its_current_name_and_version_without_changing_what_was_stored():
    stored = {"strength": 3}
    old = Event("shove", stored, 1)
    new = BOOK.upcast(old)
    assert (new.type, new.version, dict(new.payload)) == ("shoved", 2, {"strength": 3, "force": 6})
    assert stored == {"strength": 3} and old.type == "shove"  # the stored row (and its hash) stays as it was
    current = Event("shoved", {"strength": 1, "force": 2}, 2)
    assert BOOK.upcast(current) is current
    unknown = Event("roll", {"total": 3})
    assert BOOK.upcast(unknown) is unknown
    assert BOOK.renames() == {"shove": "shoved"} and BOOK.stored_names("shoved") == ["shoved", "shove"]
    with pytest.raises(ValueError, match="newer"):
        BOOK.upcast(Event("shoved", {}, 3))


def test_every_fold_reads_through_the_upcaster():
    seen = []
    evolve = evolver({"shoved": lambda state, p: seen.append(p["force"])}, BOOK)
    evolve.in_place({}, Event("shove", {"strength": 2}, 1))
    evolve({}, Event("shove", {"strength": 4}, 1))
    assert seen == [4, 8]
    with pytest.raises(ValueError, match="undeclared"):
        evolver({"shove": lambda s, p: None}, BOOK)


# --- every system ------------------------------------------------------------------------

SYSTEMS = sorted(SYSTEM_MODULES)


@pytest.mark.parametrize("name", SYSTEMS)
def test_every_declared_event_is_known_and_every_handler_declared(name):
    system = get_system(name)
    if system.events is None:
        pytest.skip("not declared yet")
    declared = {spec.type for spec in system.events}
    for spec in system.actions.values():
        assert set(spec.emits) <= declared, spec.type
    assert set(system.evolve.handlers) <= declared | FRAME_EVENTS
    assert system.gm_actions == {t for t, s in system.actions.items() if s.by == "gm"}
    served = system_json(system)
    assert set(served["actions"]) == set(system.actions)
    json.dumps(served)


def test_an_example_action_is_valid():
    assert shove.validate(shove.example()) == {**shove.validate(shove.example()), "strength": 1, "dl": 1}
    assert shove.example(vs={"strength": 2})["vs"] == {"strength": 2} and "dl" not in shove.example(vs={"strength": 2})
    assert shove.example(style="trip")["why"] == "x"
    for name in SYSTEMS:
        for spec in get_system(name).actions.values():
            if isinstance(spec, ActionSpec):
                spec.validate(spec.example())


def _integer_fields(fields, prefix=""):
    for name, field in fields.items():
        if field.kind == "integer":
            yield prefix + name, field
        elif field.kind == "group":
            yield from _integer_fields(field.fields, f"{prefix}{name}.")


def _with(sheet, path, value):
    sheet = json.loads(json.dumps(sheet))
    *parents, last = path.split(".")
    target = sheet
    for part in parents:
        target = target.setdefault(part, {})
    target[last] = value
    return sheet


@pytest.mark.parametrize("name", SYSTEMS)
def test_a_declared_sheet_range_is_the_range_validate_sheet_refuses_outside(name):
    """The creation form's limits (the SheetSpec) and validate_sheet agree: the example sheet
    passes, and one past either end of every declared whole number is refused, naming it."""
    from rules.base import SheetError

    system = get_system(name)
    system.validate_sheet(dict(system.example_sheet))
    probes = list(_integer_fields(system.sheet.fields))
    assert probes
    for path, field in probes:
        for bad in (field.lo - 1, field.hi + 1):
            with pytest.raises(SheetError) as refused:
                system.validate_sheet(_with(system.example_sheet, path, bad))
            assert refused.value.field.startswith(path.split(".")[0]), (path, refused.value.message)
    json.dumps(system_json(system)["sheet"])


def test_an_optional_part_of_a_sentence_is_said_only_with_its_values():
    from rules.declare import fill_description

    line = "started scene {scene}[: “{name}”]"
    assert fill_description(line, {"scene": 2, "name": "The ford"}) == "started scene 2: “The ford”"
    assert fill_description(line, {"scene": 2}) == fill_description(line, {"scene": 2, "name": ""}) == "started scene 2"
    # Filled once: a name that looks like a template is said as it is.
    assert fill_description(line, {"scene": 3, "name": "{scene} [x]"}) == "started scene 3: “{scene} [x]”"


@pytest.mark.parametrize("text", ["Evil\u202eeman", "two\nlines", "tab\there", "\u2066isolated\u2069"])
def test_declared_text_refuses_control_characters_and_text_direction_marks(text):
    """A player's text is read on every member's log: an override mark reorders the line it is on
    (a Tale contest's reason must not take U+202E). Joiners stay (emoji sequences)."""
    from rules.declare import Text

    with pytest.raises(RuleError, match="text-direction marks"):
        Text(80).clean(text, "reason")
    assert Text(80).clean(" family \U0001F468\u200d\U0001F469\u200d\U0001F467 ", "reason") == \
        "family \U0001F468\u200d\U0001F469\u200d\U0001F467"
