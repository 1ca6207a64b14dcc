"""Mundo das Trevas Lite's campaign settings, declared once (see ``rules/options.py``).

Defaults are the readings of docs/rules.md (MdT 5, 7, 9, 23, 26); the health
track is a house rule (the text has none), off by default.
"""

from typing import Any

from ..options import Option

# The options a roll reads: name -> (default, low, high); booleans use (default, None, None).
# The raw odds forms take them inline (odds.py).
DICE_OPTIONS: dict[str, tuple[Any, Any, Any]] = {
    # Exceptional success at successes >= difficulty + margin ("4 a mais").
    "exceptional_margin": (4, 1, 10),
    # Successes a 10 gives on a Luck Test ("um sucesso": 1).
    "luck_ten_successes": (1, 1, 2),
    # May a Luck Test showing a 1 be a Dramatic Failure?
    "luck_dramatic_failure": (True, None, None),
    # buy_advance: raising an attribute to N costs N * attribute_cost points.
    "attribute_cost": (2, 1, 20),
    # buy_advance: raising a specialization to N costs N * specialization_cost.
    "specialization_cost": (1, 1, 20),
}


_HELP = {
    "exceptional_margin": ("Exceptional success margin", "Successes above the difficulty for an exceptional success "
                           "(\"4 a mais\").", "MdT 5"),
    "luck_ten_successes": ("Successes of a 10 on a Luck Test", "The text says one.", "MdT 7"),
    "luck_dramatic_failure": ("A Luck Test showing 1 fails dramatically", "A Luck Test is a test.", "MdT 9"),
    "attribute_cost": ("Points per attribute dot", "An attribute raised to N costs N times this.", "MdT 23"),
    "specialization_cost": ("Points per specialization dot", "A specialization raised to N costs N times this.",
                            "MdT 23"),
}

OPTIONS = tuple(
    Option(key, default, _HELP[key][0], _HELP[key][1], kind="bool" if lo is None else "int", lo=lo, hi=hi,
           reading=_HELP[key][2])
    for key, (default, lo, hi) in DICE_OPTIONS.items()
) + (
    Option("consequences_band", False, "Success with consequences",
           "Off: reaching the difficulty succeeds, less fails. On: at least one success but fewer than the "
           "difficulty is a success with consequences (\"to succeed and avoid consequences\").",
           kind="bool", reading="MdT 26"),
    Option("health.enabled", False, "Health track (house rule)",
           "The text has no health; on, the Storyteller marks harm and healing on a track.",
           kind="bool", reading="MdT 27", house_rule=True),
    Option("health.base", 5, "Health boxes besides Vigor", "Boxes = this + Vigor (stamina), as in the World of "
           "Darkness family (size 5).", lo=1, hi=30, reading="MdT 27", house_rule=True),
)


def health_boxes(state: dict) -> int:
    """The health track's boxes (house rule): the setting's base plus the sheet's rating."""
    return state["sheet"]["options"]["health"]["base"] + state["sheet"]["attributes"]["stamina"]
