"""Sessions and scenes (the GM opens and closes them) and the seeds players add to a session."""

from __future__ import annotations

import rules.witness as witnessed
from rules.declare import Text, unsafe_text

from .. import fairdice
from ..eventlog import Draft
from ..models import Campaign, DiceSeed, Event
from .checks import check_name
from .declared import platform_action
from ..errors import ActionError, Refused


@platform_action("add_seed", title="Add a dice seed", emits=("seed_added",),
                 help="A note of randomness, kept in the log; it moves no die (docs/fair-dice.md).",
                 fields={"seed": Text(fairdice.MAX_PLAYER_SEED, label="Seed")})
def decide_add_seed(campaign: Campaign, membership, action: dict, *_) -> Draft:
    """A player's note of randomness, kept in the log.

    Since dice scheme v2 it moves no die: a seed the server could add as well
    was a way to grind dice, not to protect them (docs/fair-dice.md). The
    action stays so old clients and scripts keep working."""
    if campaign.current_session is None:
        raise Refused("Seeds are added to a running session: wait for the GM to start one.")
    seed = action.get("seed")
    # The one text rule of names, reasons and chat (rules/declare.py unsafe_text): a seed is read on
    # every member's log, so no control character or text-direction mark (a line break would also
    # blur a v1 session's "\n"-joined mix); no-break spaces, emoji joiners and variation selectors
    # are text like any other, which str.isprintable refused.
    if not isinstance(seed, str) or not 1 <= len(seed) <= fairdice.MAX_PLAYER_SEED or unsafe_text(seed):
        raise ActionError(f"'seed' must be 1 to {fairdice.MAX_PLAYER_SEED} characters of your choice, without "
                          "control characters (tabs, line breaks) or text-direction marks.")
    return Draft("seed_added", {"seed": seed})


@platform_action("start_session", title="Start a session", by="gm", gm="start sessions", emits=("session_started",),
                 help="Opens the next session and commits to its dice seed.")
def decide_start_session(campaign: Campaign, membership, action: dict, *_) -> Draft:
    if campaign.current_session is not None:
        raise Refused(f"Session {campaign.current_session} is still running: end it first.")
    number = campaign.session_count + 1
    seed = fairdice.new_seed(campaign, number)
    # Its witnessed rolls commit before they reveal, as every later session's (rules/witness.py).
    return Draft("session_started", {"session": number, "dice_scheme": fairdice.scheme_for(campaign),
                                     "dice_commitment": fairdice.seed_commitment(seed.seed),
                                     witnessed.COMMITS_MARK: True})


@platform_action("end_session", title="End the session", by="gm", gm="end sessions", emits=("session_ended",),
                 help="Closes the running session and publishes its dice seed.")
def decide_end_session(campaign: Campaign, membership, action: dict, *_) -> Draft:
    if campaign.current_session is None:
        raise Refused("No session is running.")
    if campaign.current_scene is not None:
        raise Refused(f"Scene {campaign.current_scene} is still running: end it first.")
    seed = DiceSeed.objects.filter(campaign=campaign, session=campaign.current_session).first()
    return Draft("session_ended", {"session": campaign.current_session, "dice_seed": seed.seed if seed else None})


@platform_action("start_scene", title="Start a scene", by="gm", gm="start scenes", emits=("scene_started",),
                 fields={"name": Text(80, optional=True, label="Scene name")})
def decide_start_scene(campaign: Campaign, membership, action: dict, *_) -> Draft:
    """A scene, numbered through the campaign, and named if the GM gives it a name ("The ford"): the
    table's header and the log say it, and the GM finds it again on the audit page."""
    if campaign.current_session is None:
        raise Refused("Start a session before starting a scene.")
    if campaign.current_scene is not None:
        raise Refused(f"Scene {campaign.current_scene} is still running: end it first.")
    payload = {"scene": campaign.scene_count + 1}
    if action.get("name") not in (None, ""):
        payload["name"] = check_name(action["name"], "A scene name")
    return Draft("scene_started", payload)


def current_scene_name(campaign: Campaign) -> str | None:
    """The running scene's name, if the GM gave it one (its ``scene_started``, a public frame event)."""
    if campaign.current_scene is None:
        return None
    name = (Event.objects.filter(campaign=campaign, type="scene_started", payload__scene=campaign.current_scene)
            .order_by("-seq").values_list("payload__name", flat=True).first())
    return name if isinstance(name, str) else None  # an imported log's payload may hold anything


@platform_action("end_scene", title="End the scene", by="gm", gm="end scenes", emits=("scene_ended",))
def decide_end_scene(campaign: Campaign, membership, action: dict, *_) -> Draft:
    if campaign.current_scene is None:
        raise Refused("No scene is running.")
    return Draft("scene_ended", {"scene": campaign.current_scene})

