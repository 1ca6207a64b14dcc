"""``manage.py export_log SLUG [--session N] [--header]``: the full log as JSON Lines.

One event per line in seq order, exactly as ``campaign.eventlog.serialize_event``
gives it (keys sorted), with nothing hidden: this is the operator's export.
``--header`` first writes one line describing the campaign, its users,
members, characters and dice seeds (``"type": "export_header"``, no ``seq``);
``import_log`` needs it. See docs/audit.md.
"""

from django.core.management.base import BaseCommand, CommandError

from campaign.exports import NoSuchSession, event_pages, header, json_line, session_bounds
from campaign.models import Campaign


class Command(BaseCommand):
    help = ("Write a campaign's whole log (or one session) as JSON Lines, one event per line in seq order, "
            "to stdout. --header adds a first line describing the campaign (needed by import_log).")

    def add_arguments(self, parser):
        parser.add_argument("slug")
        parser.add_argument("--session", type=int, metavar="N", help="only the events of play session N")
        parser.add_argument("--header", action="store_true",
                            help="first write a header line (campaign, users, members, characters, dice seeds)")

    def handle(self, *args, **options):
        campaign = Campaign.objects.filter(slug=options["slug"]).first()
        if campaign is None:
            raise CommandError(f"No campaign {options['slug']!r}.")
        session = options["session"]
        if session is not None:
            try:
                session_bounds(campaign, session)
            except NoSuchSession as e:
                raise CommandError(str(e))
        if options["header"]:
            self.stdout.write(json_line(header(campaign, full=True, session=session)))
        for page in event_pages(campaign, None, session, head=campaign.last_seq):
            for data in page:
                self.stdout.write(json_line(data))
