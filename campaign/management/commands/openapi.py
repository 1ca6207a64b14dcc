"""``manage.py openapi``: regenerate the declared part of docs/openapi.json.

``--check`` exits 1 if the file is out of date instead of writing it (what a
test does too: tests/campaign/test_declared.py).
"""

import json

from django.core.management.base import BaseCommand, CommandError

from campaign import openapi


class Command(BaseCommand):
    help = "Regenerate the part of docs/openapi.json that comes from the rules' declarations."

    def add_arguments(self, parser):
        parser.add_argument("--check", action="store_true", help="only check; exit 1 if the file is out of date")

    def handle(self, *args, check=False, **options):
        if check:
            if openapi.generated(json.loads(openapi.SPEC_PATH.read_text())) != json.loads(openapi.SPEC_PATH.read_text()):
                raise CommandError("docs/openapi.json is out of date: run `python manage.py openapi`.")
            self.stdout.write("docs/openapi.json is up to date.")
            return
        changed = openapi.write()
        self.stdout.write("docs/openapi.json regenerated." if changed else "docs/openapi.json was up to date.")
