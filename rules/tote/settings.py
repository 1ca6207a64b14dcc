"""TOTE's campaign settings, declared once (see ``rules/options.py``).

The defaults are the readings of docs/rules.md (TOTE 12, 19, 21, 26); the
same nested shape as a sheet's ``options``, which older logs still carry.
"""

from ..options import Option

RESOLVE_MAX_LIMIT = 20
INJURY_TRACK_MAX = 10  # at most rules.options.MAX_LIST

OPTIONS = (
    Option("resolve_max", 5, "Resolve maximum", "The most Resolve a hero can hold; the text gives no number.",
           lo=1, hi=RESOLVE_MAX_LIMIT, reading="TOTE 12"),
    Option("advance_costs.skill", 1, "XP per point of a new skill rating",
           "A skill raised to N costs N times this.", lo=0, hi=10, reading="TOTE 26"),
    Option("advance_costs.totem", 2, "XP per point of a new totem rating",
           "A totem raised to N costs N times this (a totem serves four skills).", lo=0, hi=10, reading="TOTE 26"),
    Option("advance_costs.specialization", 1, "XP per point of a specialization bonus",
           "A specialization raised to +N costs N times this.", lo=0, hi=10, reading="TOTE 26"),
    Option("injury_track", [5, 4, 3, 2, 1, 0], "Injury track",
           "The spots in order, each a face 1..6 it blocks or 0 for none; filling the last takes the hero out.",
           kind="int_list", lo=0, hi=6, reading="TOTE 19"),
    Option("effect_test.mode", "sum", "Effect test score", "Sum the effect dice, or count those at the threshold.",
           kind="choice", choices=("sum", "count"), reading="TOTE 21"),
    Option("effect_test.threshold", 4, "Effect die threshold", "In count mode, a die at or above this counts.",
           lo=2, hi=6, reading="TOTE 21"),
)
