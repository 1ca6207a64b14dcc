"""Where the server's dice come from.

One seam, :func:`dice_for`, so tests can script dice for a whole request
(``monkeypatch.setattr(campaign.dice, "dice_for", ...)``). In play the dice of
a running session derive from its committed seed (``campaign.fairdice``).
Clients never send dice.
"""

from . import fairdice


def dice_for(campaign):
    """The dice source for the next command in the locked ``campaign``."""
    return fairdice.dice_for(campaign)
