"""The one small interface every rule system implements.

Nothing in ``rules/`` imports Django or does I/O: a system is a set of pure
functions over plain JSON-able data, so it can be tested, replayed and reused
alone.

The shape of a system (see ``rules/README.md`` for how to add a fifth):

* ``validate_sheet(sheet) -> sheet``: checks a character sheet submitted by a
  person and returns it normalised; raises :class:`SheetError` naming the field
  and the allowed range.
* ``initial_state(sheet) -> state``: the state of a new character.
* ``actions``: ``{action_type: fn(state, action, dice) -> [Event, ...]}``. Each
  function is pure: it reads the state and the action, takes every die from
  ``dice`` and returns the events to store. It raises :class:`RuleError` for an
  action the rules do not allow; then nothing is stored.
* ``evolve(state, event) -> state``: applies one event and returns a *new*
  state; it never mutates its arguments and returns the state unchanged for an
  event type it does not know (generic events such as ``roll`` pass through).
  Built by :func:`evolver`, it also offers ``evolve.in_place(state, event)``
  for a fold that owns its state (:meth:`RuleSystem.replay`, projections):
  copying the whole state per event was most of a rebuild's time. Handlers
  therefore copy every list or dict they take from a payload, so a state never
  shares an object with an event.
* ``odds(action) -> {outcome: Fraction}``: exact odds of a raw rolling action
  (the forms ``manage.py odds`` accepts).
* ``preview(state, action) -> {outcome: Fraction}``: exact odds of an action a
  character is about to take, as the table shows them before the roll; ``{}``
  for an action that rolls nothing.

What only some systems have is a hook, ``None`` for a system without it; the
shared code (``rules/contests.py``, ``rules/fights.py``, ``rules/npc.py``, the
platform's damage and fights) calls the hook and never names a system:

* ``contests`` (:class:`Contests`): actions that name another character;
* ``fights`` (:class:`Fights`): fights of several sides;
* ``damage`` (:class:`Damage`): the rolls that deal damage and the GM action that applies it;
* ``quick_sheet(rating) -> sheet``: a quick NPC's sheet, every trait at ``rating``;
* ``conditions`` (:class:`ConditionsRead`): the actions that read a condition's modifier, and its
  effect in words.
"""

from __future__ import annotations

import copy
import secrets
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Callable, Mapping, Protocol, Sequence

JSON = Any
State = dict
Action = dict


class DiceSource(Protocol):
    """Where every die comes from. Never a module-level ``random``."""

    def roll(self, sides: int) -> int:
        """Return one face in ``1..sides``, each equally likely."""


class SecretDice:
    """Dice from the operating system's cryptographic randomness."""

    def roll(self, sides: int) -> int:
        if sides < 1:
            raise ValueError("a die needs at least one side")
        return secrets.randbelow(sides) + 1


class SeededDice:
    """Reproducible pseudo-random dice for simulations and property tests."""

    def __init__(self, seed: int = 0):
        import random  # local: only simulations use a PRNG, never play

        self._random = random.Random(seed)

    def roll(self, sides: int) -> int:
        return self._random.randint(1, sides)


class DiceExhausted(AssertionError):
    """A scripted dice source ran out: the test scripted too few dice."""


class ScriptedDice:
    """Dice that come up exactly as a test says, in order.

    ``ScriptedDice([6, 3, 1])`` rolls 6, then 3, then 1. A face outside the
    die's range, or running out, fails loudly so a test can't pass by accident.
    """

    def __init__(self, faces: Sequence[int]):
        self._faces = list(faces)
        self.rolled: list[tuple[int, int]] = []

    @property
    def remaining(self) -> list[int]:
        return list(self._faces)

    def roll(self, sides: int) -> int:
        if not self._faces:
            raise DiceExhausted(f"no scripted face left for a d{sides}")
        face = self._faces.pop(0)
        if not 1 <= face <= sides:
            raise ValueError(f"scripted face {face} is not on a d{sides}")
        self.rolled.append((sides, face))
        return face


@dataclass(frozen=True)
class Event:
    """What an action decided, ready to be stored. Immutable.

    ``payload`` must be JSON-able (ints, strings, bools, lists, dicts; exact
    odds as ``"p/q"`` strings, see :func:`fraction_json`).
    """

    type: str
    payload: Mapping[str, JSON] = field(default_factory=dict)
    version: int = 1


class RuleError(Exception):
    """An action the rules refuse. ``message`` is written for a player."""

    code = "rules"

    def __init__(self, message: str, code: str | None = None):
        super().__init__(message)
        self.message = message
        if code:
            self.code = code


class SheetError(RuleError):
    """A character sheet that does not fit the system's schema."""

    code = "invalid_sheet"

    def __init__(self, field_name: str, message: str):
        super().__init__(f"{field_name}: {message}")
        self.field = field_name


def fraction_json(p: Fraction) -> dict:
    """An exact probability as stored in events: ``{"p": "3/8", "float": 0.375}``."""
    p = Fraction(p)
    return {"p": f"{p.numerator}/{p.denominator}", "float": float(p)}


def odds_json(odds: Mapping[str, Fraction]) -> dict:
    """A whole odds table as stored in events and printed by ``manage.py odds``."""
    return {outcome: fraction_json(p) for outcome, p in odds.items()}


# JSON's scalars, which a copy shares instead of copying.
_SCALARS = frozenset({str, int, float, bool, type(None)})


def copy_json(value: JSON) -> JSON:
    """A copy of JSON-shaped data (dicts, lists, tuples, scalars), as a handler
    stores it from a payload; several times cheaper than ``copy.deepcopy``,
    which a rebuild would otherwise pay on most events."""
    kind = type(value)
    # Plain dicts and lists first, their scalars taken without a call each: a rebuild copies
    # a list of dice per roll, and the calls were most of what copying cost.
    if kind is dict:
        return {key: item if type(item) in _SCALARS else copy_json(item) for key, item in value.items()}
    if kind is list:
        return [item if type(item) in _SCALARS else copy_json(item) for item in value]
    if isinstance(value, dict):
        return {key: copy_json(item) for key, item in value.items()}
    if isinstance(value, list):
        return [copy_json(item) for item in value]
    if isinstance(value, tuple):
        return tuple(copy_json(item) for item in value)
    return value


def require_int(action: Mapping, key: str, lo: int, hi: int, default: int | None = None) -> int:
    """Read an integer field of an action, refusing anything outside ``lo..hi``."""
    value = action.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int):
        if value is None:
            raise RuleError(f"'{key}' is required: a whole number from {lo} to {hi}.", "invalid")
        raise RuleError(f"'{key}' must be a whole number from {lo} to {hi}.", "invalid")
    if not lo <= value <= hi:
        # Never format a huge int: Python refuses to print ones over 4300 digits.
        shown = value if abs(value) < 10**12 else ("a huge number" if value > 0 else "a huge negative number")
        raise RuleError(f"'{key}' must be from {lo} to {hi}, not {shown}.", "invalid")
    return value


class Evolver:
    """A system's ``evolve``, built from ``{event_type: handler}``.

    A handler changes the state it is given in place (or returns a new one)
    and copies whatever list or dict it stores from the payload, which it must
    never change. Unknown event types leave the state as it is.

    ``upcast`` (the system's ``EventBook.upcast``, see ``rules/declare.py``)
    reads an event stored under a former name or an older version as it is
    today, before any handler sees it: the one upcaster path of every fold.
    """

    def __init__(self, handlers: Mapping[str, Callable[[dict, Mapping], Any]],
                 upcast: Callable[[Event], Event] | None = None):
        self.handlers = dict(handlers)
        self.upcast = upcast or (lambda event: event)

    def __call__(self, state: State, event: Event) -> State:
        """The state after ``event``, as a new object; ``state`` is never mutated."""
        event = self.upcast(event)
        if event.type not in self.handlers:
            return state
        return self.in_place(copy.deepcopy(state), event)

    def in_place(self, state: State, event: Event) -> State:
        """Apply ``event`` to ``state``, which the caller owns, mutating it."""
        event = self.upcast(event)
        handler = self.handlers.get(event.type)
        if handler is None:
            return state
        result = handler(state, event.payload)
        return state if result is None else result


# The platform's events a system may react to (a scene's end clears what lasts a scene; an encounter's
# new round and its end run down what lasts some rounds: rules/conditions.py).
FRAME_EVENTS = frozenset({"session_started", "session_ended", "scene_started", "scene_ended", "turn_advanced",
                          "encounter_ended"})


def evolver(handlers: Mapping[str, Callable[[dict, Mapping], Any]], events: Any = None) -> Evolver:
    """Build a system's ``evolve(state, event)`` from ``{event_type: handler}``;
    ``events`` (an ``EventBook``) upcasts old events first."""
    if events is not None:
        unknown = sorted(set(handlers) - {spec.type for spec in events} - FRAME_EVENTS)
        if unknown:
            raise ValueError(f"handlers for undeclared (or former) event names: {unknown}")
    return Evolver(handlers, None if events is None else events.upcast)


def _no_side(event: Event, opponent: Any, actor_id: int, actor_name: str) -> None:
    return None


@dataclass(frozen=True)
class Contests:
    """How a system's actions meet another character named by ``vs_character`` (rules/contests.py).

    ``opposable``: the actions that may name an opponent, and ``fill(action, opponent_state)`` the
    numbers such an action needs, read from the opponent's state (what the rules then decide from, as
    for an opponent given as numbers). ``continuing``: the actions that continue a running contest,
    whose opponent the acting side's ``contest`` names. ``sided``: the actions the opponent's state
    reads too (a start and its continuations), each event as ``side_view(event, opponent_state,
    actor_id, actor_name)`` gives it (``None``: it changes nothing of the opponent). ``own_side_only``:
    continuing actions decided from the acting side alone, so ``side_view`` gets no opponent state.
    ``both_sides``: actions that decide for the opponent's side too, which only whoever controls it may
    take. ``fill_round(action, opponent_state)``: what a continuing action reads of the opponent's state
    now (its conditions), filled into the action the log records, so a replay decides the same."""

    opposable: frozenset[str]
    fill: Callable[[dict, Mapping], dict]
    continuing: frozenset[str] = frozenset()
    sided: frozenset[str] = frozenset()
    own_side_only: frozenset[str] = frozenset()
    both_sides: frozenset[str] = frozenset()
    side_view: Callable[[Event, Any, int, str], dict | None] = _no_side
    fill_round: Callable[[dict, Mapping], dict] | None = None


def _every_side(fight: Mapping) -> list[str]:
    return list(fight["order"])


@dataclass(frozen=True)
class FightKind:
    """One kind of fight of several sides a system runs (rules/fights.py).

    ``words``: the fight's label when the GM gives none ("a combat"). ``entry(state, spec)``: a side's
    numbers in a new fight, from its character's state and what the GM named for it (the fight's shared
    checks passed). ``choice(fight, standing, side, choice)``: what a side does this round, checked.
    ``round(fight, standing, choices, dice, after)``: rolls the round, updates each side's entry in
    ``after`` and returns ``(result, ended)``, ``ended`` being ``None`` or ``{"winner": team or None,
    "reason"}``. ``target``: the GM names the successes to reach (a race). ``damage``: each side's
    damage taken is spread when the fight ends."""

    name: str
    words: str
    entry: Callable[[Mapping, Mapping], dict]
    choice: Callable[[Mapping, list, str, Mapping], dict]
    round: Callable[[Mapping, list, Mapping, DiceSource, dict], tuple[dict, dict | None]]
    target: bool = False
    damage: bool = False


@dataclass(frozen=True)
class Fights:
    """A system's fights of several sides: its ``kinds`` (the first is the default), the campaign
    settings a fight plays under (``settings(first side's state)``, fixed when it starts), and the sides
    still in it (``standing(fight)``: every side unless the system puts one out)."""

    kinds: tuple[FightKind, ...]
    settings: Callable[[Mapping], dict]
    standing: Callable[[Mapping], list] = _every_side

    def kind(self, name: str) -> FightKind:
        return next(k for k in self.kinds if k.name == name)


@dataclass(frozen=True)
class ConditionsRead:
    """Where a system's rules read a condition's modifier (rules/conditions.py): the ``actions`` whose
    decision reads it (and records ``conditions``), and its ``effect`` in the text's own terms, a
    template of ``{signed}`` (+2, −1), ``{n}`` (its size) and ``{dice}`` ("die" or "dice" by its size)
    that the table's forms say before a roll and its line after (``rules.conditions.effect_words``)."""

    actions: frozenset[str]
    effect: str


@dataclass(frozen=True)
class Damage:
    """Damage that reaches a track (campaign/actions/damage.py): ``rolls`` maps each event that deals
    damage to the payload key saying how much; ``action(amount, reason)`` is the system's own GM action
    that applies it (refused, sealed and stored as that action is)."""

    rolls: Mapping[str, str]
    action: Callable[[int, str], dict]


class RuleSystem:
    """One rule system, as the rest of Talekeeper sees it.

    ``actions`` maps each action type to its declaration (``rules.declare.ActionSpec``,
    callable as ``fn(state, action, dice)``); who may send an action, the forms'
    limits and the OpenAPI components are read from those declarations.
    ``events`` (``rules.declare.EventBook``) names every event the system records,
    with its version and former names. ``sheet`` (``rules.declare.SheetSpec``)
    describes the character sheet for creation forms.
    """

    def __init__(self, *, name: str, title: str, validate_sheet: Callable[[JSON], dict],
                 initial_state: Callable[[dict], State], actions: Mapping[str, Any], evolve: Evolver,
                 odds: Callable[[Action], dict[str, Fraction]], preview: Callable[[State, Action], dict[str, Fraction]],
                 events: Any, sheet: Any = None, example_sheet: Mapping[str, JSON] | None = None,
                 advances: Callable[[State], dict] | None = None, contests: Contests | None = None,
                 fights: Fights | None = None, damage: Damage | None = None,
                 quick_sheet: Callable[[int], dict] | None = None, conditions: ConditionsRead | None = None):
        self.name = name
        self.title = title
        self.validate_sheet = validate_sheet
        self.initial_state = initial_state
        self.actions = dict(actions)
        self.evolve = evolve
        self.odds = odds
        self._preview = preview
        self.events = events
        self.sheet = sheet
        # A valid sheet for demos, tests and the "new character" form's starting point.
        self.example_sheet = dict(example_sheet or {})
        # What each advance would cost a character now (``buy_advance``'s own prices, for the form
        # that offers them); None for a system whose prices the sheet holds as they are (WYRM's).
        self._advances = advances
        # The hooks of what only some systems have (None: this one has none), read by the shared code.
        self.contests = contests
        self.fights = fights
        self.damage = damage
        self.quick_sheet = quick_sheet
        self.conditions = conditions
        # Action types only the GM may take (granting Fate, awarding points, ...).
        self.gm_actions = frozenset(t for t, spec in self.actions.items() if spec.gm_only)

    def __repr__(self) -> str:
        return f"<RuleSystem {self.name}>"

    def spec(self, action: Any):
        """The declaration of ``action``'s type; :class:`RuleError` for a non-object or an unknown type."""
        if not isinstance(action, Mapping):
            raise RuleError("An action must be a JSON object.", "invalid")
        kind = action.get("type")
        spec = self.actions.get(kind) if isinstance(kind, str) else None
        if spec is None:
            known = ", ".join(sorted(self.actions))
            shown = kind if isinstance(kind, str) else type(kind).__name__
            raise RuleError(f"{self.title} has no action '{str(shown)[:60]}'. Known actions: {known}.", "unknown_action")
        return spec

    def decide(self, state: State, action: Action, dice: DiceSource) -> list[Event]:
        """Run one action (validated by its declaration first); raise
        :class:`RuleError` if it is malformed or the rules refuse it."""
        return self.spec(action)(state, action, dice)

    def preview(self, state: State, action: Action) -> dict[str, Fraction]:
        """Exact odds of an action this character is about to take, validated by
        the same declaration as the action itself; ``{}`` if it rolls nothing."""
        return self._preview(state, self.spec(action).validate(action))

    def advances(self, state: State | None) -> dict | None:
        """Each advance's price for this character now (``rules.common.advance_price``), or None."""
        return self._advances(state) if self._advances and state is not None else None

    def replay(self, state: State, events: Sequence[Event]) -> State:
        """Apply events in order to a copy of ``state`` (copied once, not per event)."""
        state = copy.deepcopy(state)
        for event in events:
            state = self.evolve.in_place(state, event)
        return state

    def apply(self, state: State, event: Event) -> State:
        """Apply one event to a state the caller owns (a fold's), mutating it."""
        return self.evolve.in_place(state, event)

    def upcast(self, event: Event) -> Event:
        """``event`` under its current name and version (see ``rules/declare.py``)."""
        return event if self.events is None else self.events.upcast(event)
