"""The table page: the log, the sheets, the dice.

The page is server-rendered once; everything that changes afterwards arrives
over the table socket. What the page needs to start is one JSON object
(``table_data``, rendered with ``json_script``): who you are, the campaign's
system, every character with its projected state, the members, and the
system's example sheet for the "new character" form. The JavaScript in
``static/talekeeper/`` does the rest (see docs/table.md).
"""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.contrib.staticfiles import finders
from django.templatetags.static import static
from django.http import Http404
from django.shortcuts import render

from campaign.actions import UNVOIDABLE, ActionError, access_campaign
from campaign.actions.encounters import current_encounter
from campaign.actions.fights import fight_for
from campaign.actions.kept import characters_for, sheet_hidden_from
from campaign.actions.platform import form_limits
from campaign.actions.sessions import current_scene_name
from campaign.audit import LINES
from campaign.models import (SHOWN_CHOICES, VISIBILITY_GM, VISIBILITY_PUBLIC, VISIBILITY_SECRET, VISIBILITY_SHARED,
                             VISIBILITY_WHISPER, VISIBILITY_WORDS, Character)
from campaign.fairdice import current_commitment
from campaign.signed_forms import pages_sign
from campaign.openapi import declared, platform_json
from campaign.sheets import character_entry, priced
from campaign.visibility import Viewer, visible_fold
from rules.npc import TEMPLATES as QUICK_TEMPLATES

# The order the forms offer "who sees the dice" in: from the most seen to the least.
OFFERED_ORDER = [VISIBILITY_PUBLIC, VISIBILITY_SECRET, VISIBILITY_GM, VISIBILITY_WHISPER, VISIBILITY_SHARED]

RECENT_EVENTS = 200  # events the page shows on load; earlier ones on demand


def system_module(system: str) -> str:
    """The URL of the system's table module, by its hashed name in production, so the page imports
    the module of the same release as itself (a dynamic ``import()`` is not rewritten by
    collectstatic); ``generic.js`` for a system without one."""
    path = f"talekeeper/systems/{system}.js"
    return static(path if finders.find(path) else "talekeeper/systems/generic.js")


def _character_json(character: Character, membership, rules) -> dict:
    projection = getattr(character, "projection", None)
    # As this member may see it: a sheet must not give away a hidden roll, nor an NPC's sheet the GM keeps.
    sheet_hidden = sheet_hidden_from(character, membership)
    state, seq = visible_fold(character, Viewer.of(membership)) if projection and not sheet_hidden else (None, 0)
    # Each advance's price now, as a fetched or pushed sheet has them (campaign/sheets.py sheet_body).
    return {**character_entry(character), "seq": seq, "state": state, **priced(rules, state)}


@login_required
def table(request, slug):
    try:
        campaign, membership = access_campaign(request.user, slug)
    except ActionError:
        raise Http404("There is no campaign here that you are a member of.")
    # The campaign row is read first, so every projection read below is at least
    # as new as ``head``: events after it arrive over the socket and refresh them.
    head = campaign.last_seq
    characters = list(
        characters_for(membership).select_related("owner", "projection").order_by("name", "id")
    )
    members = list(campaign.memberships.select_related("user").order_by("role", "user__username"))
    invite_url = (request.build_absolute_uri(f"/join/{campaign.invite_code}/")
                  if membership.is_gm and campaign.invite_is_valid() else None)
    rules = campaign.rules
    scene_name = current_scene_name(campaign)
    table_data = {
        "slug": campaign.slug,
        "campaignId": campaign.id,  # format-2 event hashes cover it (static/talekeeper/chain.js)
        "name": campaign.name,
        "system": campaign.system,
        "systemTitle": rules.title,
        "systemModule": system_module(campaign.system),
        "head": head,
        "recent": RECENT_EVENTS,
        # The id too: a witnessed roll lists its witnesses by id (static/talekeeper/witnessing.js).
        "me": {"username": request.user.username, "role": membership.role, "id": request.user.id},
        "session": campaign.current_session,
        # The running session's dice commitment: what the page signs its commands under (static/talekeeper/trust.js).
        "commitment": current_commitment(campaign),
        # Pages sign where members sign (campaign.signed_forms.pages_sign); signingFrom: from which seq.
        "signing": pages_sign(campaign),
        "signingFrom": campaign.signed_from,
        "scene": campaign.current_scene,
        "sceneName": scene_name,
        "characters": [_character_json(c, membership, rules) for c in characters],
        "encounter": current_encounter(campaign),
        "fight": fight_for(campaign, membership),
        "members": [{"username": m.user.username, "role": m.role} for m in members],
        "exampleSheet": dict(rules.example_sheet),
        "actions": sorted(rules.actions),
        "gmActions": sorted(rules.gm_actions),
        # The system's declared actions, events and sheet (rules/declare.py): the forms' limits.
        "declared": declared(campaign.system),
        # The platform's declared actions (campaign/actions/declared.py): the limits of the forms the page builds.
        "platform": platform_json(),
        # Said once in campaign/models.py and campaign/actions/log_entries.py; the page reads them here.
        # The GM is not offered "Only me and the GM": for her it is "Only the GM" under another badge
        # ("secret"). Only the choice goes: the server takes it still, and its badge reads as ever.
        # Offered from the most to the least seen: everyone, me and the GM, the GM only.
        "visibilities": [{"value": value, **VISIBILITY_WORDS[value],
                          **({"choose": None} if membership.is_gm and value == VISIBILITY_SECRET else {})}
                         for value in sorted(VISIBILITY_WORDS, key=OFFERED_ORDER.index)],
        # What the players see of an NPC (create_character's and show_npc's "shown"), in campaign/models.py's words.
        "shown": [{"value": value, "label": label} for value, label in SHOWN_CHOICES],
        "unvoidable": sorted(UNVOIDABLE),
        # The platform's event sentences, said once for the audit page and the table.
        "lines": LINES,
    }
    # A player without a character of their own lands on the "new character" form, open (table.js).
    table_data["needsCharacter"] = membership.role == "player" and not any(c.owner_id == request.user.id for c in characters)
    return render(request, "table.html", {
        "campaign": campaign,
        "membership": membership,
        "characters": characters,
        "members": members,
        "invite_url": invite_url,
        "scene_name": scene_name,
        # The GM's quick NPCs (create_character's "quick", rules/npc.py): a template, every trait at its rating.
        "quick_npcs": [{"template": name, "rating": rating} for name, rating in QUICK_TEMPLATES.items()],
        "table_data": table_data,
        # Each platform action's declared fields by name, for the forms the template writes (maxlength).
        "limits": form_limits(),
        "needs_character": table_data["needsCharacter"],
    })


@login_required
def verify(request, slug):
    """The verification page: any member's browser checks the chain, the dice and the reveals.

    The server only serves the page; static/talekeeper/verify.js reads the log
    through the events API, as this member sees it, and does every check.
    """
    try:
        campaign, membership = access_campaign(request.user, slug)
    except ActionError:
        raise Http404("There is no campaign here that you are a member of.")
    return render(request, "verify.html", {
        "campaign": campaign,
        # signing: whether this campaign's members sign (its keys are listed, and revoked, here).
        "verify_data": {"slug": campaign.slug, "campaignId": campaign.id, "name": campaign.name,
                        "signing": pages_sign(campaign),
                        "me": {"username": request.user.username, "role": membership.role}},
    })
