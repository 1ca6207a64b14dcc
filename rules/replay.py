"""Folding a stored log into character states, and deciding a stored command again.

Pure, like the rest of ``rules/``: the server's projections (campaign/projections.py) and
replay of a finished session (campaign/fairdice.py) use it on rows of the database; the
members' standalone verifier (tools/talekeeper_verify.py, shipped with ``rules/`` as one
zip) uses it on an export. One fold and one comparison for both, so a member's check and
the server's can't drift apart.

A stored event here is anything with ``seq``, ``type``, ``version``, ``payload`` and
``character_id`` attributes (a model row, a named tuple).
"""

from __future__ import annotations

import json
from typing import Iterable, Sequence

from .base import Event, RuleError, RuleSystem, ScriptedDice, copy_json
from .notation import roll_event

# Events that concern every character of the campaign, not one (an encounter's turns and end: a
# condition that lasts some rounds runs down as they pass, rules/conditions.py).
CAMPAIGN_WIDE = frozenset({"scene_started", "scene_ended", "session_started", "session_ended",
                           "campaign_configured", "turn_advanced", "encounter_ended"})
# An event of one character that other characters' projections read too (a contest's
# round, campaign/actions/contests.py): ``payload["sides"]`` maps each other character's
# id (a string) to the payload as that side reads it (``true`` on a bundle, whose inner
# events carry their own ``sides``, and on a sealed refusal of a contest's action, which changes
# no side but concerns it as the decision would have: campaign/actions/contests.py with_sides).
SIDES = "sides"
VOID = "event_voided"
# Several rule events one hidden command decided, stored as one event
# (campaign.visibility.one_event): ``{"events": [{"type", "version", "payload"}, ...]}``.
BUNDLE = "bundle"
# What the server adds to a command's first event beside what the rules decided;
# a replay of the rules compares the rest of the payload. ``sides``: how the other
# characters of a contest read it (campaign/actions/contests.py).
# ``filled``: what the server read for the rules (a contest's opponent numbers, a fight's running
# state and the other sides' choices); ``applies``: the roll a damage event came from;
# ``witnessed_by``, ``witness_digest``, ``unwitnessed``: a witnessed command's contributions.
RECORD_KEYS = frozenset({"command_id", "action", "dice_log", "dice_scheme", "nonce", "nonce_drawn", "verifiable",
                         "answers", "sides", "shared_with", "signature", "filled", "command_of", "applies",
                         "witnessed_by", "witness_digest", "unwitnessed"})
# An action the rules decide from what the server read (``filled``) and the action alone, no sheet:
# a fight's round (rules/fights.py).
FIGHT_ROUND = "choose_in_fight"


def rules_events(event) -> list[Event]:
    """The rule events a stored event holds, in the order ``evolve`` applies them."""
    if event.type == BUNDLE:
        return [Event(type=e["type"], payload=e["payload"], version=e.get("version", 1))
                for e in event.payload["events"]]
    return [Event(type=event.type, payload=event.payload, version=event.version)]


def apply_stored(rules: RuleSystem, state: dict, event) -> dict:
    """Apply a stored event's rule events to ``state`` in place (the fold owns it)."""
    if event.type != BUNDLE:
        # A stored event (a model or a row) reads as the one rule event it holds: its type,
        # payload and version. Not wrapping it in a new one is a tenth of a rebuild's fold.
        return rules.apply(state, event)
    for rules_event in rules_events(event):
        state = rules.apply(state, rules_event)
    return state


def apply_side(rules: RuleSystem, state: dict, event, side: str) -> dict:
    """Apply a stored event to another side of it: each rule event as that side reads it."""
    for rules_event in rules_events(event):
        view = (rules_event.payload.get(SIDES) or {}).get(side)
        if isinstance(view, dict):
            state = rules.apply(state, Event(type=rules_event.type, payload=view, version=rules_event.version))
    return state


def sides_of(payload) -> list[int]:
    """The ids of the other characters an event's payload makes sides of it."""
    sides = payload.get(SIDES) if isinstance(payload, dict) else None
    return [int(side) for side in sides] if isinstance(sides, dict) else []


def fold_one(rules: RuleSystem, event, states: dict[int, dict], seqs: dict[int, int], voided: set[int],
             sides: list[int] | None = None) -> None:
    """Fold one event into ``states``/``seqs`` (keyed by character id) in place; ``sides``: its
    :func:`sides_of`, when the caller has them already. Voided seqs are skipped."""
    if event.seq in voided:
        return
    if event.type == "character_created":
        # A copy: the state is changed in place later and must not share the event's payload.
        states[event.character_id] = rules.initial_state(copy_json(event.payload["sheet"]))
        if event.payload.get("limits_overridden"):
            states[event.character_id]["limits_overridden"] = True  # the GM made it past the creation limits
        seqs[event.character_id] = event.seq
    elif event.type in CAMPAIGN_WIDE:
        for character_id in states:
            states[character_id] = apply_stored(rules, states[character_id], event)
            seqs[character_id] = event.seq
    else:
        if event.character_id in states:
            states[event.character_id] = apply_stored(rules, states[event.character_id], event)
            seqs[event.character_id] = event.seq
        for side in sides_of(event.payload) if sides is None else sides:
            if side in states:
                states[side] = apply_side(rules, states[side], event, str(side))
                seqs[side] = event.seq


def decide_again(rules: RuleSystem, state: dict | None, action: dict, dice, filled: dict | None = None) -> list[Event]:
    """What the rules decide for ``action`` with ``dice`` on ``state`` (a plain roll needs none), given
    what the server read for them (``filled``)."""
    if action.get("type") == "roll":
        return [roll_event(action, dice)]
    if action.get("type") == FIGHT_ROUND:
        from .fights import round_events

        if not isinstance(filled, dict):
            raise RuleError("the round does not record what it read")
        return round_events(rules, filled, action, dice)
    if filled:
        action = {**action, **filled}  # a contest's opponent numbers, read from its sheet
    if state is None:
        raise RuleError("no character state to replay on")
    return list(rules.decide(copy_json(state), action, dice))


def plain(payload) -> dict:
    """A decided payload as it reads back from JSON (tuples become lists)."""
    return json.loads(json.dumps(dict(payload), ensure_ascii=False))


def outcome_problem(rules: RuleSystem, state: dict | None, action: dict, dice_log: Sequence,
                    stored: Iterable, filled: dict | None = None, more: bool = False) -> tuple[int, str] | None:
    """Decide ``action`` again with the faces of ``dice_log`` and compare with ``stored``, the command's
    events in seq order (a bundle counts as the rule events it holds): ``(seq, problem)`` at the first
    difference, else None. ``action`` is the action as sent, ``filled`` what the server read for the
    rules (:func:`decide_again`). Each stored payload is compared less :data:`RECORD_KEYS`. ``more``: ``stored``
    may go on past the command (a log that does not mark a command's later events): only as many
    events as the rules decide are compared."""
    stored = list(stored)
    first = stored[0]
    scripted = ScriptedDice([face for _, face in dice_log])
    try:
        decided = decide_again(rules, state, action, scripted, filled)
    except RuleError as e:
        # A hidden decision the rules refused is stored as a `refused` event
        # (docs/hidden-information.md): the replay must refuse the same way.
        if first.type == "refused" and e.message == first.payload.get("message"):
            return None
        return first.seq, f"the rules refuse the recorded action with these dice ({e})"
    except (AssertionError, ValueError, TypeError, KeyError) as e:
        return first.seq, f"the rules refuse the recorded action with these dice ({e})"
    if first.type == "refused":
        return first.seq, "the log says the rules refused, but they decide with these dice"
    if scripted.remaining:
        return first.seq, f"the rules draw {len(dice_log) - len(scripted.remaining)} dice, the log records {len(dice_log)}"
    flat = [(event.seq, ruled) for event in stored for ruled in rules_events(event)]
    if more:
        flat = flat[:len(decided)]
    for index, (seq, event) in enumerate(flat):
        if index >= len(decided):
            return seq, "the rules decide fewer events than the log holds"
        want = decided[index]
        got = {k: v for k, v in event.payload.items() if k not in RECORD_KEYS}
        if (event.type, event.version, got) != (want.type, want.version, plain(want.payload)):
            return seq, "its outcome is not what the rules decide with these dice"
    if len(decided) > len(flat):
        return flat[-1][0], "the rules decide more events than the log holds"
    return None
