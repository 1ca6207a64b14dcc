"""Visible folds: a character's state as a member may see it, folded without what is hidden from her.

A hidden roll changes the sheet too (a TOTE test's total lands in ``last_test``), so a member who
may not see it gets the state folded without it (docs/hidden-information.md).
"""

from __future__ import annotations

import hashlib

from django.db.models import Q
from django.db.models.fields.json import KeyTransform

from ..eventlog import marks_after
from ..models import VISIBILITY_PUBLIC, Character, Event
from ..projections import SIDES, concerning, replay, sides_of
from ..softcache import cache_get, cache_set
from .filter import HIDDEN_ROW, may_see


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
    hidden = (Event.objects.filter(concerning(character.id), campaign_id=character.campaign_id)
              .exclude(visibility="public"))
    if upto is not None:
        hidden = hidden.filter(seq__lte=upto)
    hidden = list(hidden.values("seq", "visibility", "actor_id", **HIDDEN_ROW))
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


def hidden_folded_from(campaign_id: int, ids: set[int]) -> dict[int, list[dict]]:
    """``{character id: [{seq, visibility, actor_id}]}``: the hidden events each character's state is folded
    from (its own and those it is a side of, as :func:`campaign.projections.concerning`), in one query."""
    if not ids:
        return {}
    rows = (Event.objects.filter(campaign_id=campaign_id)
            .filter(Q(character_id__in=ids) | Q(**{f"payload__{SIDES}__has_any_keys": [str(c) for c in ids]}))
            .exclude(visibility=VISIBILITY_PUBLIC)
            .values("seq", "visibility", "actor_id", "character_id", sides=KeyTransform(SIDES, "payload"), **HIDDEN_ROW))
    hidden: dict[int, list[dict]] = {}
    for row in rows:
        entry = {"seq": row["seq"], "visibility": row["visibility"], "actor_id": row["actor_id"],
                 "shared_with": row["shared_with"]}
        for c in {row["character_id"], *sides_of({SIDES: row["sides"]})} & ids:
            hidden.setdefault(c, []).append(entry)
    return hidden
