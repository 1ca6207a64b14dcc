import json

from django.core.management.base import BaseCommand, CommandError

from campaign.log import events_after
from campaign.models import Campaign


class Command(BaseCommand):
    help = "Write a campaign's whole log as JSON Lines (one event per line, in seq order) to stdout."

    def add_arguments(self, parser):
        parser.add_argument("slug")

    def handle(self, *args, **options):
        campaign = Campaign.objects.filter(slug=options["slug"]).first()
        if campaign is None:
            raise CommandError(f"No campaign {options['slug']!r}.")
        after = 0
        while True:
            page, _ = events_after(campaign.id, after, 1000)
            for data in page:
                self.stdout.write(json.dumps(data, sort_keys=True, ensure_ascii=False))
            if len(page) < 1000:
                break
            after = page[-1]["seq"]
