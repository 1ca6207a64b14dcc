"""Character projections: state folded from the log through the rules' ``evolve``.

One fold (:func:`fold`) serves the live update after each append, the full
rebuild, and "what did the sheet say at event N" (:func:`state_as_of`).
Voided events are skipped: a void changes which events count, so it triggers
a replay of the affected character.

Snapshots (``CharacterSnapshot``, about every ``PROJECTION_SNAPSHOT_EVERY``
events) make any replay of one character start near its end, so a sheet as of
any seq, or folded without a viewer's hidden rolls, costs about that many
events instead of the whole history. A snapshot at seq k is the state as of k:
it counts the voids appended up to k and skips the caller's skip set up to k.
That is a fact of the log's first k events, so it never goes stale; a fold
to seq s may start from it unless a void appended after k (and up to s)
voids an event at or before k. Snapshots are written by the append (when a
character's state enters a new block of the log), by any replay that passes
a block without one (so a skip set gets its own as it is asked for) and by
``rebuild_projections``, which drops and rewrites them all.
"""

from __future__ import annotations

import bisect
import hashlib
import json
from typing import Iterable, NamedTuple

from django.conf import settings
from django.db import DatabaseError, transaction
from django.db.models import Q

from rules import Event as RulesEvent
from rules.base import copy_json

from .models import Campaign, Character, CharacterProjection, CharacterSnapshot, Event
from .softcache import cache_get, cache_set

# Events that concern every character of the campaign, not one.
CAMPAIGN_WIDE = frozenset({"scene_started", "scene_ended", "session_started", "session_ended",
                           "campaign_configured"})
# An event of one character that other characters' projections read too (a contest's
# round, campaign/actions/contests.py): ``payload["sides"]`` maps each other character's
# id (a string) to the payload as that side reads it (``true`` on a bundle, whose inner
# events carry their own ``sides``).
SIDES = "sides"
VOID = "event_voided"
# Several rule events one hidden command decided, stored as one event
# (campaign.hidden.one_event): ``{"events": [{"type", "version", "payload"}, ...]}``.
BUNDLE = "bundle"


def rules_events(event: Event) -> list[RulesEvent]:
    """The rule events a stored event holds, in the order ``evolve`` applies them."""
    if event.type == BUNDLE:
        return [RulesEvent(type=e["type"], payload=e["payload"], version=e.get("version", 1))
                for e in event.payload["events"]]
    return [RulesEvent(type=event.type, payload=event.payload, version=event.version)]


class Row(NamedTuple):
    """What the fold reads of an event (cheaper to load than a model instance)."""

    seq: int
    type: str
    version: int
    payload: dict
    character_id: int | None


ROW_FIELDS = Row._fields


def _apply(rules, state: dict, event) -> dict:
    """Apply a stored event's rule events to ``state`` in place (the fold owns it)."""
    for rules_event in rules_events(event):
        state = rules.apply(state, rules_event)
    return state


def _apply_side(rules, state: dict, event, side: str) -> dict:
    """Apply a stored event to another side of it: each rule event as that side reads it."""
    for rules_event in rules_events(event):
        view = (rules_event.payload.get(SIDES) or {}).get(side)
        if isinstance(view, dict):
            state = rules.apply(state, RulesEvent(type=rules_event.type, payload=view, version=rules_event.version))
    return state


def sides_of(payload) -> list[int]:
    """The ids of the other characters an event's payload makes sides of it."""
    sides = payload.get(SIDES) if isinstance(payload, dict) else None
    return [int(side) for side in sides] if isinstance(sides, dict) else []


def concerning(character_id: int) -> Q:
    """The events a character's state is folded from, besides campaign-wide ones: its own and
    the ones it is a side of."""
    return Q(character_id=character_id) | Q(**{f"payload__{SIDES}__has_key": str(character_id)})


def fold(campaign: Campaign, events: Iterable[Event], states: dict[int, dict], seqs: dict[int, int],
         voided: set[int]) -> None:
    """Apply ``events`` (in seq order) to ``states``/``seqs`` in place, keyed by character id.

    The fold owns ``states`` and changes them in place (``rules.apply``): a
    copy per event was most of a rebuild's time. Callers pass states nobody
    else holds (fresh from the database, from ``initial_state`` or copied).
    """
    rules = campaign.rules
    for event in events:
        _fold_one(rules, event, states, seqs, voided)


def _fold_one(rules, event, states: dict[int, dict], seqs: dict[int, int], voided: set[int]) -> None:
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
            states[character_id] = _apply(rules, states[character_id], event)
            seqs[character_id] = event.seq
    else:
        if event.character_id in states:
            states[event.character_id] = _apply(rules, states[event.character_id], event)
            seqs[event.character_id] = event.seq
        for side in sides_of(event.payload):
            if side in states:
                states[side] = _apply_side(rules, states[side], event, str(side))
                seqs[side] = event.seq


def _plain(state: dict) -> dict:
    """The state exactly as a JSON column gives it back (tuples become lists), copied."""
    return json.loads(json.dumps(state))


def snapshot_every() -> int:
    return max(1, settings.PROJECTION_SNAPSHOT_EVERY)


def voided_seqs(campaign: Campaign, upto: int | None = None) -> set[int]:
    return {target for _, target, _ in voids(campaign, upto)}


def voids(campaign: Campaign, upto: int | None = None) -> list[tuple[int, int, int | None]]:
    """``(void seq, voided seq, character id)`` of every void up to ``upto``."""
    qs = Event.objects.filter(campaign=campaign, type=VOID)
    if upto is not None:
        qs = qs.filter(seq__lte=upto)
    return [(seq, payload["seq"], character_id) for seq, payload, character_id
            in qs.values_list("seq", "payload", "character_id")]


def _by_character(all_voids) -> dict[int | None, list[tuple[int, int]]]:
    """``{character id: [(void seq, voided seq), ...]}``: a void only ever concerns its character."""
    out: dict[int | None, list[tuple[int, int]]] = {}
    for void_seq, target, character_id in all_voids:
        out.setdefault(character_id, []).append((void_seq, target))
    return out


def _unusable(voids_of_character: list[tuple[int, int]], seq: int) -> bool:
    """A snapshot at ``seq`` can't start a fold past a void that voids an event at or before it."""
    return any(target <= seq < void_seq for void_seq, target in voids_of_character)


class _SkipKeys:
    """``CharacterSnapshot.skipped`` for each seq: which members of a skip set lie up to it."""

    def __init__(self, skip: Iterable[int]):
        self.sorted = sorted(skip)
        self.keys: dict[int, str] = {0: ""}

    def at(self, seq: int) -> str:
        count = bisect.bisect_right(self.sorted, seq)
        if count not in self.keys:
            members = ",".join(map(str, self.sorted[:count]))
            self.keys[count] = hashlib.sha256(members.encode()).hexdigest()[:32]
        return self.keys[count]


def _start(character_id: int, upto: int, voids_of_character, keys: _SkipKeys) -> CharacterSnapshot | None:
    """The latest snapshot a fold of this character to ``upto`` may start from."""
    below = upto + 1
    while True:
        page = list(CharacterSnapshot.objects.filter(character_id=character_id, seq__lt=below)
                    .order_by("-seq").values_list("pk", "seq", "skipped")[:100])
        for pk, seq, skipped in page:
            if skipped == keys.at(seq) and not _unusable(voids_of_character, seq):
                return CharacterSnapshot.objects.get(pk=pk)
        if len(page) < 100:
            return None
        below = page[-1][1]


def _save_snapshots(snapshots: list[CharacterSnapshot]) -> None:
    """Store snapshots a replay passed. Two replays may race to store the same
    one (equal by construction): the unique constraint keeps one. A failure only
    costs a later replay, so it never fails the read or command around it."""
    if not snapshots:
        return
    try:
        with transaction.atomic():
            CharacterSnapshot.objects.bulk_create(snapshots, ignore_conflicts=True, batch_size=500)
    except DatabaseError:
        pass


def _head(campaign: Campaign) -> int:
    # Read, not taken from the (possibly stale) object: every event up to the
    # committed head is committed, so the voids read next are all of them, and
    # an event appended meanwhile (past the head) is not folded without its void.
    return Campaign.objects.filter(pk=campaign.pk).values_list("last_seq", flat=True).get()


def replay(campaign: Campaign, upto: int | None = None, character_id: int | None = None,
           skip: frozenset[int] | set[int] = frozenset(), snapshots: bool = True) -> tuple[dict, dict]:
    """Fold a campaign's log (up to seq ``upto``), skipping the seqs in ``skip``.

    Returns ``(states, seqs)`` keyed by character id. With ``character_id``,
    only events that can touch that character are read, from its latest usable
    snapshot on. With ``snapshots=False`` the fold starts from seq 1 and
    stores nothing (how a rebuild checks the projections).
    """
    upto = _head(campaign) if upto is None else min(upto, _head(campaign))
    all_voids = voids(campaign, upto)
    voided = {target for _, target, _ in all_voids} | set(skip)
    by_character = _by_character(all_voids)
    keys = _SkipKeys(skip)
    states: dict[int, dict] = {}
    seqs: dict[int, int] = {}
    qs = Event.objects.filter(campaign=campaign, seq__lte=upto)
    rows = None
    if character_id is not None:
        qs = qs.filter(concerning(character_id) | Q(type__in=CAMPAIGN_WIDE))
        start = _start(character_id, upto, by_character.get(character_id, []), keys) if snapshots else None
        if start is not None:
            states[character_id], seqs[character_id] = start.state, start.seq
            # About one block of rows: one round trip, not a server-side cursor's three.
            rows = [Row(*values) for values in qs.filter(seq__gt=start.seq).order_by("seq").values_list(*ROW_FIELDS)]
    captured = fold_with_snapshots(campaign, _rows(qs) if rows is None else rows, states, seqs, voided,
                                   by_character, keys)
    if snapshots:
        _save_snapshots(captured)
    if character_id is not None:
        states = {k: v for k, v in states.items() if k == character_id}
    return states, seqs


def _rows(qs) -> Iterable[Row]:
    """Every row of ``qs`` in seq order, a chunk at a time (a whole log need not fit in memory)."""
    for values in qs.order_by("seq").values_list(*ROW_FIELDS).iterator(chunk_size=5000):
        yield Row(*values)


def fold_with_snapshots(campaign: Campaign, rows: Iterable[Row], states: dict[int, dict], seqs: dict[int, int],
                        voided: set[int], voids_by_character: dict, keys: _SkipKeys) -> list[CharacterSnapshot]:
    """:func:`fold`, and a snapshot of each character whenever its state enters
    a new block of ``snapshot_every()`` seqs (unless a later void forbids it)."""
    rules, every = campaign.rules, snapshot_every()
    block = {cid: seq // every for cid, seq in seqs.items()}
    captured = []
    for row in rows:
        _fold_one(rules, row, states, seqs, voided)
        concerned = states if row.type in CAMPAIGN_WIDE else (row.character_id, *sides_of(row.payload))
        for cid in concerned:
            if seqs.get(cid) != row.seq or block.get(cid, -1) >= row.seq // every:
                continue
            if not _unusable(voids_by_character.get(cid, []), row.seq):
                captured.append(CharacterSnapshot(character_id=cid, seq=row.seq, skipped=keys.at(row.seq),
                                                  state=_plain(states[cid])))
                block[cid] = row.seq // every
    return captured


def state_as_of(character: Character, seq: int, skip: frozenset[int] | set[int] = frozenset()) -> dict | None:
    """The character's state as it stood right after event ``seq`` (None before it existed).

    ``skip``: seqs to leave out, as if never appended (a viewer's unseen hidden
    rolls). Costs about ``PROJECTION_SNAPSHOT_EVERY`` events, not the history.
    """
    states, _ = replay(character.campaign, upto=seq, character_id=character.id, skip=skip)
    return states.get(character.id)


def visible_state(character: Character, viewer, upto: int | None = None) -> dict | None:
    """The character's state as ``viewer`` may see it (now, or as of seq ``upto``)."""
    return visible_fold(character, viewer, upto)[0]


def visible_fold(character: Character, viewer, upto: int | None = None) -> tuple[dict | None, int]:
    """``(state, seq)``: the character's state as ``viewer`` may see it, and the last seq folded into it.

    A hidden roll changes the sheet too (a TOTE test's total lands in
    ``last_test``); members who may not see the roll get the state folded
    without it, so the sheet can't leak what the log seals. The seq is the
    last event they may see, so it can't say which character a sealed event
    concerned either.
    """
    from .log import marks_after
    from .visibility import may_see

    hidden = Event.objects.filter(concerning(character.id)).exclude(visibility="public")
    if upto is not None:
        hidden = hidden.filter(seq__lte=upto)
    hidden = list(hidden.values("seq", "visibility", "actor_id"))
    unseen = set()
    if hidden:
        _, revealed = marks_after(character.campaign_id, min(h["seq"] for h in hidden) - 1)
        unseen = {h["seq"] for h in hidden if not may_see(h, viewer, revealed)}
    if not unseen and upto is None:
        return character.projection.state, character.projection.last_seq
    # Replaying is the price of a hidden roll; remember the result until the
    # character's next event (the key changes with last_seq and what is unseen).
    key = None
    if upto is None:
        digest = hashlib.sha256(",".join(map(str, sorted(unseen))).encode()).hexdigest()[:16]
        key = f"visible-fold:{character.id}:{character.projection.last_seq}:{digest}"
        cached = cache_get(key)
        if cached is not None:
            return tuple(cached)
    states, seqs = replay(character.campaign, upto=upto, character_id=character.id, skip=unseen)
    folded = (states.get(character.id), seqs.get(character.id, 0))
    if key is not None and folded[0] is not None:
        cache_set(key, folded, timeout=3600)
    return folded




def apply(campaign: Campaign, events: list[Event]) -> None:
    """Bring projections up to date with just-appended ``events`` (same transaction)."""
    voids_ = [e for e in events if e.type == VOID]
    if voids_:
        # A void changes history as the projections see it: replay the one
        # character it concerns (a void event carries the voided event's
        # character), from its last snapshot before the voided event, not the
        # whole campaign, inside the append lock.
        for character_id in {e.character_id for e in voids_ if e.character_id}:
            states, seqs = replay(campaign, character_id=character_id)
            CharacterProjection.objects.filter(character_id=character_id).update(
                state=_plain(states[character_id]), last_seq=seqs[character_id])
        return
    touched = {e.character_id for e in events if e.character_id} | {cid for e in events for cid in sides_of(e.payload)}
    wide = any(e.type in CAMPAIGN_WIDE for e in events)
    # The command read its character's projection under the same lock
    # (actions.access_character): fold into that row instead of reading it again.
    projections = {} if wide else {
        e.character_id: e.character.projection for e in events
        if e.character_id and Character.projection.is_cached(e.character)}
    missing = touched - set(projections)
    if wide or missing:
        qs = CharacterProjection.objects.filter(character__campaign=campaign)
        if not wide:
            qs = qs.filter(character_id__in=missing)
        projections.update({p.character_id: p for p in qs})
    states = {cid: p.state for cid, p in projections.items()}
    seqs = {cid: p.last_seq for cid, p in projections.items()}
    fold(campaign, events, states, seqs, set())
    every = snapshot_every()
    snapshots = []
    for character_id, state in states.items():
        projection = projections.get(character_id)
        before = projection.last_seq if projection is not None else -1
        if seqs[character_id] // every > before // every:
            # The projection is the state as of its last_seq: a void of this
            # character's events would have moved last_seq past it.
            snapshots.append(CharacterSnapshot(character_id=character_id, seq=seqs[character_id],
                                               state=_plain(state)))
        if projection is None:
            CharacterProjection.objects.create(character_id=character_id, state=state, last_seq=seqs[character_id])
        elif projection.last_seq != seqs[character_id]:
            projection.state = state
            projection.last_seq = seqs[character_id]
            projection.save(update_fields=["state", "last_seq"])
    _save_snapshots(snapshots)


def rebuild(campaign: Campaign, check: bool = False) -> list[str]:
    """Rebuild every projection (and every snapshot) of ``campaign`` from its log.

    Returns the names of characters whose stored projection or snapshots
    differed from the rebuilt ones. With ``check=True`` nothing is written.
    """
    head = _head(campaign)
    all_voids = voids(campaign, head)
    by_character = _by_character(all_voids)
    states: dict[int, dict] = {}
    seqs: dict[int, int] = {}
    captured = fold_with_snapshots(campaign, _rows(Event.objects.filter(campaign=campaign, seq__lte=head)),
                                   states, seqs, {target for _, target, _ in all_voids}, by_character, _SkipKeys(()))
    states = {cid: _plain(state) for cid, state in states.items()}
    stored = {p.character_id: p for p in CharacterProjection.objects.filter(character__campaign=campaign)}
    names = dict(Character.objects.filter(campaign=campaign).values_list("id", "name"))
    snapshots = CharacterSnapshot.objects.filter(character__campaign=campaign)
    # Every stored snapshot of the full log must be one the rebuild passes, with the same state.
    rebuilt = {(s.character_id, s.seq): s.state for s in captured}
    stale = {cid for cid, seq, state in snapshots.filter(skipped="").values_list("character_id", "seq", "state")
             if (cid, seq) in rebuilt and rebuilt[cid, seq] != state}
    differing = []
    for character_id in sorted(set(states) | set(stored)):
        projection = stored.get(character_id)
        state = states.get(character_id)
        same = projection is not None and state is not None and projection.state == state
        if same and projection.last_seq == seqs.get(character_id) and character_id not in stale:
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
    if not check:
        # A cache of the log: whatever the rules' code was when they were
        # written, they are rewritten from the log as it folds today.
        snapshots.delete()
        CharacterSnapshot.objects.bulk_create(captured, batch_size=500)
    return differing
