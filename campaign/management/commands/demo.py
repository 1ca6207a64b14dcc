"""Create (idempotently) a demo campaign with a GM and three players."""

import hashlib
import hmac
import json

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from campaign.actions import do_add_member, do_command, do_create_campaign
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
        for username, name in HEROES.items():
            if not Character.objects.filter(campaign=campaign, name=name).exists():
                do_command(membership, {"id": f"demo-hero-{username}", "action": {
                    "type": "create_character", "name": name, "owner": username,
                    "sheet": campaign.rules.example_sheet}})
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
