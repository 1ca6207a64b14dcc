"""Settings of the servers tests start (tests/servers.py): the app's own, but passwords are
checked as fast as in the suite's own process (tests/conftest.py).

PBKDF2's million iterations cost about half a second of CPU per login, on the same two cores the
server under test and Chromium share; the browser tests log in through the real form about a
hundred times a run. Everything else is ``campaign.settings`` exactly, read from the same
environment."""

from campaign.settings import *  # noqa: F403

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
