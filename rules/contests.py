"""Contests naming two characters: the opponent's numbers come from its own sheet, and
every round is one event that both sides' states read. Pure.

An action names its opponent with ``vs_character`` (the platform turns the id into the
opponent's state, campaign/actions/contests.py). What differs between systems is the
system's :class:`rules.base.Contests` hook (``RuleSystem.contests``, ``None`` for a
system whose text has no opposed test); this module asks it and names no system:

* :func:`fill` puts the numbers the action needs (``vs``, ``vs_pool``, ``their_pool``)
  from the opponent's state into the action, so the rules decide exactly as for an
  opponent given as numbers (and a replay of the recorded action decides the same);
* :func:`side_view` is an event as the opponent reads it, or ``None`` when it changes
  nothing of the opponent. A contest that runs over several rounds keeps state on both
  sides (the running counts, damage taken); a one-roll opposed test changes neither sheet.
"""

from __future__ import annotations

from typing import Any, Mapping

from .base import Event, RuleError, RuleSystem


def _actions(rules: RuleSystem, which: str) -> frozenset:
    return frozenset() if rules.contests is None else getattr(rules.contests, which)


def continues(rules: RuleSystem, kind: Any) -> bool:
    """Whether the action ``kind`` continues a running contest (its opponent is the one it names)."""
    return kind in _actions(rules, "continuing")


def reads_opponent(rules: RuleSystem, kind: Any) -> bool:
    """Whether deciding the action ``kind`` against an opponent reads the opponent's state: naming it
    fills its numbers (:func:`fill`); continuing a contest, its side of the events may read it."""
    return kind not in _actions(rules, "own_side_only")


def has_sides(rules: RuleSystem, kind: Any) -> bool:
    """Whether the action ``kind`` naming an opponent is a side of it, decided or refused."""
    return kind in _actions(rules, "sided")


def decides_both_sides(rules: RuleSystem, kind: Any) -> bool:
    """Whether the action ``kind`` decides for the opponent's side too (only its controller may take it)."""
    return kind in _actions(rules, "both_sides")


def fill(rules: RuleSystem, action: dict, opponent: Mapping) -> dict:
    """The numbers ``action`` needs about its opponent, read from the opponent's state.

    Raises :class:`RuleError` when the action already gives them or the opponent can't take part."""
    kind = action.get("type")
    contests = rules.contests
    if contests is None or kind not in contests.opposable:
        raise RuleError(f"'{kind}' can't name a 'vs_character'"
                        + (f"; these can: {', '.join(sorted(contests.opposable))}." if contests is not None
                           else ": the rules have no opposed test."), "invalid")
    return contests.fill(action, opponent)


def fill_round(rules: RuleSystem, action: dict, opponent: Mapping) -> dict:
    """What the continuing ``action`` reads of its opponent's state now (``Contests.fill_round``: its
    conditions), to fill into the action; ``{}`` for a system that reads nothing of it."""
    contests = rules.contests
    if contests is None or contests.fill_round is None or action.get("type") not in contests.continuing:
        return {}
    return contests.fill_round(action, opponent)


def side_view(rules: RuleSystem, event: Event, opponent: dict | None, actor_id: int, actor_name: str = "") -> dict | None:
    """``event`` (decided for the acting character) as its opponent reads it; ``None``: no change.

    ``opponent``: its state, ``None`` for an action that reads nothing of it (:func:`reads_opponent`).
    ``actor_name`` is the acting character in words, what the opponent's side calls its other side
    ("" when the table may not know it: a hidden NPC's)."""
    if rules.contests is None:
        return None
    return rules.contests.side_view(event, opponent, actor_id, actor_name)


# --- for the systems' ``fill`` -------------------------------------------------------------


def given(action: dict, *keys: str) -> None:
    """Refuse an action that names an opponent and also gives the numbers its sheet says."""
    for key in keys:
        if action.get(key) is not None:
            raise RuleError(f"Give 'vs_character' or '{key}', not both: the opponent's sheet says it.", "invalid")


def text(value, name: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not 1 <= len(value) <= 80:
        raise RuleError(f"'{name}' must be text of 1 to 80 characters.", "invalid")
    return value
