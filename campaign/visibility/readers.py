"""Who reads a hidden decision, and how a mark on a hidden event is stored.

A ``gm`` event names the members besides the GM who read it in its payload's ``shared_with``
(:func:`naming_readers`): inside the body digest, so to anyone else it is one more GM-only event
(docs/hidden-information.md). Who they are depends only on who made which hidden change and how it
was shown, never on dice.
"""

from __future__ import annotations

from ..models import ROLE_GM, ROLE_PLAYER, VISIBILITY_GM, VISIBILITY_PUBLIC, Character, Event, Membership
from .filter import READ_BY_NAMED, Viewer, may_see, shared_with, whispered_to


def sharers(character: Character, actor: Viewer, live: list[dict], revealed: set[int]) -> list[dict]:
    """The members (the actor and the GM left out) who may see every hidden change in ``live``, as
    ``[{"user_id", "username"}]``: who a GM's decision that read them may be shared with. Only who
    acted and how it was shown counts, never dice (the two-worlds test)."""
    unseen = [r for r in live if r["seq"] not in revealed]
    candidates = {r["actor_id"] for r in unseen} | {u for r in unseen for u in shared_ids(r)}
    ids = [u for u in candidates - {actor.user_id, None}
           if all(may_see(r, Viewer(user_id=u, role=ROLE_PLAYER), revealed) for r in unseen)]
    return named(character.campaign_id, ids)


def named(campaign_id: int, ids, gm_too: bool = True) -> list[dict]:
    """The members of the campaign with these user ids, as a ``gm`` event names its readers:
    ``[{"user_id", "username"}]`` in the order of their names."""
    if not ids:
        return []
    members = Membership.objects.filter(campaign_id=campaign_id, user_id__in=ids)
    if not gm_too:
        members = members.exclude(role=ROLE_GM)
    return [{"user_id": user_id, "username": username} for user_id, username in
            members.order_by("user__username").values_list("user_id", "user__username")]


def kept_from_the_table(character: Character, gm: Viewer, live: list[dict], revealed: set[int]
                        ) -> tuple[str, list[dict]]:
    """How a GM's decision that read hidden changes of ``character`` the table may not see is stored:
    ``gm``, and read too by the members who may see all of them (:func:`sharers`; :func:`naming_readers`)."""
    return VISIBILITY_GM, sharers(character, gm, live, revealed)


def naming_readers(payload: dict, shared: list[dict]) -> dict:
    """The payload of a ``gm`` event that ``shared`` (``[{"user_id", "username"}]``) read besides the GM.

    Inside the payload, whom it names is inside the body digest, which a sealed stub shows only as a
    digest: for everyone else it is one more GM-only event."""
    return {**payload, "shared_with": shared} if shared else payload


def shared_ids(row: dict) -> set[int]:
    """The members besides its actor and the GM a hidden event's row names as its readers."""
    return shared_with(row) if row.get("visibility") in READ_BY_NAMED else set()


def revealed(event: Event) -> bool:
    return Event.objects.filter(campaign_id=event.campaign_id, type="roll_revealed", payload__seq=event.seq).exists()


def shown_type(event: Event) -> str:
    """The type of ``event`` as a mark on it (a void) may name it: ``sealed`` while it is hidden."""
    return event.type if event.visibility == VISIBILITY_PUBLIC or revealed(event) else "sealed"


def readers_of(event: Event) -> tuple[str, list[dict]]:
    """The visibility (and, for ``gm``, the readers it names besides the GM) of a GM's mark on ``event`` (a void) that
    exactly ``event``'s readers may see: public once ``event`` is, else the GM and the members who
    may see it. (Public, a void of a sealed roll named its character to the table, and came with
    that character's sheet.)"""
    if event.visibility == VISIBILITY_PUBLIC or revealed(event):
        return VISIBILITY_PUBLIC, []
    data = {"seq": event.seq, "visibility": event.visibility, "actor_id": event.actor_id, "payload": event.payload}
    members = {event.actor_id} | shared_with(data) | whispered_to(data)
    ids = [u for u in members - {None} if may_see(data, Viewer(user_id=u, role=ROLE_PLAYER))]
    return VISIBILITY_GM, named(event.campaign_id, ids, gm_too=False)
