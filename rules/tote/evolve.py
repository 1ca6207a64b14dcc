"""``evolve(state, event) -> new state``: how each TOTE event changes a hero.

Handlers change the state they are given (``rules.base.Evolver`` copies it for
callers that need the old one) and copy what they store from a payload. Trusts
the payloads (the actions computed them) but clamps counters, so even a
hand-edited log cannot make an impossible state.
Unknown event types, and the session events, leave the state as it was.
"""

from __future__ import annotations

from .. import common
from ..base import copy_json, evolver
from ..declare import EventBook, EventSpec
from ..options import CONFIGURED


def _lapse_scene(state: dict) -> None:
    """What lasts only a scene: the aspect's free Resolve, the once-a-scene
    invocation, the GM's pending -2, and the test Resolve could still rescue."""
    state["scene_resolve"] = 0
    state["aspect_invoked"] = False
    state["gm_penalty"] = 0
    state["last_test"] = None


def _skill_test(state: dict, p: dict) -> None:
    state["last_test"] = {
        "skill": p["skill"],
        "totems": copy_json(p["totems"]),
        "total": p["total"],
        "target": p["target"],
        "success": bool(p["success"]),
        "critical": bool(p["critical"]),
        "rescued": False,
    }
    if p.get("aspect_penalty"):
        state["gm_penalty"] = 0
    bubble = p.get("bubble")
    if bubble:
        state["bubbles"][bubble["line"] + "s"][bubble["index"]] = True


def _spend_resolve(state: dict, p: dict) -> None:
    if p["source"] == "aspect":
        state["scene_resolve"] = max(0, state["scene_resolve"] - 1)
    else:
        state["resolve"] = max(0, state["resolve"] - 1)
    if state["last_test"] is not None:
        state["last_test"].update(total=p["total"], success=True, rescued=True)


def _injuries(state: dict, p: dict) -> None:
    track = state["sheet"]["options"]["injury_track"]
    state["injuries"] = max(0, min(len(track), p["injuries"]))
    state["taken_out"] = state["injuries"] >= len(track)


def _track_configured(state: dict, p: dict) -> None:
    """A changed injury track re-reads the wounds (docs/rules.md, TOTE 19): the state counts filled
    spots, so a track shorter than the wounds is full and takes the hero out; no spot is left beyond
    its end to heal from. The options themselves are set by the shared handler, after this one."""
    track = p["options"].get("injury_track", state["sheet"]["options"]["injury_track"])
    state["injuries"] = min(len(track), state["injuries"])
    state["taken_out"] = state["injuries"] >= len(track)


def _buy_advance(state: dict, p: dict) -> None:
    sheet = state["sheet"]
    state["points"]["spent"] += p["cost"]
    if p["advance"] == "skill":
        sheet["skills"][p["skill"]] = p["to"]
    elif p["advance"] == "totem":
        sheet["totems"][p["totem"]] = p["to"]
    else:
        specs = sheet["specializations"][p["skill"]]
        for spec in specs:
            if spec["name"] == p["specialization"]:
                spec["bonus"] = p["to"]
                break
        else:
            specs.append({"name": p["specialization"], "bonus": p["to"]})


def _end_tale(state: dict, p: dict) -> None:
    state["points"]["earned"] += p["xp"]
    state["bubbles"] = {"rows": [False] * 4, "columns": [False] * 4}


def _invoke_aspect(state: dict, p: dict) -> None:
    state["aspect_invoked"] = True
    state["scene_resolve"] = 1


def _grant_resolve(state: dict, p: dict) -> None:
    cap = state["sheet"]["options"]["resolve_max"]
    state["resolve"] = min(cap, state["resolve"] + p["amount"])


HANDLERS = {
    "skill_tested": _skill_test,
    "resolve_spent": _spend_resolve,
    "aspect_invoked": _invoke_aspect,
    "aspect_invoked_by_gm": lambda s, p: s.update(gm_penalty=p["penalty"]),
    "resolve_granted": _grant_resolve,
    "injury_marked": _injuries,
    "injury_healed": _injuries,
    "points_awarded": common.earn_points,
    "advance_bought": _buy_advance,
    "tale_ended": _end_tale,
    CONFIGURED: _track_configured,
    "scene_started": lambda s, p: _lapse_scene(s),
    "scene_ended": lambda s, p: _lapse_scene(s),
    # effect_tested, session_started, session_ended: nothing to track.
}

# Every event TOTE records, once. Logs from before the past-tense names stored the
# action's name (``skill_test``, ...): those rows keep it (their hashes cover it) and
# read under today's name through ``formerly``.
EVENTS = EventBook([
    EventSpec("skill_tested", "{skill} {rating} vs T{target}: {skill_die} + {paragon}"
              "[ {specialization.bonus:signed} {specialization.name}][ {modifier:signed}]"
              "[ {aspect_penalty:signed} aspect] = {total}",
              tail=", {outcome}[, critical{critical:if}]", formerly=("skill_test",),
        payload={"aspect_penalty": "int", "blocked": "list", "bonus": "int", "bubble": "any?", "bubble_note": "any?",
                 "critical": "bool", "dice": "list", "modifier": "int", "odds": "dict", "outcome": "str",
                 "paragon": "int", "rating": "int", "skill": "str", "skill_die": "int", "specialization": "dict?",
                 "success": "bool", "target": "int", "total": "int", "totems": "list", "conditions": "list?"}),
    EventSpec("resolve_spent", "spent Resolve on {skill}: {totem} {totem_value:signed} turns {total_before} into {total}"
              " vs T{target}", tail=", {outcome}", formerly=("spend_resolve",),
        payload={"outcome": "str", "resolve_left": "int", "scene_resolve_left": "int", "skill": "str",
                 "skill_totem": "bool", "source": "str", "success": "bool", "target": "int", "total": "int",
                 "total_before": "int", "totem": "str", "totem_value": "int"}),
    EventSpec("aspect_invoked", "invoked the aspect “{aspect}”: one free Resolve this scene",
              formerly=("invoke_aspect",),
        payload={"aspect": "str", "scene_resolve": "int"}),
    EventSpec("aspect_invoked_by_gm", "GM invoked the aspect “{aspect}” against them: {penalty:signed} on the next test",
              formerly=("gm_invoke_aspect",),
        payload={"aspect": "str", "penalty": "int"}),
    EventSpec("resolve_granted", "was granted {amount} Resolve (now {resolve})", formerly=("grant_resolve",),
        payload={"amount": "int", "reason": "str", "requested": "int", "resolve": "int"}),
    EventSpec("injury_marked", "was injured: {spots:count|spot|spots} filled ({injuries} now)",
              tail="[, taken out{taken_out:if}]", formerly=("mark_injury",),
        payload={"blocked": "list", "injuries": "int", "requested": "int", "spots": "list", "taken_out": "bool"}),
    EventSpec("injury_healed", "healed {spots:count|injury|injuries} ({injuries} left)", formerly=("heal_injury",),
        payload={"blocked": "list", "injuries": "int", "requested": "int", "spots": "list", "taken_out": "bool"}),
    EventSpec("effect_tested", "[{label}: ]effect test {dice:count}d6 = {score}[ {modifier:signed}][ vs {target}]",
              tail="[, {outcome}{target:if}| = {total}{modifier:if}]", formerly=("effect_test",),
        payload={"dice": "list", "label": "str", "mode": "str", "modifier": "int", "odds": "dict", "outcome": "str",
                 "score": "int", "success": "bool?", "target": "int?", "threshold": "int?", "total": "int"}),
    EventSpec("points_awarded", "earned {points} XP", formerly=("award_points",),
        payload={"points": "int", "reason": "str"}),
    EventSpec("tale_ended", "the Tale ended: {xp} XP from filled bubbles", formerly=("end_tale",),
        payload={"columns": "list", "rows": "list", "xp": "int"}),
    EventSpec("advance_bought", "raised [the {totem} totem|{skill} ({specialization})|{skill}] from {from} to {to}"
              " for {cost} XP",
              formerly=("buy_advance",),
        payload={"advance": "str", "cost": "int", "from": "int", "skill": "str?", "to": "int", "totem": "str?",
                 "specialization": "str?", "new": "bool?"}),
    *common.EVENTS,
])

# The state after an event; unknown types (generic rolls, ...) change nothing.
evolve = evolver(common.handlers(HANDLERS), EVENTS)
