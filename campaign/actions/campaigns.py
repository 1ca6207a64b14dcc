"""Campaigns: creating one, renaming it, signing its head, rotating its invite link."""

from __future__ import annotations

import itertools
import secrets

from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.text import slugify

from rules import get_system
from rules.witness import MODES as WITNESS_MODES
from rules.declare import Text

from .. import checkpoints
from ..eventlog import Draft, lock_campaign, record
from ..models import ROLE_SPECTATOR, Campaign, Membership
from ..publish import publish_on_commit
from .access import require_gm
from .checks import check_name
from .declared import platform_action
from ..errors import ActionError, Forbidden, Refused


@platform_action("rename_campaign", title="Rename the campaign", by="gm", gm="rename the campaign",
                 emits=("campaign_renamed",), fields={"name": Text(120, label="Name")})
def decide_rename_campaign(campaign: Campaign, membership: Membership, action: dict, *_) -> Draft:
    name = check_name(action.get("name"), "A campaign name", 120)
    if name == campaign.name:
        raise Refused(f"The campaign is already called {name}.")
    return Draft("campaign_renamed", {"from": campaign.name, "name": name})  # record folds it into the row


# Whether a campaign made without saying is one whose members sign their commands (docs/fair-dice.md,
# "Signed commands"): the home page's and the demo's. Their pages sign for them
# (campaign.signed_forms.PAGES_SIGN); scripts sign with tools/talekeeper_client.py.
NEW_CAMPAIGNS_SIGN = True
# Whose dice a new signed campaign witnesses (docs/fair-dice.md, "Witnessed rolls"), when its maker
# does not say: the GM's, whose dice a host who is also the GM could otherwise grind.
NEW_CAMPAIGNS_WITNESS = "gm"


def do_create_campaign(gm, name: str, system: str, slug: str | None = None, signed: bool | None = None,
                       witnessed: str | None = None) -> Campaign:
    """Create a campaign with ``gm`` as its GM; its log opens with ``campaign_created``. ``signed``: every
    member's command must carry her signature from the first event on (``NEW_CAMPAIGNS_SIGN`` if None);
    ``campaign_created`` says so (``"signed_commands": true``), so every verifier knows it from the log.
    ``witnessed``: whose dice wait for witnesses ("off", "gm", "everyone"); if None,
    ``NEW_CAMPAIGNS_WITNESS`` for a campaign whose signing was not chosen either (the home page's, the
    demo's), else "off" (a test's ``signed=True`` table asks for witnesses when it tests them)."""
    name = check_name(name, "A campaign name", 120)
    try:
        get_system(system)
    except KeyError:
        raise ActionError(f"Unknown rule system '{str(system)[:20]}'.")
    base = slugify(slug or name)[:50] or "campaign"
    with transaction.atomic():
        campaign = _new_campaign_row(base, name, system)
        if witnessed is None:
            witnessed = NEW_CAMPAIGNS_WITNESS if signed is None else "off"
        signed = NEW_CAMPAIGNS_SIGN if signed is None else bool(signed)
        if witnessed not in WITNESS_MODES or (witnessed != "off" and not signed):
            raise ActionError("Witnessed rolls are 'off', 'gm' or 'everyone', and only where members sign.")
        campaign = lock_campaign(campaign.id)
        # Its event seats the GM and sets signed_from and witnessed_rolls (campaign.roster, as record stores it).
        created = {"name": name, "system": system, "gm": gm.username, **({"signed_commands": True} if signed else {}),
                   **({"witnessed_rolls": witnessed} if witnessed != "off" else {})}
        events = record(campaign, [Draft("campaign_created", created)], actor=gm)
        publish_on_commit(campaign.id, events)
    return campaign


def _new_campaign_row(base: str, name: str, system: str) -> Campaign:
    """The campaign row under the first free slug of base, base-2, base-3...

    Two people creating "Night Watch" at once both see "night-watch" free; the
    second insert then hits the unique slug (PostgreSQL makes it wait for the
    first to commit), and moves on to the next slug instead of failing."""
    for n in itertools.count(1):
        candidate = base if n == 1 else f"{base}-{n}"
        if Campaign.objects.filter(slug=candidate).exists():
            continue
        try:
            with transaction.atomic():  # a savepoint: the clash must not spoil the outer transaction
                return Campaign.objects.create(slug=candidate, name=name, system=system)
        except IntegrityError:
            continue


def do_checkpoint(membership: Membership):
    """Sign the campaign's head now, for a player or the GM who wants a receipt of the log so far;
    ``(checkpoint, made)``. One per head: asking again at the same head gives the one already
    signed (a script asking in a loop makes no rows). Spectators keep the receipts players make."""
    if membership.role == ROLE_SPECTATOR:
        raise Forbidden("Spectators can't sign checkpoints; the players' and the GM's are listed for everyone.")
    with transaction.atomic():
        campaign = lock_campaign(membership.campaign_id)  # the head can't move while it is signed
        existing = campaign.checkpoints.filter(seq=campaign.last_seq, hash=campaign.head_hash).order_by("id").first()
        if existing is not None:
            return existing, False
        return checkpoints.sign_head(campaign), True


def do_rotate_invite(membership: Membership) -> Campaign:
    """A new invite link for the campaign; the old one stops working at once.

    Not an event: the link is a secret of the GM's, not something that happened
    at the table (and the log is read by every member)."""
    require_gm(membership, "make a new invite link")
    with transaction.atomic():
        campaign = lock_campaign(membership.campaign_id)
        new_invite(campaign)
    return campaign


def new_invite(campaign: Campaign) -> None:
    """Replace the campaign's invite link (the caller holds its lock); the old one stops working."""
    campaign.invite_code = secrets.token_urlsafe()
    campaign.invite_created_at = timezone.now()
    Campaign.objects.filter(pk=campaign.pk).update(invite_code=campaign.invite_code,
                                                   invite_created_at=campaign.invite_created_at)
