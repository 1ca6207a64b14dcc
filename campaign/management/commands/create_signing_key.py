from django.core.management.base import BaseCommand, CommandError

from campaign import signing


class Command(BaseCommand):
    help = ("Create the server's checkpoint-signing key at SIGNING_KEY_PATH (owner-only), once. "
            "Refuses to replace an existing key: rotate_signing_key retires one.")
    # Runs before the database exists (make run, a fresh host): it touches only files.
    requires_system_checks = []
    requires_migrations_checks = False

    def add_arguments(self, parser):
        parser.add_argument("--exist-ok", action="store_true",
                            help="an existing key is fine: leave it and exit 0 (make run)")

    def handle(self, *args, **options):
        path = signing.key_path()
        try:
            public = signing.create_key(path)
        except FileExistsError:
            if options["exist_ok"]:
                return
            raise CommandError(f"A signing key is already at {path}: it is kept. "
                               "`manage.py rotate_signing_key` retires it for a new one.")
        self.stdout.write(f"Created the signing key {path} (public key {public}); its validity is in "
                          f"{signing.keyring_path(path)}. Keep both outside database backups and give "
                          "every server process the same files.")
