"""Campaign settings: each system's options, declared once.

A system lists its options in ``rules/<system>/settings.py`` as :class:`Option`
declarations (key, default, range or choices, help text and the reading of
``docs/rules.md`` it settles). Everything else is derived from that one list:
the defaults, the validation of a GM's change (errors name the option and its
range), the settings page's form and the ``campaign_configured`` event's
payload.

Options are stored nested, as the engines read them (``state["sheet"]
["options"]["advance_costs"]["skill"]``); a declaration's ``key`` is the
dotted path (``"advance_costs.skill"``). A ``campaign_configured`` event
carries the whole nested set, so applying it needs no other knowledge
(:func:`apply_configured`, shared by every system's ``evolve``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Mapping

from .base import RuleError, SheetError, copy_json
from .declare import Choice, Field, Flag, Integer, ListOf

# The event a GM's change of the campaign's settings is stored as.
CONFIGURED = "campaign_configured"

MAX_LIST = 10

# An option's ``kind`` (the settings page's word) and the field kind of rules/declare.py it is.
FIELD_KINDS = {"int": Integer, "bool": Flag, "choice": Choice, "int_list": ListOf}


@dataclass(frozen=True)
class Option:
    """One campaign setting of a system.

    ``kind``: ``"int"`` (``lo``..``hi``), ``"bool"``, ``"choice"`` (one of
    ``choices``) or ``"int_list"`` (1..``MAX_LIST`` whole numbers, each
    ``lo``..``hi``): each is a field kind of ``rules/declare.py`` (:attr:`field`),
    which checks a value and words the refusal. ``label`` is what the settings page shows, ``help`` why a
    group would change it; ``reading`` names the docs/rules.md entry.
    """

    key: str
    default: Any
    label: str
    help: str
    kind: str = "int"
    lo: int | None = None
    hi: int | None = None
    choices: tuple = ()
    reading: str = ""
    house_rule: bool = False  # not in the text at all (a health track): off or clearly marked

    def __post_init__(self):
        if self.kind not in FIELD_KINDS:
            raise ValueError(f"{self.key}: kind must be one of {', '.join(FIELD_KINDS)}")

    @property
    def field(self) -> Field:
        """The option as a field of ``rules/declare.py``: one vocabulary of kinds, ranges and messages
        for actions, sheets and settings (``kind`` names it for the settings page)."""
        if self.kind == "int_list":
            return ListOf(Integer(self.lo, self.hi), MAX_LIST, min_items=1, label=self.label)
        if self.kind == "int":
            return Integer(self.lo, self.hi, label=self.label)
        return FIELD_KINDS[self.kind](self.choices, label=self.label) if self.kind == "choice" \
            else FIELD_KINDS[self.kind](label=self.label)

    def check(self, value: Any) -> Any:
        """``value`` if it is allowed; :class:`RuleError` naming the option and its range otherwise."""
        return self.field.clean(value, self.key)

    def describe(self) -> dict:
        """The declaration as JSON (the settings page's form, the API)."""
        out = {"key": self.key, "default": copy_json(self.default), "label": self.label, "help": self.help,
               "kind": self.kind, "reading": self.reading, "house_rule": self.house_rule}
        if self.kind in ("int", "int_list"):
            out.update(min=self.lo, max=self.hi)
        if self.kind == "choice":
            out["choices"] = list(self.choices)
        return out


def get_path(nested: Mapping, key: str) -> Any:
    value: Any = nested
    for part in key.split("."):
        value = value[part]
    return value


def set_path(nested: dict, key: str, value: Any) -> None:
    *parents, last = key.split(".")
    for part in parents:
        nested = nested.setdefault(part, {})
    nested[last] = copy_json(value)


def defaults(declared: Iterable[Option]) -> dict:
    """Every option at its default, nested."""
    out: dict = {}
    for option in declared:
        set_path(out, option.key, option.default)
    return out


def flat(declared: Iterable[Option], nested: Mapping) -> dict:
    """``{dotted key: value}`` of a nested set, defaults filling what it lacks (an older sheet's options)."""
    out = {}
    for option in declared:
        try:
            out[option.key] = copy_json(get_path(nested, option.key))
        except (KeyError, TypeError):
            out[option.key] = copy_json(option.default)
    return out


def complete(declared: Iterable[Option], nested: Mapping | None) -> dict:
    """A nested set with every declared option present (missing ones at their defaults)."""
    declared = list(declared)
    out: dict = {}
    for key, value in flat(declared, nested or {}).items():
        set_path(out, key, value)
    return out


def change(declared: Iterable[Option], current: Mapping, changes: Any) -> tuple[dict, dict]:
    """Apply a GM's ``changes`` (``{dotted key: value}``) to the ``current`` nested set.

    Returns ``(options, changed)``: the whole new nested set and
    ``{key: {"from": old, "to": new}}`` for each option that really changed.
    Raises :class:`RuleError` for an unknown key or a value out of range; an
    empty or no-op change is refused too (it would store nothing new).
    """
    declared = {o.key: o for o in declared}
    if not isinstance(changes, dict) or not changes:
        raise RuleError("'settings' must be an object of {option: value}; the options are "
                        f"{', '.join(declared)}.", "invalid")
    before = flat(declared.values(), current)
    after = dict(before)
    for key, value in changes.items():
        option = declared.get(key)
        if option is None:
            raise RuleError(f"There is no setting '{str(key)[:60]}'; the settings are {', '.join(declared)}.",
                            "invalid")
        after[key] = option.check(value)
    changed = {k: {"from": before[k], "to": after[k]} for k in declared if after[k] != before[k]}
    if not changed:
        raise RuleError("Those are already the campaign's settings: nothing changed.", "unchanged")
    nested: dict = {}
    for key, value in after.items():
        set_path(nested, key, value)
    return nested, changed


def sheet_options(declared: Iterable[Option], raw: Any, field: str = "options") -> dict:
    """A sheet's ``options`` (nested, any subset) checked against the declarations and completed.

    How a character's own options are read: in logs from before campaign
    settings, and the campaign's settings copied into a new character's sheet.
    Raises :class:`SheetError` naming ``options.<key>`` and the allowed range."""
    declared = list(declared)
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise SheetError(field, "must be an object of campaign options.")
    known_prefixes = {o.key.rsplit(".", 1)[0] for o in declared if "." in o.key}
    keys = {o.key for o in declared}

    def walk(obj: dict, prefix: str) -> None:
        for name, value in obj.items():
            key = f"{prefix}{name}"
            if key in keys:
                continue
            if key in known_prefixes:
                if not isinstance(value, dict):
                    raise SheetError(f"{field}.{key}", "must be an object.")
                walk(value, key + ".")
                continue
            allowed = sorted({k.split(".")[prefix.count(".")] for k in keys if k.startswith(prefix)})
            raise SheetError(f"{field}.{key}", f"unknown option; allowed: {', '.join(allowed)}.")

    walk(raw, "")
    out: dict = {}
    for option in declared:
        try:
            value = get_path(raw, option.key)
        except KeyError:
            value = option.default
        else:
            try:
                value = option.check(value)
            except RuleError as e:
                raise SheetError(f"{field}.{option.key}", e.message) from None
        set_path(out, option.key, value)
    return out


def apply_configured(state: dict, payload: Mapping) -> None:
    """``evolve`` of ``campaign_configured`` for any system: the sheet's options become the campaign's."""
    state["sheet"]["options"] = copy_json(payload["options"])
