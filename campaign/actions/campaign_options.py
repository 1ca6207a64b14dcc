"""The campaign's settings: the GM changes them with ``configure_campaign``, one
``campaign_configured`` event each time (docs/rules.md, "Campaign settings").

The settings live in the log only. The current set is the last
``campaign_configured``'s ``options``; a log from before settings existed is
read as it was played (:func:`current_options`: the first character's sheet
options, else the defaults), never rewritten.
"""

from __future__ import annotations

from rules import RuleError, get_settings
from rules.options import CONFIGURED, change, complete

from ..log import Draft
from ..models import Campaign, Event, Membership
from .checks import check_reason
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


def decide_configure_campaign(campaign: Campaign, membership: Membership, action: dict) -> Draft:
    """GM: change some settings (``{"settings": {"ties_succeed": false}}``), with an optional ``reason``."""
    try:
        options, changed = change(get_settings(campaign.system), current_options(campaign), action.get("settings"))
    except RuleError as e:
        raise (Refused(e.message, e.code) if e.code == "unchanged" else ActionError(e.message, e.code))
    return Draft(CONFIGURED, {"changed": changed, "options": options, "reason": check_reason(action)})
