"""Create (idempotently) a demo campaign with a GM and three players."""

import base64
import hashlib
import hmac
import json
import secrets

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from campaign.actions import do_add_member, do_command, do_create_campaign
from campaign.fairdice import current_commitment
from campaign.member_keys import ADD_KEY, REVOKE_KEY, command_message
from campaign.models import ROLE_GM, ROLE_PLAYER, ApiToken, Campaign, Character, Membership
from rules import SYSTEM_MODULES, SYSTEM_TITLES

DEFAULT_SYSTEM = "tote"
MEMBERS = [("gm", ROLE_GM), ("alice", ROLE_PLAYER), ("bob", ROLE_PLAYER), ("carol", ROLE_PLAYER)]
# One character per player, from the system's example sheet, so the table is playable at once.
HEROES = {"alice": "Ayasha", "bob": "Brannoc", "carol": "Corvina"}


def demo_slug(system: str) -> str:
    """One demo campaign per system: ``demo`` plays the default system, ``demo-wyrm`` WYRM..."""
    return "demo" if system == DEFAULT_SYSTEM else f"demo-{system}"


def demo_password(username: str) -> str:
    """Stable for one SECRET_KEY, so running the demo twice prints the same logins."""
    digest = hmac.new(settings.SECRET_KEY.encode(), f"demo:{username}".encode(), hashlib.sha256).hexdigest()
    return f"{username}-{digest[:10]}"


def _b64url(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


class SetupKey:
    """The GM's key for setting up a demo campaign whose members sign (docs/fair-dice.md, "Signed
    commands"): made here, registered in the log in the GM's name (labelled as the demo's), used for
    the setup commands, then revoked and forgotten; the GM's browser registers its own. The operator
    who runs ``demo`` made the GM's account, so this is the GM's script, not the server signing."""

    def __init__(self, membership):
        self.membership, self.key = membership, Ed25519PrivateKey.generate()
        raw = self.key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
        self.public = _b64url(raw)
        self({"id": secrets.token_hex(16), "action": {"type": ADD_KEY, "key": self.public,
                                                       "label": "manage.py demo (setup, then revoked)"}})

    def __call__(self, envelope: dict):
        campaign = Campaign.objects.get(pk=self.membership.campaign_id)
        session, commitment = campaign.current_session, current_commitment(campaign)
        message = command_message(campaign.id, session, commitment, envelope["id"], envelope["action"])
        signature = {"key": self.public, "session": session, "commitment": commitment,
                     "sig": _b64url(self.key.sign(message))}
        return do_command(self.membership, {**envelope, "signature": signature})

    def revoke(self):
        self({"id": secrets.token_hex(16), "action": {"type": REVOKE_KEY, "key": self.public}})


class Command(BaseCommand):
    help = "Create (idempotently) a demo campaign with a GM and three players, and print their logins."

    def add_arguments(self, parser):
        parser.add_argument("--json", action="store_true", help="print one JSON object, for scripts")
        parser.add_argument("--system", default=DEFAULT_SYSTEM,
                            help=f"rule system of the demo campaign: {', '.join(SYSTEM_MODULES)}")

    def handle(self, *args, **options):
        system = options["system"]
        if system not in SYSTEM_MODULES:
            raise CommandError(f"Unknown rule system '{system}': choose one of {', '.join(SYSTEM_MODULES)}.")
        slug = demo_slug(system)
        User = get_user_model()
        users = {}
        for username, _ in MEMBERS:
            user, _ = User.objects.get_or_create(username=username)
            user.set_password(demo_password(username))
            user.save()
            users[username] = user
        campaign = Campaign.objects.filter(slug=slug).first()
        if campaign is None:
            campaign = do_create_campaign(users["gm"], f"Demo: {SYSTEM_TITLES[system]}", system, slug=slug)
        elif campaign.system != system:  # made by hand, or by an older demo command
            raise CommandError(f"The campaign '{slug}' exists and plays {campaign.system}, not {system}: "
                               "rename or delete it, or use another database.")
        for username, role in MEMBERS:
            do_add_member(campaign, users[username], role, actor=users["gm"])
        membership = Membership.objects.select_related("user", "campaign").get(campaign=campaign, user=users["gm"])
        missing = [(u, name) for u, name in HEROES.items() if not Character.objects.filter(campaign=campaign, name=name).exists()]
        if missing:
            send = SetupKey(membership) if campaign.signed_from is not None else (
                lambda envelope: do_command(membership, envelope))
            for username, name in missing:
                send({"id": f"demo-hero-{username}", "action": {
                    "type": "create_character", "name": name, "owner": username,
                    "sheet": campaign.rules.example_sheet}})
            if isinstance(send, SetupKey):
                send.revoke()
        members = []
        for username, role in MEMBERS:
            # Only digests are stored, so a token can be printed only when it is made: the
            # demo's previous one is replaced (revoked) by a fresh one on every run.
            ApiToken.objects.filter(user=users[username], name="demo").delete()
            token = ApiToken.objects.create(user=users[username], name="demo")
            members.append({"username": username, "password": demo_password(username), "role": role,
                            "token": token.key})
        if options["json"]:
            self.stdout.write(json.dumps({"campaign": campaign.slug, "members": members}))
            return
        self.stdout.write(f"Demo campaign '{campaign.name}' at /campaigns/{campaign.slug}/")
        for m in members:
            self.stdout.write(f"  {m['role']:<7} {m['username']:<6} password: {m['password']}")
