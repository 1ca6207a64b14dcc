"""Tale RPG's campaign settings, declared once (see ``rules/options.py``).

Tale's sheets had no ``options`` before campaign settings; the defaults are
the readings of docs/rules.md (Tale 9, 15, 22, 33). ``ties``, ``on_tie`` and
``with_secondary`` are also fields an action may still give: the setting is
the campaign's default when the action leaves them out.
"""

from ..options import Option, complete

OPTIONS = (
    Option("ties", "stop", "A tie in the sorted elimination",
           "stop: a tie stops the walk (reproduces Sinistre/Autopet); eliminate: a tie knocks the loser's die "
           "out too (Evilbloke spots Torkild in round 1).", kind="choice", choices=("stop", "eliminate"),
           reading="Tale 15"),
    Option("on_tie", "failure", "A tie against rolled challenge dice",
           "The challenge must be beaten (reproduces the reference table).", kind="choice",
           choices=("failure", "success"), reading="Tale 9"),
    Option("with_secondary", False, "Secondary characteristic joins the combat pool",
           "\"primary+skill, plus possibly secondary\": off, the GM adds it per combat.", kind="bool",
           reading="Tale 22"),
    Option("skill_die_cost", "own", "Price of a skill die",
           "own: half the price of the skill's own next die (ceil(N/2)); pool: half the price of the whole "
           "pool it reaches (ceil((two characteristics + N)/2)).", kind="choice", choices=("own", "pool"),
           reading="Tale 33"),
    Option("fights.defence", "each", "Defence against several attackers",
           "each: one defence roll stands against every attack on the side; split: the defence is portioned "
           "per attacker, each part rolled against that attacker alone (rules/fights.py).", kind="choice",
           choices=("each", "split"), reading="Fights 2"),
)

# Action fields a setting supplies when the action leaves them out.
ACTION_DEFAULTS = ("ties", "on_tie", "with_secondary")


def options(state: dict) -> dict:
    """The options a Tale character plays under: the campaign's, or the defaults in an older log."""
    return complete(OPTIONS, state["sheet"].get("options"))


def with_settings(state: dict, action: dict) -> dict:
    """``action`` with the campaign's defaults for the fields it leaves out."""
    if not isinstance(action, dict):
        return action
    chosen = options(state)
    return {**{k: chosen[k] for k in ACTION_DEFAULTS if action.get(k) is None}, **{
        k: v for k, v in action.items() if v is not None or k not in ACTION_DEFAULTS}}
