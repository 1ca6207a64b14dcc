"""Conditions with a duration: what the GM puts on a character or an NPC for some rounds, the scene
or until she removes it. Pure.

A condition is a name ("Blinded", "Exhausted"), a duration and, where the system's text gives
circumstances a mechanical effect, a modifier in that text's own terms, which the rules read while
the condition lasts (docs/rules.md, "Conditions"):

* TOTE: added to the total of a skill test ("You might have other bonuses or penalties to add,
  based on the circumstances", tote-basic-rules-v1.1.txt:8);
* WYRM: added to the DL of an attribute check ("The GM may add circumstantial modifiers to any DL",
  wyrm-srd-rules-mechanics.txt:31);
* MdT: dice added to or taken from a test's pool ("MODIFICADORES situacionais ... adicionando ou
  subtraindo dados no Teste", mundo-das-trevas-lite-testes.pt.txt:3);
* Tale: penalty dice in a combat round, the "one- and two-round penalties" of tale-rpg.txt:64-66.

A condition with no modifier (the texts name no "prone" nor "frightened") is shown with what is
left of it, never applied: the table reads it.

Durations and when they end, in the character's own fold (no event is stored for an expiry: the
events that end it are the round's and the scene's):

* ``rounds``: ``rounds`` rounds, the round in progress when it is applied counting as the first. A
  round ends when the encounter's next round begins (``turn_advanced`` to a new round) or, for a
  side of a running fight or contest, when its round is rolled (``fight_round_rolled``, a contest's
  :data:`CONTEST_ROUNDS`: a fight counts its own rounds, so a side of a fight inside an encounter
  does not count two). The encounter's end ends them (there are no more rounds to count); so does
  the scene's.
* ``scene``: until the scene (or the session) ends, or a new scene starts.
* ``until_removed``: until the GM removes it.
"""

from __future__ import annotations

from typing import Mapping

from .base import DiceSource, Event, RuleError
from .declare import ActionSpec, Choice, Integer, Text, action

APPLIED, REMOVED = "condition_applied", "condition_removed"
MAX_CONDITIONS = 12  # on one character at once
MAX_ROUNDS = 20
MAX_NAME = 40
MAX_MODIFIER = 10
MAX_EFFECT = MAX_CONDITIONS * MAX_MODIFIER  # what a character's conditions add together, at most
DURATIONS = (("rounds", "some rounds"), ("scene", "the scene"), ("until_removed", "until removed"))
# The platform's events that end what lasts a round or a scene (rules/base.py FRAME_EVENTS).
# A two-sided contest's round, in the systems that have one (Tale's iterated and combat rounds, MdT's race).
CONTEST_ROUNDS = ("round_rolled", "combat_round_rolled", "contest_round_rolled")
SCENE_OVER = ("scene_started", "scene_ended", "session_ended")
# The encounter's events every character folds (rules/replay.py CAMPAIGN_WIDE) only for its conditions:
# a state with none is left exactly as it was (:func:`round_over`), so the server need neither store
# nor push it again (campaign/projections.py ``project``).
TURN_EVENTS = frozenset({"turn_advanced", "encounter_ended"})


def left_alone_by_turns(state) -> bool:
    """Whether :data:`TURN_EVENTS` leave ``state`` exactly as it is (nothing but conditions reads them)."""
    return not state.get("conditions")


def lasts(duration: str, rounds: int | None) -> str:
    """How long, in words: "for 2 rounds", "for the scene", "until removed"."""
    if duration == "rounds":
        return f"for {rounds} round{'' if rounds == 1 else 's'}"
    return "for the scene" if duration == "scene" else "until removed"


def active(state: Mapping) -> list[dict]:
    """The character's conditions now, in the order they were applied."""
    return list(state.get("conditions") or [])


def effect(state: Mapping) -> tuple[int, list[dict]]:
    """``(total, [{"name", "modifier"}])``: what the conditions with a modifier add, as the system reads it."""
    applied = [{"name": c["name"], "modifier": c["modifier"]} for c in active(state) if c.get("modifier")]
    return sum(c["modifier"] for c in applied), applied


def effect_words(template: str, modifier: int) -> str:
    """A modifier's effect in a system's words (``rules.base.ConditionsRead.effect``): "−1 die",
    "+2 to the DL". The table's conditions.js says it alike (tests/test_js.py)."""
    signed = f"+{modifier}" if modifier > 0 else f"\u2212{-modifier}" if modifier < 0 else "\u00b10"
    n = abs(modifier)
    return template.replace("{signed}", signed).replace("{n}", str(n)).replace("{dice}", "die" if n == 1 else "dice")


def in_fight(fight: Mapping, side: str) -> int:
    """What ``side``'s conditions add in a fight's round (``rules.fights.with_conditions`` fills
    ``fight["conditions"]`` from the sides' states), 0 without any."""
    return (fight.get("conditions") or {}).get(side, 0)


def _find(state: Mapping, name: str) -> dict | None:
    return next((c for c in active(state) if c["name"].casefold() == name.casefold()), None)


def actions(modifier_label: str, modifier_help: str, lo: int = -MAX_MODIFIER) -> tuple[ActionSpec, ActionSpec]:
    """The GM's two actions on a character's conditions; the modifier in the system's own words
    (``lo``: 0 where the text's modifier only ever takes away, Tale's penalty dice)."""

    @action(
        "apply_condition", title="Apply a condition", by="gm", emits=(APPLIED,),
        help="A condition with a duration; its modifier is applied by the rules while it lasts, "
             "with none it is only shown.",
        fields={
            "name": Text(MAX_NAME, label="Condition", help="What the table calls it: Blinded, Exhausted, Inspired."),
            "duration": Choice(DURATIONS, default="rounds", label="Lasts"),
            "rounds": Integer(1, MAX_ROUNDS, default=1, label="Rounds", help="How many, when it lasts some rounds."),
            "modifier": Integer(lo, MAX_MODIFIER, default=0, label=modifier_label, help=modifier_help),
        },
    )
    def apply_condition(state: dict, action: Mapping, dice: DiceSource) -> list[Event]:
        """GM: put a condition on the character; the same name again replaces it (a new duration).
        Rolls nothing."""
        name, duration = action["name"], action["duration"]
        rounds = action["rounds"] if duration == "rounds" else None
        before = _find(state, name)
        if before is None and len(active(state)) >= MAX_CONDITIONS:
            raise RuleError(f"A character has at most {MAX_CONDITIONS} conditions at once: remove one first.")
        return [Event(APPLIED, {"name": before["name"] if before else name, "duration": duration, "rounds": rounds,
                                "modifier": action["modifier"], "lasts": lasts(duration, rounds),
                                "replaces": before is not None})]

    @action("remove_condition", title="Remove a condition", by="gm", emits=(REMOVED,),
            fields={"name": Text(MAX_NAME, label="Condition")}, help="It ends now, whatever was left of it.")
    def remove_condition(state: dict, action: Mapping, dice: DiceSource) -> list[Event]:
        """GM: end a condition now. Rolls nothing."""
        found = _find(state, action["name"])
        if found is None:
            names = ", ".join(c["name"] for c in active(state)) or "none"
            raise RuleError(f"This character has no condition “{action['name']}” (theirs: {names}).")
        return [Event(REMOVED, {"name": found["name"]})]

    return apply_condition, remove_condition


# --- the fold ---------------------------------------------------------------------------------


def _keep(state: dict, keep) -> None:
    if state.get("conditions"):
        state["conditions"] = [c for c in state["conditions"] if keep(c)]


def _tick(state: dict) -> None:
    """One round has passed: a condition of rounds has one fewer, and ends at none."""
    for c in state.get("conditions") or []:
        if c["duration"] == "rounds":
            c["rounds_left"] -= 1
    _keep(state, lambda c: c["duration"] != "rounds" or c["rounds_left"] > 0)


def applied(state: dict, p: Mapping) -> None:
    entry = {"name": p["name"], "duration": p["duration"], "modifier": p.get("modifier", 0)}
    if p["duration"] == "rounds":
        entry["rounds_left"] = p["rounds"]
    state["conditions"] = [c for c in active(state) if c["name"] != p["name"]] + [entry]


def removed(state: dict, p: Mapping) -> None:
    _keep(state, lambda c: c["name"] != p["name"])


def round_over(kind: str, state: dict, p: Mapping) -> None:
    """What an encounter's or a fight's event does to the character's conditions (the module's docstring)."""
    if not state.get("conditions"):
        return
    if kind == "fight_round_rolled" or kind in CONTEST_ROUNDS:
        _tick(state)
    elif state.get("fight") or state.get("contest"):
        return  # a side of a running fight or contest counts its rounds, not the encounter's
    elif kind == "turn_advanced":
        # A new round's first turn ends the round before it (round 1's ends none).
        if p.get("turn") == 0 and isinstance(p.get("round"), int) and p["round"] >= 2:
            _tick(state)
    elif kind == "encounter_ended":
        _keep(state, lambda c: c["duration"] != "rounds")


def scene_over(state: dict, p: Mapping) -> None:
    _keep(state, lambda c: c["duration"] == "until_removed")
