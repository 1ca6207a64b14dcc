import json

from django.core.management.base import BaseCommand, CommandError

from campaign.checkpoints import receipt_problem
from campaign.eventlog import verify_chain
from campaign.member_keys import signature_problems, signed_from_in_log
from campaign.signing import MissingKey
from campaign.models import Campaign


def signed_note(on: int | None) -> str:
    """What the OK line says of members' signatures, as the standalone verifier's does."""
    if on is None:
        return ", not signed (the log predates signed commands: the host could have sent any member event)"
    if on > 1:
        return f", signed from #{on} (events #1..#{on - 1} predate signed commands: not signed)"
    return ", signed from #1"


class Command(BaseCommand):
    help = ("Verify a campaign's hash chain and, where its members sign, every member's signature: prints "
            "'OK <n> events' or names each bad seq. --receipt FILE also checks that the log extends each "
            "signed checkpoint a member kept.")

    def add_arguments(self, parser):
        parser.add_argument("slug")
        parser.add_argument("--receipt", action="append", default=[], metavar="FILE",
                            help="a checkpoint JSON (or a JSON list of them) as GET .../checkpoints gave it; "
                                 "may be repeated")

    def handle(self, *args, **options):
        campaign = Campaign.objects.filter(slug=options["slug"]).first()
        if campaign is None:
            raise CommandError(f"No campaign {options['slug']!r}.")
        receipts = [r for path in options["receipt"] for r in self._receipts(path)]
        report = verify_chain(campaign)
        if not report.ok:
            raise CommandError(f"BAD seq {report.bad_seq}: {report.reason}")
        # Members' signatures (docs/fair-dice.md, "Signed commands"): a chain the host recomputed after
        # writing a command in a member's name, or changing what she signed, holds; her signature does not.
        warnings: list[str] = []
        unsigned = signature_problems(campaign, warnings)
        # A key no earlier key of its member vouched for (rules/vouching.py): said, never a failure.
        for warning in warnings:
            self.stderr.write(warning)
        for seq, why in unsigned:
            self.stderr.write(f"BAD seq {seq}: {why}")
        if unsigned:
            seq, why = unsigned[0]
            raise CommandError(f"BAD seq {seq}: {why}" + (f" (and {len(unsigned) - 1} more)" if len(unsigned) > 1 else ""))
        for receipt in receipts:
            try:
                problem = receipt_problem(campaign, receipt)
            except MissingKey as e:  # no key to check a signature with: say so, never make one
                raise CommandError(str(e)) from None
            if problem is not None:
                seq, reason = problem
                raise CommandError(f"BAD seq {seq}: {reason}" if seq is not None else f"BAD receipt: {reason}")
        extra = f", extending {len(receipts)} receipt(s)" if receipts else ""
        self.stdout.write(f"OK {report.count} events{extra}{signed_note(signed_from_in_log(campaign.id))}")

    def _receipts(self, path: str) -> list:
        try:
            with open(path, encoding="utf-8") as f:
                data = json.load(f)
        except OSError as e:
            raise CommandError(f"Can't read {path}: {e.strerror}.")
        except ValueError:
            raise CommandError(f"{path} is not JSON.")
        return data if isinstance(data, list) else [data]
