"""The one visibility filter: what a member may see of an event.

Every way an event leaves the server (socket, events API, export, page) goes
through :func:`for_viewer`. Hidden rolls are replaced by a sealed stub that
says a roll happened, by whom, and nothing of its dice.
"""

from __future__ import annotations

from dataclasses import dataclass

from .models import ROLE_GM, VISIBILITY_GM, VISIBILITY_PUBLIC, VISIBILITY_SECRET


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
        return False
    return False  # an unknown visibility is hidden, never shown by mistake


def for_viewer(data: dict, viewer: Viewer, revealed: frozenset[int] | set[int] = frozenset()) -> dict:
    """Return ``data`` as ``viewer`` may see it: whole, or sealed."""
    if may_see(data, viewer, revealed):
        return data
    sealed = {k: v for k, v in data.items() if k != "payload"}
    sealed["hidden"] = True
    sealed["payload"] = {"hidden": True, "commitment": data["payload"].get("commitment")}
    return sealed
