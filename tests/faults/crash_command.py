"""Run one command in a fresh process and die (os._exit) part-way through it.

Usage: python -m tests.faults.crash_command WHERE CLIENT_ID NOTATION
(with DATABASE_URL naming the test database). WHERE is

* ``dice``: the injected dice source exits on the third die, mid-roll;
* ``before_commit``: the events are recorded (the command row, the events,
  the head and the projections INSERTed and UPDATEd) and do_command is about
  to register the doorbell when the process exits, inside the open transaction.

Either way the process exits with status 3 without committing, closing or
cleaning anything: the operating system just drops its database connection.
"""

import os
import sys

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "campaign.settings")

import django  # noqa: E402

django.setup()

from campaign import actions  # noqa: E402
from campaign.actions import commands  # noqa: E402
from campaign.models import Membership  # noqa: E402
from rules import SecretDice  # noqa: E402

CRASH = 3


class DyingDice:
    """Real dice that take the process down on the ``after``+1-th die."""

    def __init__(self, after: int):
        self.after, self.rolled, self.inner = after, 0, SecretDice()

    def roll(self, sides: int) -> int:
        if self.rolled == self.after:
            sys.stdout.write(f"dying after {self.rolled} dice\n")
            sys.stdout.flush()
            os._exit(CRASH)
        self.rolled += 1
        return self.inner.roll(sides)


def main(where: str, client_id: str, notation: str) -> None:
    membership = Membership.objects.select_related("user", "campaign").get(
        campaign__slug="torn-road", user__username="alice")
    dice = None
    if where == "dice":
        dice = DyingDice(after=2)
    elif where == "before_commit":
        def die(campaign_id, events):
            sys.stdout.write(f"dying with seqs {[e.seq for e in events]} appended, uncommitted\n")
            sys.stdout.flush()
            os._exit(CRASH)

        commands.publish_on_commit = die  # called by do_command once record() has written
    else:
        raise SystemExit(f"unknown crash point {where!r}")
    actions.do_command(membership, {"id": client_id, "action": {"type": "roll", "notation": notation}}, dice=dice)
    print("survived: the crash point was never reached")  # exit status 0 fails the test


if __name__ == "__main__":
    main(*sys.argv[1:])
