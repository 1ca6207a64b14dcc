from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from campaign import projections
from campaign.log import lock_campaign
from campaign.member_keys import signed_from_in_log
from campaign.models import Campaign


class Command(BaseCommand):
    help = ("Rebuild character projections, and where the members sign from, from the event log "
            "(--check: compare only, change nothing).")

    def add_arguments(self, parser):
        parser.add_argument("--campaign", metavar="SLUG")
        parser.add_argument("--check", action="store_true", help="exit non-zero naming each character that differs")

    def handle(self, *args, **options):
        campaigns = Campaign.objects.order_by("id")
        if options["campaign"]:
            campaigns = campaigns.filter(slug=options["campaign"])
            if not campaigns.exists():
                raise CommandError(f"No campaign {options['campaign']!r}.")
        differing = []
        for campaign in campaigns:
            with transaction.atomic():
                locked = lock_campaign(campaign.id)  # no append may interleave with the rebuild
                names = projections.rebuild(locked, check=options["check"])
                # Where signing starts is the log's too (docs/fair-dice.md, "Which campaigns").
                on = signed_from_in_log(locked.id)
                if on != locked.signed_from:
                    names.append(f"signed commands from #{on} (the row said {locked.signed_from})")
                    if not options["check"]:
                        Campaign.objects.filter(pk=locked.pk).update(signed_from=on)
            differing += [f"{campaign.slug}: {name}" for name in names]
        if options["check"]:
            if differing:
                for line in differing:
                    self.stderr.write(f"DIFFERS {line}")
                raise CommandError(f"{len(differing)} projection(s) differ from the log.")
            self.stdout.write("OK projections match the log")
        else:
            self.stdout.write(f"Rebuilt; {len(differing)} projection(s) changed.")
