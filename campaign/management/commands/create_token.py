from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from campaign.models import ApiToken


class Command(BaseCommand):
    help = "Create an API token for USERNAME and print it (only its digest is stored: this is the one time it is shown)."

    def add_arguments(self, parser):
        parser.add_argument("username")
        parser.add_argument("--name", default="", help="what the token is for (shown on the profile page)")

    def handle(self, *args, **options):
        user = get_user_model().objects.filter(username=options["username"]).first()
        if user is None:
            raise CommandError(f"No user called {options['username']!r}.")
        self.stdout.write(ApiToken.objects.create(user=user, name=options["name"][:60]).key)
