from django.core.management.base import BaseCommand, CommandError

from campaign import signing


class Command(BaseCommand):
    help = ("Retire the checkpoint-signing key now and sign with a new one from now on. Receipts signed "
            "before stay valid: GET /api/key lists the retired key with its validity.")
    requires_system_checks = []
    requires_migrations_checks = False

    def handle(self, *args, **options):
        try:
            old, new = signing.rotate_key()
        except signing.MissingKey as e:
            raise CommandError(str(e)) from None
        self.stdout.write(f"Retired {old}; signing with {new} from now on. Copy {signing.key_path()} and "
                          f"{signing.keyring_path()} to every host (docs/operations.md, \"The signing key\").")
