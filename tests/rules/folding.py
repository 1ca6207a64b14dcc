"""Folding in place must equal folding with copies, for every system.

``RuleSystem.replay`` (and the projections' fold) copy the starting state once
and apply every event to it in place. That is only sound if no handler stores
a payload's list or dict in the state (a later event would then change the
stored event through the state) and none changes a payload. Each system's
replay property test calls :func:`assert_folds_in_place` on what it played.
"""

from __future__ import annotations

import copy
import functools


def _containers(value, found: set[int] | None = None) -> set[int]:
    """The ids of every dict and list inside ``value`` (itself included)."""
    found = set() if found is None else found
    if isinstance(value, dict):
        found.add(id(value))
        for item in value.values():
            _containers(item, found)
    elif isinstance(value, list):
        found.add(id(value))
        for item in value:
            _containers(item, found)
    return found


def assert_folds_in_place(system, initial: dict, events: list) -> None:
    payloads = [copy.deepcopy(dict(event.payload)) for event in events]
    start = copy.deepcopy(initial)
    with_copies = functools.reduce(system.evolve, events, initial)
    in_place = system.replay(initial, events)
    assert in_place == with_copies
    assert initial == start, "replay changed the state it was given"
    assert [dict(event.payload) for event in events] == payloads, "a handler changed a payload"
    in_payloads = set().union(set(), *(_containers(dict(event.payload)) | _containers(event.payload)
                                       for event in events))
    assert not _containers(in_place) & in_payloads, "the state shares a list or dict with a payload"
