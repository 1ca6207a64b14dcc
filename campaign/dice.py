"""Where the server's dice come from.

One seam, :func:`dice_for`, so tests can script dice for a whole request
(``monkeypatch.setattr(campaign.dice, "dice_for", ...)`` returning a
``fairdice.CommandDice``). In play the dice of
a running session derive from its committed seed (``campaign.fairdice``).
Clients never send dice.

A server started by tests scripts its dice through a file instead
(``TEST_DICE_FILE``, refused outside tests by ``campaign/settings.py``): the
faces queued there are rolled first; then a die is refused, unless the file
opts in to the real dice (:class:`QueuedDice`).
"""

from __future__ import annotations

import fcntl
import json

from django.conf import settings

from . import fairdice
from .errors import Refused


def dice_for(campaign, actor_id: int, command_id: str, seed: str | None = None,
             scheme: str | None = None) -> fairdice.CommandDice:
    """The dice of member ``actor_id``'s command ``command_id`` in the locked ``campaign`` (``scheme``:
    a witnessed command's, whose id is ``witnessed.dice_id``)."""
    source = fairdice.dice_for(campaign, actor_id, command_id, seed, scheme)
    if settings.TEST_DICE_FILE:
        real = source.session_dice or source.dice.source  # the session's derived dice, if the file opts in
        return fairdice.CommandDice(fairdice.RecordingDice(QueuedDice(settings.TEST_DICE_FILE, real)),
                                    source.session_dice)
    return source


class Unscripted(Refused):
    """A test server was asked for a die its test scripted no face for."""

    code = "unscripted_dice"


class QueuedDice:
    """The dice a test scripted in the file at ``path``: ``{"faces": [6, 2], "real": false}``.

    The faces are rolled first to last, each taken out as it is rolled. Once they are used up a die
    is refused loudly (:class:`Unscripted`, and noted in the file's ``"refused"`` for the test to
    report), unless ``"real": true`` opts in to the ``real`` dice. A face that is not on the die
    fails loudly too, like ScriptedDice."""

    def __init__(self, path: str, real):
        self.path, self.real = path, real

    def roll(self, sides: int) -> int:
        with open(self.path, "r+") as f:
            fcntl.flock(f, fcntl.LOCK_EX)  # the test may be writing the next script
            script = json.loads(f.read())
            if not script["faces"] and script.get("real"):
                return self.real.roll(sides)
            face = script["faces"].pop(0) if script["faces"] else None
            if face is None:
                script["refused"] = [*script.get("refused", []), f"d{sides}"]
            f.seek(0)
            f.truncate()
            f.write(json.dumps(script))
        if face is None:
            raise Unscripted(f"No scripted face left for a d{sides}: this test server rolls only the dice its test "
                             f"scripts in TEST_DICE_FILE ({self.path}), and that script is used up.")
        if not 1 <= face <= sides:
            raise ValueError(f"scripted face {face} is not on a d{sides}")
        return face
