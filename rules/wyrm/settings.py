"""WYRM's campaign settings, declared once (see ``rules/options.py``).

Defaults are the readings of docs/rules.md (WYRM 1, 3, 13, 16, 17); the
health track is a house rule (the text has no hit points), off by default.
"""

from ..options import Option

# Hard bounds: the text says attributes are "usually 0 to 6"; a GM may raise
# the ceiling for a campaign of demigods, but never beyond these.
ATTRIBUTE_HARD_MAX = 10
MAX_COST = 1000

OPTIONS = (
    Option("ties_succeed", True, "A total equal to the DL succeeds",
           "The text says both \"equal or higher\" and \"has to beat\"; the explicit rule wins.",
           kind="bool", reading="WYRM 1"),
    Option("second_skill_bonus", False, "Always allow +2 for a second skill",
           "Off: only where the GM allows it on the check.", kind="bool", reading="WYRM 3"),
    Option("attribute_max", 6, "Highest attribute", "Attributes are \"usually 0 to 6\"; advances stop here.",
           lo=1, hi=ATTRIBUTE_HARD_MAX, reading="WYRM 17"),
    Option("advance_costs.attribute", 10, "Points to raise an attribute", "The text has no advancement.",
           lo=1, hi=MAX_COST, reading="WYRM 16"),
    Option("advance_costs.skill", 5, "Points to learn a skill", "The text has no advancement.",
           lo=1, hi=MAX_COST, reading="WYRM 16"),
    Option("fate_per_roll", 1, "Fate points one roll can take",
           "\"Reroll a single die roll or add +2 to a single check\": one, so Fate can't buy success.",
           lo=1, hi=5, reading="WYRM 13"),
    Option("fights.passive_rolls", "each", "A passive side opposed by several",
           "each: it rolls once per check against it; once: one roll sets its DL for every check against it "
           "that round (rules/fights.py).", kind="choice", choices=("each", "once"), reading="Fights 5"),
    Option("conditions.passive", True, "A passive side's conditions set its DL",
           "On: a passive side's conditions' DL modifier takes that much off the DL its roll sets (it is its "
           "check too); off: only the active side's conditions count (rules/conditions.py).",
           kind="bool", reading="Conditions 5"),
    Option("health.enabled", False, "Health track (house rule)",
           "The text has no hit points; on, the GM marks harm and healing on a track.",
           kind="bool", reading="WYRM 21", house_rule=True),
    Option("health.base", 5, "Health boxes besides Warrior", "Boxes = this + the Warrior rating.",
           lo=1, hi=30, reading="WYRM 21", house_rule=True),
)


def health_boxes(state: dict) -> int:
    """The health track's boxes (house rule): the setting's base plus the sheet's rating."""
    return state["sheet"]["options"]["health"]["base"] + state["attributes"]["warrior"]
