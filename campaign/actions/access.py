"""``access_*``: fetch something and check the user may use it."""

from __future__ import annotations

from ..eventlog import Stream
from ..models import ROLE_SPECTATOR, SHOWN_FULL, SHOWN_HIDDEN, Campaign, Character, Membership
from ..errors import ActionError, Forbidden, NotFound, Refused, Unauthenticated


def access_campaign(user, slug: str) -> tuple[Campaign, Membership]:
    """The campaign and the user's membership; the same NotFound for 'absent'
    and 'not yours', so an outsider learns nothing about the campaign."""
    if user is None or not user.is_authenticated:
        raise Unauthenticated("Log in to see this campaign.")
    membership = (
        Membership.objects.select_related("campaign", "user").filter(campaign__slug=slug, user=user).first()
        if isinstance(slug, str)
        else None
    )
    if membership is None:
        raise NotFound("There is no campaign here that you are a member of.")
    return membership.campaign, membership


def access_membership_now(stream: Stream) -> Membership:
    """The membership as it stands now, read with the campaign's lock (``campaign.eventlog.lock_stream``):
    a socket opened before a removal, a role change or a deactivation acts with today's rights or
    not at all."""
    current = stream.membership
    if current is None:
        raise Forbidden("You are no longer a member of this campaign.", "not_member")
    return current


def access_character(membership: Membership, character_id, read: Character | None = None) -> Character:
    """A character of the membership's campaign that this member may act for.

    ``read``: the character as the command's lock already read it (``campaign.eventlog.lock_stream``)."""
    if isinstance(character_id, bool) or not isinstance(character_id, int):
        raise ActionError("'character' must be the id (a number) of a character in this campaign.")
    # With its projection: a rules action reads the state, and the record path folds
    # the new events into the same row without reading it again.
    character = read if read is not None and read.pk == character_id else Character.objects.select_related(
        "projection").filter(campaign_id=membership.campaign_id, pk=character_id).first()
    # A hidden NPC does not exist for a player: the same 404 as an unknown id, never "you can't act
    # for <its name>" (campaign/actions/npcs.py).
    if character is None or (character.npc and character.shown == SHOWN_HIDDEN and not membership.is_gm):
        raise NotFound(f"This campaign has no character {character_id}.")
    # As every verifier reads the log (rules/senders.py): a GM acts for any character, a player for her own
    # player character (an NPC is the GM's, even one she made as a GM before), a spectator for none.
    if not membership.is_gm and (character.npc or character.owner_id != membership.user_id
                                 or membership.role == ROLE_SPECTATOR):
        raise Forbidden(f"You can't act for {character.name}: only their player and the GM can.")
    return character


def access_character_for_reading(membership: Membership, character_id) -> Character:
    """Any character of the membership's campaign the member may know of: every member reads every
    sheet at the table, except an NPC's the GM keeps (a hidden NPC does not exist for them, a
    name-only one has no sheet to read: campaign/actions/npcs.py)."""
    character = (
        Character.objects.select_related("owner", "projection", "campaign")
        .filter(campaign_id=membership.campaign_id, pk=character_id)
        .first()
    )
    if character is None or (character.npc and character.shown != SHOWN_FULL and not membership.is_gm):
        raise NotFound(f"This campaign has no character {character_id}." if character is None or
                       character.shown == SHOWN_HIDDEN else f"The GM keeps {character.name}'s sheet to themselves.")
    return character


def access_other_member(campaign: Campaign, membership: Membership, username) -> Membership:
    """Another member of the campaign, by username (the GM can't remove or demote themselves:
    a campaign always keeps a GM)."""
    other = (Membership.objects.select_related("user").filter(campaign=campaign, user__username=username).first()
             if isinstance(username, str) else None)
    if other is None:
        raise ActionError(f"'{str(username)[:40]}' is not a member of this campaign.")
    if other.user_id == membership.user_id:
        raise Refused("You can't change your own place at the table.")
    return other


def require_gm(membership: Membership, what: str) -> None:
    if not membership.is_gm:
        raise Forbidden(f"Only the GM can {what}.")
