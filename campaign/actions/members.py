"""Who sits at the table: adding members, removing them, changing their role."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.db import transaction

import rules.witness as witnessed
from rules.declare import Choice, Text

from ..eventlog import Draft, lock_campaign, record
from ..models import ROLE_CHOICES, ROLE_PLAYER, ROLE_SPECTATOR, Campaign, Membership
from ..publish import close_sockets_on_commit, publish_on_commit
from .access import access_other_member
from .campaigns import new_invite
from .declared import platform_action
from ..errors import ActionError, Refused

User = get_user_model()


@platform_action("add_member", title="Add a member", by="gm", gm="add members", emits=("member_joined",),
                 fields={"username": Text(150, label="Username"),
                         "role": Choice([ROLE_PLAYER, ROLE_SPECTATOR], default=ROLE_PLAYER, label="Role")})
def decide_add_member(campaign: Campaign, membership: Membership, action: dict, *_) -> Draft:
    role = action.get("role", ROLE_PLAYER)
    if role not in (ROLE_PLAYER, ROLE_SPECTATOR):
        raise ActionError("'role' must be player or spectator.")
    username = action.get("username")
    user = User.objects.filter(username=username).first() if isinstance(username, str) else None
    if user is None:
        raise ActionError("There is no user with that name: they can sign up first.")
    if Membership.objects.filter(campaign=campaign, user=user).exists():
        raise Refused(f"{user.username} is already at this table.")
    return _joined(user, role)  # record seats her (campaign.roster)


def _joined(user, role: str) -> Draft:
    return Draft("member_joined", {"username": user.username, "user_id": user.pk, "role": role})


@platform_action("remove_member", title="Remove a member", by="gm", gm="remove members",
                 emits=("member_removed",), help="Their sockets close and the invite link changes; their "
                 "characters and past events stay.", fields={"username": Text(150, label="Username")})
def decide_remove_member(campaign: Campaign, membership: Membership, action: dict, *_) -> Draft:
    """The member leaves the table: their sockets close; their characters and past events stay.

    The invite link changes too: the one they were given would let them straight back in. The GM
    hands the new one (on the settings page) to whoever is still to join."""
    other = access_other_member(campaign, membership, action.get("username"))
    # Removed and added again as a player, a GM would step down with no role change: as change_role.
    if campaign.current_session is not None and witnessed.steps_down(campaign.witnessed_rolls, other.role, None):
        raise Refused(f"Where the GM's rolls are witnessed, a GM leaves the table between sessions only (added again "
                      f"as a player her rolls would escape their witnesses): end session {campaign.current_session} "
                      f"first.", "in_session")
    new_invite(campaign)  # a secret, not the log's: it changes here
    close_sockets_on_commit(other.user_id, campaign.id)
    return Draft("member_removed", {"username": other.user.username, "user_id": other.user_id, "role": other.role})


@platform_action("change_role", title="Change a member's role", by="gm", gm="change roles",
                 emits=("member_role_changed",),
                 fields={"username": Text(150, label="Username"),
                         "role": Choice([value for value, _ in ROLE_CHOICES], label="Role")})
def decide_change_role(campaign: Campaign, membership: Membership, action: dict, *_) -> Draft:
    """A new role; their sockets close so they reconnect seeing exactly what the new role may."""
    other = access_other_member(campaign, membership, action.get("username"))
    role = action.get("role")
    if not isinstance(role, str) or role not in dict(ROLE_CHOICES):
        raise ActionError("'role' must be gm, player or spectator.")
    if role == other.role:
        raise Refused(f"{other.user.username} is already {role}.")
    if campaign.current_session is not None and witnessed.steps_down(campaign.witnessed_rolls, other.role, role):
        raise Refused(f"Where the GM's rolls are witnessed, a GM steps down between sessions only (as a player her "
                      f"rolls would escape their witnesses): end session {campaign.current_session} first.", "in_session")
    close_sockets_on_commit(other.user_id, campaign.id)
    return Draft("member_role_changed", {"username": other.user.username, "user_id": other.user_id,
                                         "from": other.role, "role": role})


def do_add_member(campaign: Campaign, user, role: str, actor=None) -> Membership:
    """Add ``user`` to ``campaign`` (idempotent: an existing member keeps their role)."""
    if role not in dict(ROLE_CHOICES):
        raise ActionError("The role must be gm, player or spectator.")
    with transaction.atomic():
        locked = lock_campaign(campaign.id)
        existing = Membership.objects.filter(campaign=locked, user=user).first()
        if existing:
            return existing
        events = record(locked, [_joined(user, role)], actor=actor or user)  # which seats her (campaign.roster)
        publish_on_commit(locked.id, events)
    return Membership.objects.get(campaign=locked, user=user)
