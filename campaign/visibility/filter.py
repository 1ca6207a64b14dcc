"""The one visibility filter: what a member may see of an event.

Every way an event leaves the server (socket, events API, export, page) goes
through :func:`for_viewer`. Hidden events are replaced by a sealed stub that
says something happened, by whom, and commits to it without showing it.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models.fields.json import KeyTransform

from ..eventlog import VOIDS
from ..models import ROLE_GM, VISIBILITY_GM, VISIBILITY_PUBLIC, VISIBILITY_SECRET, VISIBILITY_SHARED, VISIBILITY_WHISPER


@dataclass(frozen=True)
class Viewer:
    user_id: int
    role: str

    @property
    def is_gm(self) -> bool:
        return self.role == ROLE_GM

    @classmethod
    def of(cls, membership) -> "Viewer":
        return cls(user_id=membership.user_id, role=membership.role)


def may_see(data: dict, viewer: Viewer, revealed: frozenset[int] | set[int] = frozenset()) -> bool:
    """Whether ``viewer`` may see the full payload of serialized event ``data``."""
    visibility = data.get("visibility", VISIBILITY_PUBLIC)
    if visibility == VISIBILITY_PUBLIC or viewer.is_gm or data["seq"] in revealed:
        return True
    if visibility == VISIBILITY_SECRET:
        return data.get("actor_id") == viewer.user_id
    if visibility == VISIBILITY_GM:
        # A GM's decision that read hidden changes some members may see names them (campaign/visibility/hidden.py).
        # Not its actor: a player's roll only the GM sees is hers to make, not to read.
        return viewer.user_id in shared_with(data)
    if visibility == VISIBILITY_WHISPER:
        return data.get("actor_id") == viewer.user_id or viewer.user_id in whispered_to(data)
    if visibility == VISIBILITY_SHARED:  # how such a decision was stored before (legacy): read as it was
        return data.get("actor_id") == viewer.user_id or viewer.user_id in shared_with(data)
    return False  # an unknown visibility is hidden, never shown by mistake


def whispered_to(data: dict) -> set[int]:
    """The user ids a whisper names (campaign/actions/messages.py); none when the payload was
    not read (a row of seq and visibility only): then it stays hidden."""
    payload = data.get("payload")
    to = payload.get("to") if isinstance(payload, dict) else None
    return {r.get("user_id") for r in to if isinstance(r, dict)} if isinstance(to, list) else set()


# The visibilities whose events let the members their payload's ``shared_with`` names read them:
# ``gm`` (a GM's decision that read hidden changes they may see) and ``shared`` (how the same was
# stored before: its visibility, in the sealed envelope, told the table that someone besides the GM
# read it; campaign/visibility/readers.py).
READ_BY_NAMED = frozenset({VISIBILITY_GM, VISIBILITY_SHARED})

# What a row read without its payload needs beside seq, visibility and actor_id for may_see: the
# readers a ``gm`` (or ``shared``) event names (``.values("seq", "visibility", "actor_id", **HIDDEN_ROW)``).
HIDDEN_ROW = {"shared_with": KeyTransform("shared_with", "payload")}


def shared_with(data: dict) -> set[int]:
    """The user ids a ``gm`` or ``shared`` event names as its readers (campaign/visibility/hidden.py), from its
    payload or, for a row read without it, from its own ``shared_with`` (:data:`HIDDEN_ROW`)."""
    named = data["shared_with"] if "shared_with" in data else (
        data["payload"].get("shared_with") if isinstance(data.get("payload"), dict) else None)
    return {r.get("user_id") for r in named if isinstance(r, dict)} if isinstance(named, list) else set()


# What of a hidden event's envelope a member may see: enough to check its link
# and hash (docs/event-log.md), nothing of what happened or to whom.
SEALED_KEYS = ("seq", "format", "actor", "actor_id", "session", "scene", "visibility", "created_at", "prev_hash",
               "hash")


def voided_for(data: dict, viewer: Viewer, revealed: frozenset[int] | set[int] = frozenset()) -> bool:
    """Whether ``viewer`` reads a void of ``data`` (a stored event carrying its :data:`VOIDS`)."""
    return any(may_see(void, viewer, revealed) for void in data.get(VOIDS, ()))


def for_viewer(data: dict, viewer: Viewer, revealed: frozenset[int] | set[int] = frozenset()) -> dict:
    """Return ``data`` as ``viewer`` may see it: whole, or sealed.

    The sealed placeholder is the one shape fixed in docs/fair-dice.md: the
    body digest is the commitment (the body's payload holds a nonce, so the
    digest gives nothing away), and the character stays hidden too. A whole
    event says ``"voided": true`` when the viewer reads a void of it."""
    if may_see(data, viewer, revealed):
        return data if VOIDS not in data else _marked(data, voided_for(data, viewer, revealed))
    sealed = {k: data.get(k) for k in SEALED_KEYS}
    digest = data.get("body_digest")
    # A format-1 event has no body digest (its hash covers the payload): its
    # scheme-v1 commitment, kept in the payload, is what it committed to.
    commitment = digest if digest is not None else (data.get("payload") or {}).get("commitment")
    sealed.update(hidden=True, type="sealed", version=1, character=None, character_name=None, body_digest=digest,
                  payload={"hidden": True, "commitment": commitment})
    return sealed


def as_stored(data: dict) -> dict:
    """A stored event as the operator's export holds it: whole, ``"voided": true`` if anything voided it."""
    return data if VOIDS not in data else _marked(data, bool(data[VOIDS]))


def _marked(data: dict, voided: bool) -> dict:
    """``data`` without its :data:`VOIDS`, saying ``"voided": true`` if ``voided``."""
    whole = {k: v for k, v in data.items() if k != VOIDS}
    if voided:
        whole["voided"] = True
    return whole
