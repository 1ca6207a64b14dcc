"""Where the server's dice come from.

One seam, :func:`dice_for`, so tests can script dice for a whole request
(``monkeypatch.setattr(campaign.dice, "dice_for", ...)``) and later schemes
(verifiable per-session dice) replace it in one place. Clients never send dice.
"""

from rules import SecretDice


def dice_for(campaign) -> SecretDice:
    """The dice source for the next command in ``campaign``."""
    return SecretDice()
