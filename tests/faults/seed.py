"""Migrate the database named by DATABASE_URL and seed the personas' table (tests/conftest.py's
``Table``): the template every fault test copies. Prints the personas' API tokens as JSON."""

import json
import os

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "campaign.settings")

import django  # noqa: E402

django.setup()

from django.conf import settings  # noqa: E402
from django.core.management import call_command  # noqa: E402

from tests.conftest import Table  # noqa: E402


def main() -> None:
    call_command("migrate", verbosity=0, interactive=False)
    print(json.dumps(Table().tokens()))


if __name__ == "__main__":
    # The hasher the test servers check with (tests/server_settings.py): PBKDF2 would cost half a
    # second of CPU per persona here.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    main()
