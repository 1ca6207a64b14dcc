"""``manage.py delete_user USERNAME``: erase an account's personal data, keep its events.

The design (what goes, what stays in the immutable log, and why) is docs/operations.md,
"Deleting an account"; the work is campaign.accounts.delete_account.
"""

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from campaign.accounts import delete_account, is_pseudonym, pseudonym


class Command(BaseCommand):
    help = ("Delete USERNAME's account: email, password, names, tokens and sessions go, the account can never "
            "log in again; the events she made stay in each campaign's log, shown as 'former member <id>'.")

    def add_arguments(self, parser):
        parser.add_argument("username")
        parser.add_argument("--yes", action="store_true", help="do not ask to confirm")

    def handle(self, *args, **options):
        user = get_user_model().objects.filter(username=options["username"]).first()
        if user is None:
            raise CommandError(f"No user called {options['username'][:150]!r}.")
        if is_pseudonym(user.username, user.pk):
            self.stdout.write(f"{user.username} was deleted already.")
            return
        if not options["yes"]:
            answer = input(f"Delete {user.username}'s account for good (shown as {pseudonym(user.pk)!r} from now on)? "
                           "Type 'yes': ")
            if answer.strip() != "yes":
                raise CommandError("Nothing was deleted.")
        orphaned = delete_account(user)
        self.stdout.write(f"Deleted: the account is {pseudonym(user.pk)!r} now; its events stay in the log.")
        for slug in orphaned:
            self.stdout.write(f"Campaign {slug} has no GM who can log in now.")
