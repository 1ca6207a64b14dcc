from django.core.management.base import BaseCommand, CommandError

from campaign.log import verify_chain
from campaign.models import Campaign


class Command(BaseCommand):
    help = "Verify a campaign's hash chain: prints 'OK <n> events' or names the first bad seq."

    def add_arguments(self, parser):
        parser.add_argument("slug")

    def handle(self, *args, **options):
        campaign = Campaign.objects.filter(slug=options["slug"]).first()
        if campaign is None:
            raise CommandError(f"No campaign {options['slug']!r}.")
        report = verify_chain(campaign)
        if not report.ok:
            raise CommandError(f"BAD seq {report.bad_seq}: {report.reason}")
        self.stdout.write(f"OK {report.count} events")
