"""Contests naming two characters: the opponent's numbers come from its own sheet, and
every round is one event that both sides' states read. Pure.

An action names its opponent with ``vs_character`` (the platform turns the id into the
opponent's state, campaign/actions/contests.py). For each system:

* :func:`fill` puts the numbers the action needs (``vs``, ``vs_pool``, ``their_pool``)
  from the opponent's state into the action, so the rules decide exactly as for an
  opponent given as numbers (and a replay of the recorded action decides the same);
* :func:`side_view` is an event as the opponent reads it, or ``None`` when it changes
  nothing of the opponent. Tale contests and MdT races run over several rounds with
  state on both sides (the running counts; Tale's damage taken); a WYRM opposed check
  and an MdT opposed test are one roll that changes neither sheet.

TOTE has no opposed test in its text: nothing to fill (``OPPOSABLE`` has no entry).
"""

from __future__ import annotations

from typing import Mapping

from .base import Event, RuleError, copy_json

# system -> the actions that may name a ``vs_character``.
OPPOSABLE = {
    "wyrm": frozenset({"check"}),
    "mdt": frozenset({"opposed_test", "start_contest"}),
    "tale": frozenset({"start_contest", "start_combat"}),
}
# The running Tale contest knows its opponent: these continue it on both sides.
CONTINUING = {"tale": frozenset({"iterated_round", "combat_round", "end_contest", "impose_penalty"}),
              "mdt": frozenset({"contest_round", "end_contest"})}
# The continuing actions decided from the acting side alone: they read nothing of the opponent's
# state, so nothing hidden in it shapes them (campaign/actions/contests.py). An MdT race holds the
# opponent's standing pool on each side from its start (docs/rules.md MdT 17), and its side of a
# round or an end is that event swapped (:func:`_mdt_side` gets no state). Not Tale's: a contest's
# end says how much damage the opponent has room for (``damage_room``), and a round may end it.
OWN_SIDE_ONLY = {"mdt": CONTINUING["mdt"]}
# The actions the opponent's state reads too, whatever the rules decide: starting a contest against
# it and continuing one (:func:`side_view` gives its side of each event they decide). Not a WYRM
# opposed check or an MdT opposed test: one roll that changes neither sheet.
SIDED = {"tale": CONTINUING["tale"] | {"start_contest", "start_combat"},
         "mdt": CONTINUING["mdt"] | {"start_contest"}}


def reads_opponent(system: str, kind) -> bool:
    """Whether deciding the action ``kind`` against an opponent reads the opponent's state: naming it
    fills its numbers (:func:`fill`); continuing a contest, its side of the events may read it."""
    return kind not in OWN_SIDE_ONLY.get(system, ())


def has_sides(system: str, kind) -> bool:
    """Whether the action ``kind`` naming an opponent is a side of it, decided or refused."""
    return kind in SIDED.get(system, ())


def _text(value, name: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not 1 <= len(value) <= 80:
        raise RuleError(f"'{name}' must be text of 1 to 80 characters.", "invalid")
    return value


def fill(system: str, action: dict, opponent: Mapping) -> dict:
    """The numbers ``action`` needs about its opponent, read from the opponent's state.

    Raises :class:`RuleError` when the action already gives them or the opponent can't take part."""
    kind = action.get("type")
    if kind not in OPPOSABLE.get(system, ()):
        raise RuleError(f"'{kind}' can't name a 'vs_character'"
                        + (f"; these can: {', '.join(sorted(OPPOSABLE[system]))}." if system in OPPOSABLE
                           else ": the rules have no opposed test."), "invalid")
    if system == "wyrm":
        return _fill_wyrm(action, opponent)
    if system == "mdt":
        return _fill_mdt(action, opponent)
    return _fill_tale(action, opponent)


def _given(action: dict, *keys: str) -> None:
    for key in keys:
        if action.get(key) is not None:
            raise RuleError(f"Give 'vs_character' or '{key}', not both: the opponent's sheet says it.", "invalid")


def _fill_wyrm(action: dict, opponent: Mapping) -> dict:
    from .wyrm.sheet import find_skill, parse_attribute

    _given(action, "vs", "dl")
    attribute = parse_attribute(action.get("vs_attribute") or action.get("attribute"), "vs_attribute")
    names = action.get("vs_skills") or []
    if not isinstance(names, list) or len(names) > 2:
        raise RuleError("'vs_skills' must list at most two of the opponent's skills.", "invalid")
    known = []
    for name in names:
        skill = find_skill(opponent["skills"], name)
        if skill is None:
            raise RuleError(f"The opponent does not know '{str(name)[:40]}'.", "invalid")
        known.append(skill["name"])
    static = action.get("vs_static", False)
    if not isinstance(static, bool):
        raise RuleError("'vs_static' must be true or false.", "invalid")
    return {"vs": {"attribute": opponent["attributes"][attribute], "skills": len(known), "static": static}}


def _fill_mdt(action: dict, opponent: Mapping) -> dict:
    from .mdt.sheet import ATTRIBUTES, find_specialization

    _given(action, "vs_pool")
    attribute = action.get("vs_attribute") or action.get("attribute")
    attribute = attribute.strip().lower() if isinstance(attribute, str) else attribute
    if not isinstance(attribute, str) or attribute not in ATTRIBUTES:
        raise RuleError(f"'vs_attribute' must be one of {', '.join(ATTRIBUTES)}.", "invalid")
    sheet = opponent["sheet"]
    rating, name = 0, None
    if _text(action.get("vs_specialization"), "vs_specialization"):
        name = find_specialization(sheet["specializations"], action["vs_specialization"])
        if name is None:
            raise RuleError("The opponent has no such specialization.", "invalid")
        rating = sheet["specializations"][name]
    # "both characters roll the same attribute": 1 + attribute + specialization, as the character's own pool.
    filled = {"vs_pool": 1 + sheet["attributes"][attribute] + rating}
    if action["type"] == "start_contest":
        if opponent.get("contest") or opponent.get("fight"):
            raise RuleError("The opponent is already in a race or a fight: it must end first.")
        # The opponent's side of the race recomputes its pool from these, as the acting side does.
        filled.update(vs_attribute=attribute, vs_specialization=name)
    return filled


def _fill_tale(action: dict, opponent: Mapping) -> dict:
    from .tale.settings import options
    from .tale.sheet import current, skill_pool

    if opponent.get("contest") or opponent.get("fight"):
        raise RuleError("The opponent is already in a contest or a fight: it must end first.")
    if opponent.get("unassigned_damage"):
        raise RuleError("The opponent must spread its damage first (assign_damage).")
    if action["type"] == "start_combat":
        _given(action, "their_pool")
        names = [opponent["sheet"]["primary"]] if opponent["sheet"]["primary"] == "skill" else \
            [opponent["sheet"]["primary"], "skill"]
        with_secondary = action.get("vs_with_secondary", options(opponent)["with_secondary"])
        if not isinstance(with_secondary, bool):
            raise RuleError("'vs_with_secondary' must be true or false.", "invalid")
        if with_secondary:
            names.append(opponent["sheet"]["secondary"])
        pool = sum(current(opponent, c) for c in names)
        if pool < 1:
            raise RuleError("The opponent has no dice left to fight with.")
        return {"their_pool": pool}
    _given(action, "vs_pool")
    wanted = {"skill": action["vs_skill"]} if action.get("vs_skill") is not None else \
        {"skill": action.get("skill"), "characteristics": action.get("characteristics")}
    pool = skill_pool(opponent, wanted)["pool"]
    if pool < 1:
        raise RuleError("The opponent has no dice to roll.")
    return {"vs_pool": pool}


# --- the opponent's side of a Tale contest -------------------------------------------------

_SWAP = {"mine": "theirs", "mine_before": "theirs_before", "mine_after": "theirs_after", "mine_sum": "theirs_sum",
         "start_mine": "start_theirs", "my_attack": "their_attack", "my_defence": "their_defence",
         "to_me": "to_them", "damage_taken": "damage_dealt", "my_hit": "their_hit", "my_even": "their_even",
         "my_miss": "their_miss"}
_SWAP.update({v: k for k, v in list(_SWAP.items())})
_SIDE_VALUES = {"mine": "theirs", "theirs": "mine"}
_OUTCOMES = {"win": "lose", "lose": "win"}


def _mirror(value, key: str | None = None):
    if isinstance(value, dict):
        return {_SWAP.get(k, k): _mirror(v, k) for k, v in value.items()}
    if isinstance(value, list):
        return [_mirror(v, key) for v in value]
    if key in ("winner", "side", "at_time_out") and value in _SIDE_VALUES:
        return _SIDE_VALUES[value]
    return value


def side_view(system: str, event: Event, opponent: dict | None, actor_id: int, actor_name: str = "") -> dict | None:
    """``event`` (decided for the acting character) as its opponent reads it; ``None``: no change.

    ``opponent``: its state, ``None`` for an action that reads nothing of it (:func:`reads_opponent`).
    ``actor_name`` is the acting character in words, what the opponent's side calls its other side
    ("" when the table may not know it: a hidden NPC's)."""
    if system == "mdt":
        return _mdt_side(event, actor_id, actor_name)
    if system != "tale":
        return None
    from .tale.sheet import damage_room

    p = event.payload
    if event.type == "contest_started":
        contest = _mirror(copy_json(p["contest"]))
        contest.update(pool={"pool": contest["mine"]}, opponent=actor_id)
        return {"contest": contest}
    view = _mirror(copy_json(dict(p)))
    if event.type == "round_rolled":
        view["outcome"] = _OUTCOMES.get(p["outcome"], p["outcome"])
        view["success"] = view["outcome"] == "win"
    elif event.type == "combat_round_rolled":
        mine, theirs = p["outcome"].split("/")
        view["outcome"] = f"{theirs}/{mine}"
    elif event.type == "contest_ended":
        view["damage_to_assign"] = min(view["damage_taken"], damage_room(opponent))
        if "result" in p:
            view.pop("result")  # hiding is a hider's contest: the seeker's side has no "hidden" result
    elif event.type != "penalty_imposed":
        return None
    for key in ("odds", "dice_log", "command_id", "action", "nonce", "answers"):
        view.pop(key, None)  # the record of the acting side's command, not the opponent's
    return view


# --- the opponent's side of an MdT race ----------------------------------------------------

_RACE_OUTCOMES = {"win": "loss", "loss": "win"}


def _mdt_side(event: Event, actor_id: int, actor_name: str) -> dict | None:
    """An MdT race event as the opponent reads it: the same race, the counts and rolls swapped."""
    p = event.payload
    if event.type == "contest_started":
        if p.get("opponent") is None:
            return None
        return {"label": p["label"], "attribute": p["vs_attribute"], "specialization": p["vs_specialization"],
                "modifier": 0, "vs_pool": p["pool"], "target": p["target"], "mine": 0, "theirs": 0, "round": 0,
                "opponent": actor_id, "pool": p["vs_pool"], "vs_attribute": p["attribute"],
                "vs_specialization": p["specialization"], "opponent_name": actor_name}
    if event.type == "contest_round_rolled":
        outcome = _RACE_OUTCOMES.get(p["outcome"], p["outcome"])
        return {"label": p["label"], "round": p["round"], "target": p["target"],
                "carried_in": {"mine": p["carried_in"]["theirs"], "theirs": p["carried_in"]["mine"]},
                "pool": p["vs_pool"], "vs_pool": p["pool"], "roll": p["opponent_roll"], "opponent_roll": p["roll"],
                "mine": p["theirs"], "theirs": p["mine"], "outcome": outcome, "finished": p["finished"],
                "success": outcome == "win", "dramatic_failure": p["opponent_roll"]["dramatic_failure"]}
    if event.type == "contest_ended":
        return {**p, "mine": p["theirs"], "theirs": p["mine"]}
    return None
