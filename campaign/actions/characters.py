"""Characters: a new one enters the log with its validated sheet."""

from __future__ import annotations

from rules import RuleError

from ..log import Draft
from ..models import ROLE_GM, ROLE_PLAYER, Campaign, Character, Membership
from .access import require_gm
from .checks import check_name
from .errors import ActionError


def decide_create_character(campaign: Campaign, membership: Membership, action: dict) -> Draft:
    name = check_name(action.get("name"), "A character name")
    owner = membership.user
    if action.get("owner") is not None:
        require_gm(membership, "create a character for another member")
        if not isinstance(action["owner"], str):
            raise ActionError("'owner' must be the username of a player in this campaign.")
        owner_membership = Membership.objects.filter(
            campaign=campaign, user__username=action["owner"], role__in=[ROLE_GM, ROLE_PLAYER]
        ).first()
        if owner_membership is None:
            raise ActionError(f"'{str(action['owner'])[:40]}' is not a player in this campaign.")
        owner = owner_membership.user
    try:
        sheet = campaign.rules.validate_sheet(action.get("sheet", {}))
    except RuleError as e:
        raise ActionError(f"The character sheet is not valid: {e.message}", "invalid_sheet")
    character = Character.objects.create(campaign=campaign, owner=owner, name=name)
    return Draft("character_created", {"name": name, "owner": owner.username, "sheet": sheet}, 1, character)
