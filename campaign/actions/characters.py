"""Characters: a new one enters the log with its validated sheet.

A new sheet takes the campaign's settings as its options (campaign_options). The GM may
make NPCs (npcs: ``"npc": true``, ``shown``, a ``quick`` template instead of a sheet) and
may override the system's creation limits (``"override_limits": true``, an experienced
hero or an expert NPC): the event says so (``limits_overridden``) and so does the state.
"""

from __future__ import annotations

from rules import RuleError
from rules.declare import Choice, Flag, Object, Text

from ..eventlog import Draft
from ..models import ROLE_GM, ROLE_PLAYER, VISIBILITY_PUBLIC, Campaign, Character, Membership
from .access import require_gm
from .adjustments import check_established
from .campaign_options import with_campaign_options
from .checks import check_name
from .declared import platform_action
from ..errors import ActionError
from .kept import SHOWN, stored_visibility
from .npcs import read_npc_fields


@platform_action(
    "create_character", title="Create a character", emits=("character_created",),
    help="A sheet of the campaign's system (Sheet.<system>). The GM may give it to a player (`owner`), make an "
         "NPC (`npc`, `shown`, a `quick` template instead of a sheet) and pass the creation limits.",
    fields={"name": Text(80, label="Name"),
            "sheet": Object(optional=True, label="Sheet"),
            "owner": Text(150, optional=True, label="Player (GM only)"),
            "npc": Flag(label="NPC (GM only)"),
            "shown": Choice(SHOWN, optional=True, label="Shown (an NPC's)"),
            "quick": Object(optional=True, label="Quick NPC",
                            help="{\"template\": minion, veteran or boss} or {\"rating\": 1..10}."),
            "override_limits": Flag(label="Past the creation limits (GM only)")},
)
def decide_create_character(campaign: Campaign, membership: Membership, action: dict, *_) -> Draft:
    name = check_name(action.get("name"), "A character name")
    owner = membership.user
    npc, shown, quick = read_npc_fields(campaign, membership, action)
    override = action.get("override_limits", False)
    if not isinstance(override, bool):
        raise ActionError("'override_limits' must be true or false.")
    if override:
        require_gm(membership, "override the creation limits")
    if action.get("owner") is not None:
        require_gm(membership, "create a character for another member")
        if npc:
            raise ActionError("An NPC is the GM's: leave out 'owner'.")
        if not isinstance(action["owner"], str):
            raise ActionError("'owner' must be the username of a player in this campaign.")
        owner_membership = Membership.objects.filter(
            campaign=campaign, user__username=action["owner"], role__in=[ROLE_GM, ROLE_PLAYER]
        ).first()
        if owner_membership is None:
            raise ActionError(f"'{str(action['owner'])[:40]}' is not a player in this campaign.")
        owner = owner_membership.user
    submitted = with_campaign_options(campaign, quick if quick is not None else action.get("sheet", {}))
    try:
        # A quick NPC is every trait at one rating, past any creation limit by design.
        if override or quick is not None:
            sheet = check_established(campaign.rules, submitted)
        else:
            sheet = campaign.rules.validate_sheet(submitted)
    except RuleError as e:
        raise ActionError(f"The character sheet is not valid: {e.message}", "invalid_sheet")
    # Stored by record from the event (campaign.roster), in the statement before the event's.
    character = Character(campaign=campaign, owner=owner, name=name, npc=npc, shown=shown)
    payload = {"name": name, "owner": owner.username, "owner_id": owner.pk, "sheet": sheet}
    if npc:
        payload.update(npc=True, shown=shown)
    if override or (quick is not None and not _within_creation_limits(campaign, submitted)):
        payload["limits_overridden"] = True
    return Draft("character_created", payload, 1, character, stored_visibility(character, VISIBILITY_PUBLIC))


def _within_creation_limits(campaign: Campaign, sheet: dict) -> bool:
    try:
        campaign.rules.validate_sheet(sheet)
    except RuleError:
        return False
    return True
