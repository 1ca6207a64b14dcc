"""Character projections: state folded from the log through the rules' ``evolve``.

One fold (:func:`fold`) serves the live update after each append, the full
rebuild, and "what did the sheet say at event N". Voided events are skipped:
a void changes which events count, so it triggers a replay of the affected
character from the start.
"""

from __future__ import annotations

import hashlib
import json
from typing import Iterable

from rules import Event as RulesEvent

from .models import Campaign, Character, CharacterProjection, Event
from .softcache import cache_get, cache_set

# Events that concern every character of the campaign, not one.
CAMPAIGN_WIDE = frozenset({"scene_started", "scene_ended", "session_started", "session_ended"})
VOID = "event_voided"


def _rules_event(event: Event) -> RulesEvent:
    return RulesEvent(type=event.type, payload=event.payload, version=event.version)


def fold(campaign: Campaign, events: Iterable[Event], states: dict[int, dict], seqs: dict[int, int],
         voided: set[int]) -> None:
    """Apply ``events`` (in seq order) to ``states``/``seqs`` in place, keyed by character id."""
    rules = campaign.rules
    for event in events:
        if event.seq in voided:
            continue
        if event.type == "character_created":
            states[event.character_id] = rules.initial_state(event.payload["sheet"])
            seqs[event.character_id] = event.seq
        elif event.type in CAMPAIGN_WIDE:
            for character_id in states:
                states[character_id] = rules.evolve(states[character_id], _rules_event(event))
                seqs[character_id] = event.seq
        elif event.character_id in states:
            states[event.character_id] = rules.evolve(states[event.character_id], _rules_event(event))
            seqs[event.character_id] = event.seq


def _plain(state: dict) -> dict:
    """The state exactly as a JSON column gives it back (tuples become lists)."""
    return json.loads(json.dumps(state))


def voided_seqs(campaign: Campaign, upto: int | None = None) -> set[int]:
    qs = Event.objects.filter(campaign=campaign, type=VOID)
    if upto is not None:
        qs = qs.filter(seq__lte=upto)
    return {e.payload["seq"] for e in qs}


def replay(campaign: Campaign, upto: int | None = None, character_id: int | None = None,
           skip: frozenset[int] | set[int] = frozenset()) -> tuple[dict, dict]:
    """Fold a campaign's log from the start (up to seq ``upto``).

    Returns ``(states, seqs)`` keyed by character id. With ``character_id``,
    only events that can touch that character are read.
    """
    qs = Event.objects.filter(campaign=campaign).order_by("seq")
    if upto is not None:
        qs = qs.filter(seq__lte=upto)
    if character_id is not None:
        from django.db.models import Q

        qs = qs.filter(Q(character_id=character_id) | Q(type__in=CAMPAIGN_WIDE))
    states: dict[int, dict] = {}
    seqs: dict[int, int] = {}
    fold(campaign, qs.iterator(chunk_size=2000), states, seqs, voided_seqs(campaign, upto) | set(skip))
    if character_id is not None:
        states = {k: v for k, v in states.items() if k == character_id}
    return states, seqs


def state_as_of(character: Character, seq: int) -> dict | None:
    """The character's state as it stood right after event ``seq`` (None before it existed)."""
    states, _ = replay(character.campaign, upto=seq, character_id=character.id)
    return states.get(character.id)


def visible_state(character: Character, viewer, upto: int | None = None) -> dict | None:
    """The character's state as ``viewer`` may see it (now, or as of seq ``upto``).

    A hidden roll changes the sheet too (a TOTE test's total lands in
    ``last_test``); members who may not see the roll get the state folded
    without it, so the sheet can't leak what the log seals.
    """
    from .log import marks_after
    from .visibility import may_see

    hidden = Event.objects.filter(character=character).exclude(visibility="public")
    if upto is not None:
        hidden = hidden.filter(seq__lte=upto)
    hidden = list(hidden.values("seq", "visibility", "actor_id"))
    unseen = set()
    if hidden:
        _, revealed = marks_after(character.campaign_id, min(h["seq"] for h in hidden) - 1)
        unseen = {h["seq"] for h in hidden if not may_see(h, viewer, revealed)}
    if not unseen and upto is None:
        return character.projection.state
    # Replaying is the price of a hidden roll; remember the result until the
    # character's next event (the key changes with last_seq and what is unseen).
    key = None
    if upto is None:
        digest = hashlib.sha256(",".join(map(str, sorted(unseen))).encode()).hexdigest()[:16]
        key = f"visible-state:{character.id}:{character.projection.last_seq}:{digest}"
        cached = cache_get(key)
        if cached is not None:
            return cached
    states, _ = replay(character.campaign, upto=upto, character_id=character.id, skip=unseen)
    state = states.get(character.id)
    if key is not None and state is not None:
        cache_set(key, state, timeout=3600)
    return state




def apply(campaign: Campaign, events: list[Event]) -> None:
    """Bring projections up to date with just-appended ``events`` (same transaction)."""
    voids = [e for e in events if e.type == VOID]
    if voids:
        # A void changes history as the projections see it: replay the one
        # character it concerns from scratch (a void event carries the voided
        # event's character), not the whole campaign, inside the append lock.
        for character_id in {e.character_id for e in voids if e.character_id}:
            states, seqs = replay(campaign, character_id=character_id)
            CharacterProjection.objects.filter(character_id=character_id).update(
                state=_plain(states[character_id]), last_seq=seqs[character_id])
        return
    touched = {e.character_id for e in events if e.character_id}
    wide = any(e.type in CAMPAIGN_WIDE for e in events)
    qs = CharacterProjection.objects.filter(character__campaign=campaign)
    if not wide:
        qs = qs.filter(character_id__in=touched)
    projections = {p.character_id: p for p in qs}
    states = {cid: p.state for cid, p in projections.items()}
    seqs = {cid: p.last_seq for cid, p in projections.items()}
    fold(campaign, events, states, seqs, set())
    for character_id, state in states.items():
        projection = projections.get(character_id)
        if projection is None:
            CharacterProjection.objects.create(character_id=character_id, state=state, last_seq=seqs[character_id])
        elif projection.last_seq != seqs[character_id]:
            projection.state = state
            projection.last_seq = seqs[character_id]
            projection.save(update_fields=["state", "last_seq"])


def rebuild(campaign: Campaign, check: bool = False) -> list[str]:
    """Rebuild every projection of ``campaign`` from its log.

    Returns the names of characters whose stored projection differed from the
    rebuilt one. With ``check=True`` nothing is written.
    """
    states, seqs = replay(campaign)
    states = {cid: _plain(state) for cid, state in states.items()}
    stored = {p.character_id: p for p in CharacterProjection.objects.filter(character__campaign=campaign)}
    names = dict(Character.objects.filter(campaign=campaign).values_list("id", "name"))
    differing = []
    for character_id in sorted(set(states) | set(stored)):
        projection = stored.get(character_id)
        state = states.get(character_id)
        same = projection is not None and state is not None and projection.state == state
        if same and projection.last_seq == seqs.get(character_id):
            continue
        differing.append(f"{names.get(character_id, '?')} (id {character_id})")
        if check:
            continue
        if state is None:
            projection.state, projection.last_seq = {}, 0
            projection.save(update_fields=["state", "last_seq"])
        elif projection is None:
            CharacterProjection.objects.create(character_id=character_id, state=state, last_seq=seqs[character_id])
        else:
            projection.state, projection.last_seq = state, seqs[character_id]
            projection.save(update_fields=["state", "last_seq"])
    return differing
