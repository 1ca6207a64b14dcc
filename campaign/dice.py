"""Where the server's dice come from.

One seam, :func:`dice_for`, so tests can script dice for a whole request
(``monkeypatch.setattr(campaign.dice, "dice_for", ...)``). In play the dice of
a running session derive from its committed seed (``campaign.fairdice``).
Clients never send dice.
"""

from . import fairdice


def dice_for(campaign, nonce: str = ""):
    """The dice source for the next command in the locked ``campaign``.

    ``nonce`` is a hidden roll's secret nonce: it keys its dice too, so the
    seed revealed at the session's end does not reveal a still-hidden roll.
    """
    return fairdice.dice_for(campaign, nonce)
