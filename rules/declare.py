"""Declarations: each action, event and sheet field of a system said once.

A system declares what an action looks like (its fields, their kinds and
ranges, who may send it, whether it rolls, which events it records) next to
the function that decides it, and what every event it records is called
(a past-tense name, a version, a one-line description, the names and versions
it had before). Everything else is derived from these declarations:

* server validation: :meth:`ActionSpec.validate` turns a submitted action into
  a normalised dict or raises :class:`RuleError` naming the field and its
  allowed range; the action function only checks what depends on the state
  ("you do not know that skill", "not enough Fate");
* the JSON the browser builds its forms and limits from (:meth:`ActionSpec.as_json`,
  :func:`system_json`);
* the OpenAPI components (:meth:`ActionSpec.json_schema`);
* reading old events: :meth:`EventBook.upcast` renames an event stored under a
  former name and raises its payload to the current version, at read time, so
  the stored log (and its hash chain) is never rewritten.

Think Django forms or DRF serializers in miniature, with no Django: ``rules/``
stays pure. ``docs/declaring-actions.md`` walks through adding a field.

Field kinds, in the game's words: :class:`Integer` (a whole number from ``lo``
to ``hi``), :class:`Text` (at most ``max_length`` characters, stripped),
:class:`Choice` (one of a few values, matched without regard to case),
:class:`Flag` (true or false), :class:`ListOf` (at most ``max_items`` of one
kind), :class:`Group` (a small object of named fields), :class:`Object` (an
object its reader checks) and :class:`Either` (one of a few kinds). Every kind is
required unless it is ``optional`` or has a ``default``; a JSON ``null`` or a
blank text counts as "not given".
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping, Sequence

from .base import Event, RuleError, SheetError

NOT_GIVEN: Any = type("NotGiven", (), {"__repr__": lambda self: "NOT_GIVEN", "__bool__": lambda self: False})()
WHO = ("player", "gm")  # who may send an action: the character's player (and the GM), or the GM only


def shown(value: Any) -> str:
    """A submitted value, safe to put in a message: short, and never a huge number
    (Python refuses to print an int of over 4300 digits)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value) if abs(value) < 10**12 else ("a huge number" if value > 0 else "a huge negative number")
    if isinstance(value, str):
        return repr(value[:40] + ("…" if len(value) > 40 else ""))
    if isinstance(value, (list, tuple)):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return repr(value)[:40]


def _absent(value: Any) -> bool:
    """JSON null and blank text count as "not given" (what an empty form field sends)."""
    return value is None or value is NOT_GIVEN or (isinstance(value, str) and not value.strip())


def _invalid(message: str) -> RuleError:
    return RuleError(message, "invalid")


# --- field kinds --------------------------------------------------------------------------


class Field:
    """One field of an action, a sheet or a group. Subclasses say what a value
    must be (``clean``), how a form shows it (``as_json``) and its JSON Schema."""

    kind = "field"

    def __init__(self, *, label: str = "", help: str = "", optional: bool = False, default: Any = NOT_GIVEN,
                 required_when: Mapping[str, Sequence[Any]] | None = None):
        self.label = label
        self.help = help
        self.default = default
        # Optional: absent means None (or the default); required_when makes an optional field
        # required when another field of the same action has one of the listed values.
        self.optional = optional or default is not NOT_GIVEN or bool(required_when)
        self.required_when = {k: tuple(v) for k, v in (required_when or {}).items()}

    # What a value must be, in words, for messages and form hints ("a whole number from 1 to 3").
    def wants(self) -> str:
        raise NotImplementedError

    def clean(self, value: Any, path: str) -> Any:
        """The normalised value, or :class:`RuleError` naming ``path`` and what it must be."""
        raise NotImplementedError

    def read(self, value: Any, path: str, required: bool | None = None) -> Any:
        """Clean a value that may be missing (``NOT_GIVEN``, ``None``, blank text)."""
        if _absent(value):
            if required if required is not None else not self.optional:
                raise _invalid(f"'{path}' is required: {self.wants()}.")
            return None if self.default is NOT_GIVEN else self.default
        return self.clean(value, path)

    def as_json(self) -> dict:
        out = {"kind": self.kind, "label": self.label, "required": not self.optional}
        if self.help:
            out["help"] = self.help
        if self.default is not NOT_GIVEN:
            out["default"] = self.default
        if self.required_when:
            out["requiredWhen"] = {k: list(v) for k, v in self.required_when.items()}
        return out

    def json_schema(self) -> dict:
        raise NotImplementedError

    def example(self) -> Any:
        """A valid value (the default if there is one): for docs, tests and form starting points."""
        return self.default if self.default is not NOT_GIVEN else self._example()

    def _example(self) -> Any:
        raise NotImplementedError

    def _schema(self, schema: dict) -> dict:
        description = " ".join(part for part in (self.label and f"{self.label}.", self.help) if part)
        if description:
            schema["description"] = description
        if self.default is not NOT_GIVEN:
            schema["default"] = self.default
        return schema


class Integer(Field):
    """A whole number from ``lo`` to ``hi`` (``true``/``false`` and ``2.5`` are not)."""

    kind = "integer"

    def __init__(self, lo: int, hi: int, **kw):
        super().__init__(**kw)
        self.lo, self.hi = lo, hi

    def wants(self) -> str:
        return f"a whole number from {self.lo} to {self.hi}"

    def clean(self, value: Any, path: str) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise _invalid(f"'{path}' must be a whole number from {self.lo} to {self.hi}, not {shown(value)}.")
        if not self.lo <= value <= self.hi:
            raise _invalid(f"'{path}' must be from {self.lo} to {self.hi}, not {shown(value)}.")
        return value

    def _example(self) -> int:
        return max(self.lo, min(self.hi, 1))

    def as_json(self) -> dict:
        return {**super().as_json(), "min": self.lo, "max": self.hi}

    def json_schema(self) -> dict:
        return self._schema({"type": "integer", "minimum": self.lo, "maximum": self.hi})


# Text-direction overrides, embeddings, isolates and marks: in a name they make it read as another
# ("Evil\u202eeman") and reorder whatever follows it on a log line, an audit row or an export cell.
# (Joiners stay: scripts and emoji sequences need them.)
BIDI_CONTROLS = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c")


_CONTROLS = "".join(chr(i) for i in (*range(0x20), *range(0x7f, 0xa0)))  # Unicode's Cc, all of it


@functools.lru_cache(maxsize=None)
def _unsafe(allowed: str) -> re.Pattern:
    # One compiled class per ``allowed``: a character-by-character category lookup was the main
    # cost of checking a long reason (a command's CPU).
    banned = "".join(c for c in _CONTROLS if c not in allowed) + "".join(sorted(BIDI_CONTROLS))
    return re.compile("[" + re.escape(banned) + "]")


def unsafe_text(text: str, allowed: str = "") -> bool:
    """Whether ``text`` holds a control character (but those in ``allowed``) or a text-direction mark."""
    return _unsafe(allowed).search(text) is not None


class Text(Field):
    """Text of 1 to ``max_length`` characters, stripped of surrounding spaces."""

    kind = "text"

    def __init__(self, max_length: int, *, lines: bool = False, **kw):
        super().__init__(**kw)
        self.max_length = max_length
        # ``lines``: line breaks and tabs are text too (a chat message), every other control character not.
        self.lines = lines

    def wants(self) -> str:
        return f"text of 1 to {self.max_length} characters"

    def clean(self, value: Any, path: str) -> str:
        if not isinstance(value, str) or len(value.strip()) > self.max_length:
            raise _invalid(f"'{path}' must be {self.wants()}.")
        if unsafe_text(value, "\n\t" if self.lines else ""):  # read on everyone's log: it must not reorder it
            raise _invalid(f"'{path}' can't contain control characters"
                           + (" (but line breaks and tabs)" if self.lines else " (tabs, line breaks)")
                           + " or text-direction marks.")
        return value.strip()

    def _example(self) -> str:
        return "x"

    def as_json(self) -> dict:
        return {**super().as_json(), "maxLength": self.max_length, **({"lines": True} if self.lines else {})}

    def json_schema(self) -> dict:
        return self._schema({"type": "string", "maxLength": self.max_length})


class Choice(Field):
    """One of ``choices``: values, or ``(value, label)`` pairs. Text matches without
    regard to case or surrounding spaces and is returned as declared. ``aliases``
    (``{"dangerous": 2}``) are other words accepted for a value."""

    kind = "choice"

    def __init__(self, choices: Iterable[Any], aliases: Mapping[str, Any] | None = None, **kw):
        super().__init__(**kw)
        pairs = [c if isinstance(c, tuple) else (c, None) for c in choices]
        self.values = tuple(value for value, _ in pairs)
        self.labels = {value: label for value, label in pairs if label}
        self.aliases = dict(aliases or {})
        self._folded = {v.casefold(): v for v in self.values if isinstance(v, str)}
        self._folded.update({word.casefold(): value for word, value in self.aliases.items()})

    def wants(self) -> str:
        named = list(self.values)  # the values, not the labels: a value is what may be sent
        return "one of " + (", ".join(map(str, named[:-1])) + " or " + str(named[-1]) if len(named) > 1 else str(named[0]))

    def clean(self, value: Any, path: str) -> Any:
        if isinstance(value, str) and value.strip().casefold() in self._folded:
            return self._folded[value.strip().casefold()]
        if not isinstance(value, (str, bool)) and value in self.values:
            return value
        raise _invalid(f"'{path}' must be {self.wants()}, not {shown(value)}.")

    def _example(self) -> Any:
        return self.values[0]

    def as_json(self) -> dict:
        out = {**super().as_json(), "choices": [{"value": v, "label": self.labels.get(v, str(v))} for v in self.values]}
        if self.aliases:
            out["aliases"] = dict(self.aliases)
        return out

    def json_schema(self) -> dict:
        return self._schema({"enum": [*self.values, *self.aliases]})


class Flag(Field):
    """True or false; ``default`` false unless said otherwise."""

    kind = "flag"

    def __init__(self, default: bool = False, **kw):
        super().__init__(default=default, **kw)

    def wants(self) -> str:
        return "true or false"

    def clean(self, value: Any, path: str) -> bool:
        if not isinstance(value, bool):
            raise _invalid(f"'{path}' must be true or false.")
        return value

    def _example(self) -> bool:
        return False

    def json_schema(self) -> dict:
        return self._schema({"type": "boolean"})


class ListOf(Field):
    """A list of at most ``max_items`` values of one kind (``item``); with
    ``unique``, no value twice (text compared without regard to case)."""

    kind = "list"

    def __init__(self, item: Field, max_items: int, *, min_items: int = 0, unique: bool = False, **kw):
        kw.setdefault("default", [] if min_items == 0 and not kw.get("optional") else NOT_GIVEN)
        super().__init__(**kw)
        self.item, self.min_items, self.max_items, self.unique = item, min_items, max_items, unique

    def wants(self) -> str:
        count = f"at most {self.max_items}" if not self.min_items else f"{self.min_items} to {self.max_items}"
        what = f"{self.item.label}: " if self.item.label else ""
        return f"a list of {count} ({what}{self.item.wants()} each)"

    def clean(self, value: Any, path: str) -> list:
        if not isinstance(value, list):
            raise _invalid(f"'{path}' must be {self.wants()}.")
        if not self.min_items <= len(value) <= self.max_items:
            raise _invalid(f"'{path}' must be {self.wants()}, not {len(value)} of them.")
        out = [self.item.read(item, f"{path}[{i}]", required=True) for i, item in enumerate(value)]
        if self.unique:
            seen = set()
            for i, item in enumerate(out):
                key = item.casefold() if isinstance(item, str) else item
                if key in seen:
                    raise _invalid(f"'{path}[{i}]': {shown(item)} is named twice.")
                seen.add(key)
        return out

    def _example(self) -> list:
        return [self.item.example() for _ in range(self.min_items)]

    def as_json(self) -> dict:
        return {**super().as_json(), "item": self.item.as_json(), "minItems": self.min_items,
                "maxItems": self.max_items, "unique": self.unique}

    def json_schema(self) -> dict:
        schema = {"type": "array", "items": self.item.json_schema(), "maxItems": self.max_items}
        if self.min_items:
            schema["minItems"] = self.min_items
        return self._schema(schema)


class Group(Field):
    """A small object of named fields (e.g. the passive side of an opposed check)."""

    kind = "group"

    def __init__(self, fields: Mapping[str, Field], **kw):
        super().__init__(**kw)
        self.fields = dict(fields)

    def wants(self) -> str:
        return "an object with " + ", ".join(f"'{name}'" for name in self.fields)

    def clean(self, value: Any, path: str) -> dict:
        if not isinstance(value, Mapping):
            raise _invalid(f"'{path}' must be {self.wants()}.")
        return read_fields(self.fields, value, f"{path}.")

    def _example(self) -> dict:
        return {name: spec.example() for name, spec in self.fields.items() if not spec.optional}

    def as_json(self) -> dict:
        return {**super().as_json(), "fields": fields_json(self.fields)}

    def json_schema(self) -> dict:
        return self._schema(object_schema(self.fields))


class Object(Field):
    """A JSON object whose keys are read where it is used (a character sheet, a map of settings, the
    action a request asks for): the declaration says it is an object, the reader what it holds."""

    kind = "object"

    def wants(self) -> str:
        return "an object"

    def clean(self, value: Any, path: str) -> dict:
        if not isinstance(value, Mapping):
            raise _invalid(f"'{path}' must be an object.")
        return dict(value)

    def _example(self) -> dict:
        return {}

    def json_schema(self) -> dict:
        return self._schema({"type": "object", "additionalProperties": True})


class Either(Field):
    """A value of one of a few kinds (``Either(ListOf(...), Choice(["players"]))``), tried in order."""

    kind = "either"

    def __init__(self, *options: Field, **kw):
        super().__init__(**kw)
        self.options = options

    def wants(self) -> str:
        return " or ".join(option.wants() for option in self.options)

    def clean(self, value: Any, path: str) -> Any:
        for option in self.options:
            try:
                return option.clean(value, path)
            except RuleError:
                continue
        raise _invalid(f"'{path}' must be {self.wants()}.")

    def _example(self) -> Any:
        return self.options[0].example()

    def as_json(self) -> dict:
        return {**super().as_json(), "options": [option.as_json() for option in self.options]}

    def json_schema(self) -> dict:
        return self._schema({"anyOf": [option.json_schema() for option in self.options]})


def read_fields(fields: Mapping[str, Field], data: Mapping, prefix: str = "") -> dict:
    """Clean every declared field of ``data`` (other keys are left out), in order,
    honouring ``required_when`` against the values cleaned so far."""
    out: dict[str, Any] = {}
    for name, spec in fields.items():
        required = None
        if spec.required_when:
            required = all(out.get(other) in values for other, values in spec.required_when.items())
            required = required or not spec.optional
        out[name] = spec.read(data.get(name, NOT_GIVEN), prefix + name, required)
    return out


def fields_json(fields: Mapping[str, Field]) -> list[dict]:
    return [{"name": name, **spec.as_json()} for name, spec in fields.items()]


def object_schema(fields: Mapping[str, Field]) -> dict:
    required = [name for name, spec in fields.items() if not spec.optional]
    schema: dict[str, Any] = {"type": "object", "properties": {name: spec.json_schema() for name, spec in fields.items()}}
    if required:
        schema["required"] = required
    return schema


# --- actions --------------------------------------------------------------------------------


Decide = Callable[[dict, dict, Any], list[Event]]


@dataclass(frozen=True)
class ActionSpec:
    """One action: its declaration and the function that decides it.

    Calling the spec (``spec(state, action, dice)``) validates the action and
    runs the function on the normalised dict, so every way in (the platform,
    tests, replays) passes the same checks.
    """

    type: str
    decide: Decide
    title: str
    help: str = ""
    fields: Mapping[str, Field] = field(default_factory=dict)
    by: str = "player"  # "player": the character's player (and the GM); "gm": the GM only
    rolls: bool = False
    emits: tuple[str, ...] = ()
    # Groups of fields of which exactly one must be given, each with the message that says so.
    one_of: tuple[tuple[tuple[str, ...], str], ...] = ()

    def __post_init__(self):
        if self.by not in WHO:
            raise ValueError(f"{self.type}: 'by' must be one of {WHO}")
        for names, _ in self.one_of:
            unknown = set(names) - set(self.fields)
            if unknown or any(not self.fields[n].optional for n in names):
                raise ValueError(f"{self.type}: one_of names optional declared fields only ({sorted(unknown)})")

    @property
    def gm_only(self) -> bool:
        return self.by == "gm"

    def validate(self, action: Any) -> dict:
        """The action normalised (``type`` and every declared field, defaults filled
        in, nothing else), or :class:`RuleError` naming the field and its range."""
        if not isinstance(action, Mapping):
            raise _invalid("An action must be a JSON object.")
        for names, message in self.one_of:
            given = [n for n in names if not _absent(action.get(n))]
            if len(given) != 1:
                raise _invalid(message)
        return {"type": self.type, **read_fields(self.fields, action)}

    def as_validated(self, **given: Any) -> dict:
        """``given`` as :meth:`validate` would leave it, every other declared field absent (its default),
        without the checks: for the rules' own calls with values already in the declared form (a
        sheet's own names), where validating each again was most of the call's time (a pushed sheet's
        advance prices)."""
        return {"type": self.type, **{name: given[name] if name in given else None if spec.default is NOT_GIVEN
                                      else spec.default for name, spec in self.fields.items()}}

    def example(self, **given: Any) -> dict:
        """A valid action: ``given`` fields, and an example of every other required
        field (and of the first field of each ``one_of`` group nothing in ``given`` names)."""
        out: dict[str, Any] = {"type": self.type}
        for names, _ in self.one_of:
            if not set(names) & set(given):
                out[names[0]] = self.fields[names[0]].example()
        for name, spec in self.fields.items():
            if not spec.optional:
                out[name] = spec.example()
            elif spec.required_when and all(out.get(k, given.get(k)) in v for k, v in spec.required_when.items()):
                out[name] = spec.example()
        return {**out, **given}

    def __call__(self, state: dict, action: Any, dice: Any) -> list[Event]:
        return self.decide(state, self.validate(action), dice)

    def as_json(self) -> dict:
        """What the browser builds this action's form and limits from."""
        return {
            "type": self.type,
            "title": self.title,
            "help": self.help,
            "by": self.by,
            "rolls": self.rolls,
            "emits": list(self.emits),
            "fields": fields_json(self.fields),
            "oneOf": [list(names) for names, _ in self.one_of],
        }

    def json_schema(self) -> dict:
        """The action as an OpenAPI (JSON Schema) object. Platform fields
        (``character``, ``visibility``, ...) may ride along, so it stays open."""
        schema = object_schema(self.fields)
        schema["properties"] = {"type": {"type": "string", "enum": [self.type]}, **schema["properties"]}
        schema["required"] = ["type", *schema.get("required", [])]
        schema["additionalProperties"] = True
        schema["description"] = " ".join(part for part in (
            self.title + ".", self.help, "GM only." if self.gm_only else "", "Rolls dice." if self.rolls else "",
            f"Records {', '.join(self.emits)}." if self.emits else "") if part)
        if self.one_of:
            schema["x-one-of-fields"] = [list(names) for names, _ in self.one_of]
        return {"title": self.title, **schema}


def action(type: str, *, title: str, help: str = "", fields: Mapping[str, Field] | None = None, by: str = "player",
           rolls: bool = False, emits: Sequence[str] = (), one_of: Sequence[tuple[Sequence[str], str]] = ()):
    """Declare the action decided by the decorated function; the result is its
    :class:`ActionSpec` (still callable as ``fn(state, action, dice)``)."""
    def declare(fn: Decide) -> ActionSpec:
        return ActionSpec(type, fn, title, help, dict(fields or {}), by, rolls, tuple(emits),
                          tuple((tuple(names), message) for names, message in one_of))
    return declare


def actions_by_type(*specs: ActionSpec) -> dict[str, ActionSpec]:
    """``{type: spec}``, refusing a type declared twice."""
    out: dict[str, ActionSpec] = {}
    for spec in specs:
        if spec.type in out:
            raise ValueError(f"the action '{spec.type}' is declared twice")
        out[spec.type] = spec
    return out


# --- events ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class EventSpec:
    """One kind of event: its past-tense name, its payload's version, and how to
    read it when it was stored under an older name or version.

    ``formerly``: older names; an event stored under one of them reads as this
    one, keeping its version. ``upcasters``: ``{n: fn(payload) -> payload}``
    lifts a version-``n`` payload to ``n + 1`` (returning a new dict). The
    stored row is never changed: its hash covers what was stored.

    ``description``: the event's sentence, a template over the payload (``"earned {points} XP"``,
    :func:`fill_description`): the table's log line says it, and so do the audit page and the exports.
    ``tail``: what the audit's one line says after it (the outcome or the total the table shows beside
    the sentence, a note), a template too, with its own leading punctuation (``", {outcome}"``).
    ``words``: ``{key: {value: words}}`` for a ``{key:word}`` in either (``{"use": {"reroll": "reroll
    the die"}}``), sent to the table with the sentence.

    ``payload``: the keys the current version's payload carries and the type of each
    (:data:`PAYLOAD_TYPES`; ``"str?"``: absent or null as well), checked by
    :func:`payload_problems` against every event a played session stores, and written into
    the OpenAPI description. Every event the code can record declares it
    (``tests/campaign/test_declared.py``); ``None`` is left to made-up events in tests.
    """

    type: str
    description: str = ""
    version: int = 1
    tail: str = ""
    words: Mapping[str, Mapping[Any, str]] = field(default_factory=dict)
    formerly: tuple[str, ...] = ()
    upcasters: Mapping[int, Callable[[dict], dict]] = field(default_factory=dict)
    payload: Mapping[str, str] | None = None

    def __post_init__(self):
        missing = [n for n in range(1, self.version) if n not in self.upcasters]
        if missing:
            raise ValueError(f"{self.type} v{self.version}: no upcaster from version(s) {missing}")
        unknown = {kind for kind in (self.payload or {}).values() if kind.rstrip("?") not in PAYLOAD_TYPES}
        if unknown:
            raise ValueError(f"{self.type}: unknown payload types {sorted(unknown)}; known: {', '.join(PAYLOAD_TYPES)}")

    def describe(self, payload: Mapping) -> str:
        """The description filled from a (current-version) payload (:func:`fill_description`; the
        table's JavaScript fills it the same way)."""
        return fill_description(self.description, payload, self.words)

    def describe_tail(self, payload: Mapping) -> str:
        """The ``tail`` filled from a (current-version) payload: what the audit says after the sentence."""
        return fill_description(self.tail, payload, self.words)

    def as_json(self) -> dict:
        return {"type": self.type, "version": self.version, "description": self.description,
                **({"words": {k: dict(v) for k, v in self.words.items()}} if self.words else {}),
                "formerly": list(self.formerly), "payload": None if self.payload is None else dict(self.payload)}

    def problems(self, payload: Mapping, extra: Iterable[str] = ()) -> list[str]:
        """What ``payload`` breaks of the declared ``payload`` (see :func:`payload_problems`)."""
        if self.payload is None:
            return [f"{self.type} declares no payload"]
        return payload_problems(self.payload, payload, extra)


# The JSON types an event's payload declares, by the word a declaration uses.
PAYLOAD_TYPES: dict[str, Callable[[Any], bool]] = {
    "int": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "num": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "str": lambda v: isinstance(v, str),
    "bool": lambda v: isinstance(v, bool),
    "list": lambda v: isinstance(v, list),
    "dict": lambda v: isinstance(v, dict),
    "any": lambda v: True,
}


def payload_problems(declared: Mapping[str, str], payload: Mapping, extra: Iterable[str] = ()) -> list[str]:
    """Each way ``payload`` differs from ``declared`` (``{key: type}``, ``"type?"``: may be absent or
    null): a key missing, a value of another type, a key not declared. ``extra``: keys any event may
    carry besides its own (what the platform records beside a decision: its dice, its command)."""
    out = []
    for key, kind in declared.items():
        optional, kind = kind.endswith("?"), kind.rstrip("?")
        if key not in payload or payload[key] is None:
            if not optional:
                out.append(f"'{key}' is missing" if key not in payload else f"'{key}' is null")
        elif not PAYLOAD_TYPES[kind](payload[key]):
            out.append(f"'{key}' is {type(payload[key]).__name__}, not {kind}")
    allowed = set(declared) | set(extra)
    out += [f"'{key}' is not declared" for key in payload if key not in allowed]
    return out


def fill_description(template: str, payload: Mapping, words: Mapping[str, Mapping] | None = None) -> str:
    """An event's declared sentence filled from its payload, exactly as the table's fillTemplate
    (static/talekeeper/format.js) fills it: the audit, the exports and the table say one sentence.

    * ``{key}``: the payload's value; ``{key.sub}`` a value inside a dict of it (of each item, in a
      list). A string as it is (a name keeps its apostrophe, no quotes), a missing value as "?", a
      number as written (anything else as :func:`shown` says it: there fillTemplate differs, and no
      template names such a value).
    * ``{key:format}``, formats applied left to right (``{skills:cap:plus}``): ``cap`` (first letter
      upper case), ``words`` (underscores as spaces), both item by item on a list; ``signed`` (+2,
      −1, ±0); ``count`` (how many items a list or a dict holds); ``join`` and ``plus`` (a list's
      items with ", " or " + " between them); ``word`` (the value's words in the declaration's
      ``words[key]``, else the value); ``changes`` (``{key: {"from", "to"}}`` or ``[{"path", "from",
      "to"}]`` as "key 1 → 2, ...", a path without its leading ``sheet.``; a list or a dict in it as
      JSON); ``if`` (nothing: in an optional part, a condition on the value).
    * ``{key|one|many}`` (with formats too: ``{spots:count|spot|spots}``): the count and its noun in
      agreement, "1 round", "2 rounds" ("? rounds" with none), so a sentence never says "round(s)".
    * ``{key=value}``: nothing; a condition, in an optional part: the value is ``value`` (as said).
    * ``[...]``: said only when every value in it is given (not missing, null, blank, false, 0 or
      empty: a scene the GM named, a modifier other than 0), else left out; a part with conditions
      in it (``{key=value}``, ``{key:if}``) is said when they hold, whatever its other values.
      ``[a|b]``: the first alternative said so, or nothing. Brackets do not nest.

    One pass: a value filled in is never read again as a template."""
    def holds(match: re.Match) -> bool:
        got = _lookup(payload, match.group(2))
        if match.group(3) is not None:
            return got is not None and _text(got) == match.group(3)
        return _given(got)

    def value(match: re.Match) -> str:
        if match.group(1) is not None:  # an optional part: filled on its own, never read a second time
            for alternative in _alternatives(match.group(1)):
                found = list(_FILLED.finditer(alternative))
                conditions = [m for m in found if m.group(3) is not None or ":if" in (m.group(4) or "")]
                if all(holds(m) for m in conditions or found):
                    return _FILLED.sub(value, alternative)
            return ""
        if match.group(3) is not None:  # a condition says nothing
            return ""
        got = _lookup(payload, match.group(2))
        for how in filter(None, (match.group(4) or "").split(":")):
            got = _formatted(got, how, (words or {}).get(match.group(2)))
        said = "?" if got is None else got if isinstance(got, str) else shown(got)
        if match.group(5) is None:
            return said
        one = got == 1 and not isinstance(got, bool)
        return f"{said} {match.group(5) if one else match.group(6)}"

    return _FILLED.sub(value, template)


# An optional part in brackets, or a ``{key}`` / ``{key.sub:format|one|many}``; the table's fillTemplate
# (format.js) reads the same.
_FILLED = re.compile(r"\[([^\[\]]*)\]|\{(\w+(?:\.\w+)*)(?:=([\w ]+)|((?::\w+)*)(?:\|([^|{}]*)\|([^|{}]*))?)\}")
FORMATS = ("cap", "words", "signed", "count", "join", "plus", "word", "changes", "if")


def _alternatives(part: str) -> list[str]:
    """An optional part's alternatives: split at each ``|`` outside braces."""
    out, depth, start = [], 0, 0
    for i, char in enumerate(part):
        depth += char == "{"
        depth -= char == "}"
        if char == "|" and depth == 0:
            out.append(part[start:i])
            start = i + 1
    return [*out, part[start:]]


def _lookup(payload: Any, path: str) -> Any:
    for key in path.split("."):  # through a list, item by item: ``{to.username:join}``
        if isinstance(payload, list):
            payload = [item.get(key) if isinstance(item, Mapping) else None for item in payload]
        else:
            payload = payload.get(key) if isinstance(payload, Mapping) else None
    return payload


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _given(value: Any) -> bool:
    return not (value is None or value is False or value == "" or (_number(value) and value == 0)
                or (isinstance(value, (list, dict)) and not value))


def _text(value: Any) -> str:
    return value if isinstance(value, str) else shown(value)


def _changed(value: Any) -> str:
    if isinstance(value, (list, dict)):
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return "?" if value is None else _text(value)


def _changes(value: Any) -> Any:
    if isinstance(value, dict):
        pairs = [(key, change) for key, change in value.items()]
    elif isinstance(value, list):
        pairs = [(c.get("path"), c) for c in value if isinstance(c, dict)]
    else:
        return value
    return ", ".join(f"{_text(what).removeprefix('sheet.') if what is not None else '?'} "
                     f"{_changed(c.get('from') if isinstance(c, dict) else None)} → "
                     f"{_changed(c.get('to') if isinstance(c, dict) else None)}" for what, c in pairs)


def _formatted(value: Any, how: str, words: Mapping | None) -> Any:
    if how not in FORMATS:
        raise ValueError(f"unknown format '{how}' in a template: one of {', '.join(FORMATS)}")
    if value is None:
        return None
    if how in ("cap", "words"):
        def one(item):
            if not isinstance(item, str):
                return item
            return item[:1].upper() + item[1:] if how == "cap" else item.replace("_", " ")
        return [one(item) for item in value] if isinstance(value, list) else one(value)
    if how == "signed":
        if not _number(value):
            return value
        return f"+{shown(value)}" if value > 0 else f"−{shown(-value)}" if value < 0 else "±0"
    if how == "count":
        return len(value) if isinstance(value, (list, dict)) else None
    if how in ("join", "plus"):
        joined = ("" if item is None else _text(item) for item in value) if isinstance(value, list) else None
        return (", " if how == "join" else " + ").join(joined) if joined is not None else value
    if how == "changes":
        return _changes(value)
    if how == "word":
        wordable = isinstance(value, (str, int)) and not isinstance(value, bool)
        return (words or {}).get(value, value) if wordable else value
    return ""  # "if"


class EventBook:
    """A system's events by name (current and former), and the one upcaster
    every fold and every reader goes through."""

    def __init__(self, specs: Iterable[EventSpec] = ()):
        self.specs: dict[str, EventSpec] = {}
        self._by_name: dict[str, EventSpec] = {}
        for spec in specs:
            for name in (spec.type, *spec.formerly):
                if name in self._by_name:
                    raise ValueError(f"the event name '{name}' is declared twice")
                self._by_name[name] = spec
            self.specs[spec.type] = spec

    def __contains__(self, name: str) -> bool:
        return name in self._by_name

    def __iter__(self):
        return iter(self.specs.values())

    def current_name(self, name: str) -> str:
        """The name an event stored as ``name`` reads under today."""
        spec = self._by_name.get(name)
        return name if spec is None else spec.type

    def stored_names(self, name: str) -> list[str]:
        """Every name an event of (current or former) ``name`` may be stored under."""
        spec = self._by_name.get(name)
        return [name] if spec is None else [spec.type, *spec.formerly]

    def renames(self) -> dict[str, str]:
        """``{former name: current name}``, for readers that only need the name (the browser)."""
        return {old: spec.type for spec in self.specs.values() for old in spec.formerly}

    def upcast(self, event: Event) -> Event:
        """``event`` as its current name and version say (the same object when it is current)."""
        spec = self._by_name.get(event.type)
        if spec is None or (event.type == spec.type and event.version == spec.version):
            return event
        payload, version = event.payload, event.version
        if version > spec.version:
            raise ValueError(f"{event.type} v{version} is newer than this code knows (v{spec.version})")
        while version < spec.version:
            payload = spec.upcasters[version](payload)
            version += 1
        return Event(spec.type, payload, version)

    def spec_of(self, type: str) -> EventSpec | None:
        """The declaration an event stored under ``type`` (today's name or a former one) reads by."""
        return self._by_name.get(type)

    def upcast_parts(self, type: str, version: int, payload: Mapping) -> tuple[str, int, Mapping]:
        """:meth:`upcast` for readers that hold a stored row's parts, not an :class:`Event`."""
        event = self.upcast(Event(type, payload, version))
        return event.type, event.version, event.payload

    def as_json(self) -> dict:
        return {spec.type: spec.as_json() for spec in self.specs.values()}


# --- sheets ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class SheetSpec:
    """What a character sheet holds, as a creation form shows it: its fields
    with their kinds and ranges. :meth:`validate` checks shapes and ranges from
    them; a system's ``validate_sheet`` calls it and keeps only what depends on
    other fields (an attribute's ceiling set by an option, creation budgets)."""

    fields: Mapping[str, Field]
    help: str = ""

    def validate(self, sheet: Any, extra: Iterable[str] = ()) -> dict:
        """The sheet's declared fields, shapes and ranges checked and normalised, or
        :class:`SheetError` naming the field. A sheet is stored for good, so unlike an
        action it refuses keys it does not declare (``extra``: keys the system reads
        itself, such as ``options``), at every level, naming the key itself. As in an
        action, ``null`` and blank text mean "not given"."""
        if not isinstance(sheet, Mapping):
            raise SheetError("sheet", f"must be an object with {', '.join(repr(n) for n in self.fields)}.")
        _refuse_unknown(self.fields, sheet, "", set(extra))
        try:
            return read_fields(self.fields, sheet)
        except SheetError:
            raise
        except RuleError as error:
            # Every field kind's message starts with the quoted path it refuses.
            match = re.match(r"'([^']*)':? (.*)", error.message, re.S)
            raise (SheetError(match[1], match[2]) if match else SheetError("sheet", error.message)) from None

    def as_json(self) -> dict:
        return {"help": self.help, "fields": fields_json(self.fields)}

    def json_schema(self) -> dict:
        return object_schema(self.fields)


def _refuse_unknown(fields: Mapping[str, Field], data: Mapping, prefix: str, extra: set) -> None:
    unknown = sorted(str(k) for k in data if k not in fields and k not in extra)
    if unknown:
        raise SheetError(prefix + unknown[0], f"unknown field; allowed: {', '.join(sorted([*fields, *extra]))}.")
    for name, spec in fields.items():
        value, path = data.get(name), prefix + name
        if isinstance(spec, Group) and isinstance(value, Mapping):
            _refuse_unknown(spec.fields, value, path + ".", set())
        elif isinstance(spec, ListOf) and isinstance(spec.item, Group) and isinstance(value, list):
            for i, item in enumerate(value[:spec.max_items]):
                if isinstance(item, Mapping):
                    _refuse_unknown(spec.item.fields, item, f"{path}[{i}].", set())


# --- a whole system -------------------------------------------------------------------------


def system_json(system: Any) -> dict:
    """Everything the browser builds forms, limits and event names from, for one
    rule system (served at ``GET /api/systems/<name>`` and on the table page)."""
    actions = {t: spec.as_json() for t, spec in sorted(system.actions.items()) if isinstance(spec, ActionSpec)}
    events = system.events
    return {
        "name": system.name,
        "title": system.title,
        "actions": actions,
        "gmActions": sorted(system.gm_actions),
        "events": events.as_json() if events is not None else {},
        "renames": events.renames() if events is not None else {},
        "sheet": system.sheet.as_json() if system.sheet is not None else None,
        "exampleSheet": dict(system.example_sheet),
        # Its hooks the table reads (rules/base.py): its kinds of fight, the rolls that deal damage.
        "fights": [{"name": k.name, "words": k.words, "target": k.target}
                   for k in (system.fights.kinds if getattr(system, "fights", None) else ())],
        "damageRolls": dict(system.damage.rolls) if getattr(system, "damage", None) else {},
        # The actions that read a condition's modifier, and its effect in the text's words (rules/conditions.py).
        "conditions": ({"reads": sorted(system.conditions.actions), "effect": system.conditions.effect}
                       if getattr(system, "conditions", None) else None),
    }
