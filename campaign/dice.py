"""Where the server's dice come from.

One seam, :func:`dice_for`, so tests can script dice for a whole request
(``monkeypatch.setattr(campaign.dice, "dice_for", ...)`` returning a
``fairdice.CommandDice``). In play the dice of
a running session derive from its committed seed (``campaign.fairdice``).
Clients never send dice.

A server started by the browser tests scripts its dice through a file instead
(``TEST_DICE_FILE``, refused outside tests by ``campaign/settings.py``): the
faces queued there are rolled first, then the real dice take over.
"""

from __future__ import annotations

import fcntl
import json

from django.conf import settings

from . import fairdice


def dice_for(campaign, actor_id: int, command_id: str, seed: str | None = None) -> fairdice.CommandDice:
    """The dice of member ``actor_id``'s command ``command_id`` in the locked ``campaign``."""
    source = fairdice.dice_for(campaign, actor_id, command_id, seed)
    if settings.TEST_DICE_FILE:
        # Scripted faces come first; the session's derived dice once the script is empty.
        then = source.session_dice or source.dice.source
        return fairdice.CommandDice(fairdice.RecordingDice(QueuedDice(settings.TEST_DICE_FILE, then)),
                                    source.session_dice)
    return source


class QueuedDice:
    """Faces from a JSON list in a file, first to last, each taken out as it is rolled; ``then``
    rolls once the list is empty. A face that is not on the die fails loudly, like ScriptedDice."""

    def __init__(self, path: str, then):
        self.path, self.then = path, then

    def roll(self, sides: int) -> int:
        with open(self.path, "r+") as f:
            fcntl.flock(f, fcntl.LOCK_EX)  # the test may be writing the next script
            faces = json.loads(f.read() or "[]")
            if not faces:
                return self.then.roll(sides)
            face = faces.pop(0)
            f.seek(0)
            f.truncate()
            f.write(json.dumps(faces))
        if not 1 <= face <= sides:
            raise ValueError(f"scripted face {face} is not on a d{sides}")
        return face
