import json

from django.core.management.base import BaseCommand, CommandError

from rules import RuleError, get_system, odds_json


class Command(BaseCommand):
    help = "Print the exact odds of a rolling action as JSON, e.g. odds mdt '{\"type\": \"test\", \"dice\": 5, \"difficulty\": 2}'."

    def add_arguments(self, parser):
        parser.add_argument("system", help="tote, wyrm, tale or mdt")
        parser.add_argument("action", help="the action as JSON")

    def handle(self, *args, **options):
        try:
            system = get_system(options["system"])
        except KeyError:
            raise CommandError(f"Unknown system {options['system']!r}: use tote, wyrm, tale or mdt.")
        try:
            action = json.loads(options["action"])
        except ValueError as e:
            raise CommandError(f"The action is not valid JSON: {e}")
        if not isinstance(action, dict):
            raise CommandError("The action must be a JSON object with a 'type'.")
        try:
            odds = system.odds(action)
        except RuleError as e:
            raise CommandError(e.message)
        self.stdout.write(json.dumps({"system": system.name, "action": action, "odds": odds_json(odds)}, indent=2))
