"""Where the server's dice come from.

One seam, :func:`dice_for`, so tests can script dice for a whole request
(``monkeypatch.setattr(campaign.dice, "dice_for", ...)`` returning a
``fairdice.CommandDice``). In play the dice of
a running session derive from its committed seed (``campaign.fairdice``).
Clients never send dice.
"""

from . import fairdice


def dice_for(campaign, actor_id: int, command_id: str) -> fairdice.CommandDice:
    """The dice of member ``actor_id``'s command ``command_id`` in the locked ``campaign``."""
    return fairdice.dice_for(campaign, actor_id, command_id)
