from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from campaign import projections, roster
from campaign.eventlog import lock_campaign
from campaign.models import Campaign


class Command(BaseCommand):
    help = ("Rebuild what is folded from the event log: the campaign's row and stream head, its memberships, "
            "its characters' rows and their projections (--check: compare only, change nothing).")

    def add_arguments(self, parser):
        parser.add_argument("--campaign", metavar="SLUG")
        parser.add_argument("--check", action="store_true", help="exit non-zero naming each row that differs")

    def handle(self, *args, **options):
        campaigns = Campaign.objects.order_by("id")
        if options["campaign"]:
            campaigns = campaigns.filter(slug=options["campaign"])
            if not campaigns.exists():
                raise CommandError(f"No campaign {options['campaign']!r}.")
        differing = []
        for campaign in campaigns.values_list("id", "slug"):
            with transaction.atomic():
                locked = lock_campaign(campaign[0])  # no append may interleave with the rebuild
                rows, unread = roster.rebuild(locked, check=options["check"])  # first: the head it restores
                names = rows + projections.rebuild(locked, check=options["check"])
            differing += [f"{campaign[1]}: {name}" for name in names]
            for line in unread:  # an older event naming an account renamed or deleted since
                self.stderr.write(f"UNREAD {campaign[1]}: {line}; its rows are left as they stand")
        if options["check"]:
            if differing:
                for line in differing:
                    self.stderr.write(f"DIFFERS {line}")
                raise CommandError(f"{len(differing)} row(s) differ from the log.")
            self.stdout.write("OK projections match the log")
        else:
            self.stdout.write(f"Rebuilt; {len(differing)} row(s) changed.")
