"""The campaign's settings: the GM changes them with ``configure_campaign``, one
``campaign_configured`` event each time (docs/rules.md, "Campaign settings").

The settings live in the log only. The current set is the last
``campaign_configured``'s ``options``; a log from before settings existed is
read as it was played (:func:`current_options`: the first character's sheet
options, else the defaults), never rewritten.
"""

from __future__ import annotations

from rules import RuleError, get_settings
from rules.declare import Object
from rules.options import CONFIGURED, change, complete

import rules.witness as witnessed

from ..eventlog import Draft
from ..models import Campaign, Event, Membership
from .checks import check_reason
from .declared import platform_action, reason_field
from ..errors import ActionError, Refused


def configured_options(campaign: Campaign) -> dict | None:
    """The options of the campaign's last ``campaign_configured`` (None if the GM never changed any)."""
    last = Event.objects.filter(campaign=campaign, type=CONFIGURED).order_by("-seq").values_list("payload", flat=True)
    payload = last.first()
    return None if payload is None else payload["options"]


def current_options(campaign: Campaign) -> dict:
    """The campaign's settings now, nested; in an older log, its first character's sheet options."""
    declared = get_settings(campaign.system)
    options = configured_options(campaign)
    if options is None:
        first = (Event.objects.filter(campaign=campaign, type="character_created").order_by("seq")
                 .values_list("payload", flat=True).first())
        options = (first or {}).get("sheet", {}).get("options")
    return complete(declared, options)


def with_campaign_options(campaign: Campaign, sheet):
    """A new character's sheet with the campaign's settings as its options, once the GM set any."""
    options = configured_options(campaign)
    if options is None or not isinstance(sheet, dict):
        return sheet
    return {**sheet, "options": options}


# The platform's own setting beside the system's (docs/fair-dice.md, "Witnessed rolls"): whose
# dice wait for the other members' tables. Not a rules option: it decides how dice are drawn, not
# what the rules make of them, so it is not copied into sheets; the event carries it as its own key.
WITNESSED = "witnessed_rolls"


@platform_action("configure_campaign", title="Change the campaign's settings", by="gm",
                 gm="change the campaign's settings", emits=(CONFIGURED,),
                 help="{dotted key: value} of the system's settings (GET /api/systems/<name>).",
                 fields={"settings": Object(label="Settings"), "reason": reason_field()})
def decide_configure_campaign(campaign: Campaign, membership: Membership, action: dict, *_) -> Draft:
    """GM: change some settings (``{"settings": {"ties_succeed": false}}``), with an optional ``reason``."""
    wanted = action.get("settings")
    witness = None
    if isinstance(wanted, dict) and WITNESSED in wanted:
        wanted = {k: v for k, v in wanted.items() if k != WITNESSED}
        witness = _witness_mode(campaign, action["settings"][WITNESSED])
    try:
        if witness is not None and not wanted:
            options, changed = current_options(campaign), {}
        else:
            options, changed = change(get_settings(campaign.system), current_options(campaign), wanted)
    except RuleError as e:
        if e.code != "unchanged" or witness in (None, campaign.witnessed_rolls):
            raise (Refused(e.message, e.code) if e.code == "unchanged" else ActionError(e.message, e.code))
        options, changed = current_options(campaign), {}
    payload = {"changed": changed, "options": options, "reason": check_reason(action)}
    if witness is not None and witness != campaign.witnessed_rolls:
        changed[WITNESSED] = {"from": campaign.witnessed_rolls, "to": witness}
        payload[WITNESSED] = witness  # record writes it into the row from the event (campaign.roster)
    if not changed:
        raise Refused("Those are already the campaign's settings: nothing changed.", "unchanged")
    return Draft(CONFIGURED, payload)


def _witness_mode(campaign: Campaign, value) -> str:
    if value not in witnessed.MODES:
        raise ActionError(f"'{WITNESSED}' must be one of {', '.join(witnessed.MODES)}.")
    if value != campaign.witnessed_rolls and campaign.current_session is not None:
        # A GM-host could switch witnessing off, roll dice she ground, and switch it on again: within a
        # session whose rolls are witnessed, they all are (rules/witness.py names a change inside one).
        raise Refused(f"Whose rolls are witnessed changes between sessions only: end session "
                      f"{campaign.current_session} first.", "in_session")
    if value != "off" and campaign.signed_from is None:
        raise ActionError("Only a campaign whose members sign their commands can witness rolls: a witness's "
                          "entropy counts only under her signature.")
    return value
