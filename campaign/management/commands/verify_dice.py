from django.core.management.base import BaseCommand, CommandError

from campaign.fairdice import verify_session
from campaign.models import Campaign


class Command(BaseCommand):
    help = "Recompute every die of a finished play session from its revealed seed; report mismatches by seq."

    def add_arguments(self, parser):
        parser.add_argument("slug")
        parser.add_argument("--session", type=int, required=True, metavar="N")

    def handle(self, *args, **options):
        campaign = Campaign.objects.filter(slug=options["slug"]).first()
        if campaign is None:
            raise CommandError(f"No campaign {options['slug']!r}.")
        report = verify_session(campaign, options["session"])
        # A key no earlier key of its member vouched for: said as verify_log says it, never a failure.
        for warning in report.warnings:
            self.stderr.write(warning)
        if not report.ok:
            for seq, problem in report.problems:
                self.stderr.write(f"MISMATCH seq {seq}: {problem}" if seq else f"PROBLEM {problem}")
            raise CommandError(f"session {options['session']}: {len(report.problems)} problem(s)")
        self.stdout.write(report.summary())
