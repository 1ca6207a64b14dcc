"""Every write, in one vocabulary.

* ``access_*`` fetches something and checks the user may use it;
* ``check_*`` validates input;
* ``do_*`` is the only code that appends events (through ``campaign.log.append``)
  and updates projections, inside one transaction; broadcasting happens on
  commit.

Views and consumers parse, call one of these, and respond. Errors are
:class:`ActionError` subclasses carrying an HTTP status, a code and a message
written for a person.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, replace

from django.contrib.auth import get_user_model
from django.db import IntegrityError, transaction
from django.utils.text import slugify

from rules import RuleError, get_system
from rules.notation import roll_event

from . import dice as dice_module
from . import fairdice
from . import projections
from .broadcast import broadcast_on_commit
from .log import Draft, append, canonical_json, lock_campaign
from .models import (
    ROLE_CHOICES,
    DiceSeed,
    ROLE_GM,
    ROLE_PLAYER,
    ROLE_SPECTATOR,
    VISIBILITY_CHOICES,
    VISIBILITY_PUBLIC,
    Campaign,
    Character,
    Command,
    Event,
    Membership,
)

User = get_user_model()


class ActionError(Exception):
    status = 400
    code = "invalid"

    def __init__(self, message: str, code: str | None = None):
        super().__init__(message)
        self.message = message
        if code:
            self.code = code

    def as_json(self) -> dict:
        return {"code": self.code, "message": self.message}


class NotFound(ActionError):
    status = 404
    code = "not_found"


class Forbidden(ActionError):
    status = 403
    code = "forbidden"


class Conflict(ActionError):
    status = 409
    code = "conflict"


class Refused(ActionError):
    """The rules refuse the action (spending Resolve you do not have, ...)."""

    status = 422
    code = "refused"


# --- access_* -------------------------------------------------------------------

def access_campaign(user, slug: str) -> tuple[Campaign, Membership]:
    """The campaign and the user's membership; the same NotFound for 'absent'
    and 'not yours', so an outsider learns nothing about the campaign."""
    if user is None or not user.is_authenticated:
        raise ActionError("Log in to see this campaign.", "unauthenticated")
    membership = (
        Membership.objects.select_related("campaign", "user").filter(campaign__slug=slug, user=user).first()
        if isinstance(slug, str)
        else None
    )
    if membership is None:
        raise NotFound("There is no campaign here that you are a member of.")
    return membership.campaign, membership


def access_character(membership: Membership, character_id) -> Character:
    """A character of the membership's campaign that this member may act for."""
    if isinstance(character_id, bool) or not isinstance(character_id, int):
        raise ActionError("'character' must be the id (a number) of a character in this campaign.")
    character = Character.objects.filter(campaign_id=membership.campaign_id, pk=character_id).first()
    if character is None:
        raise NotFound(f"This campaign has no character {character_id}.")
    if not membership.is_gm and character.owner_id != membership.user_id:
        raise Forbidden(f"You can't act for {character.name}: only their player and the GM can.")
    return character


def access_character_for_reading(membership: Membership, character_id) -> Character:
    """Any character of the membership's campaign: every member may read every sheet at the table."""
    character = (
        Character.objects.select_related("owner", "projection")
        .filter(campaign_id=membership.campaign_id, pk=character_id)
        .first()
    )
    if character is None:
        raise NotFound(f"This campaign has no character {character_id}.")
    return character


# --- check_* --------------------------------------------------------------------

CLIENT_ID = re.compile(r"^[A-Za-z0-9._:\-]{1,100}$")
MAX_ACTION_BYTES = 16_000


def check_command(body) -> tuple[str, dict]:
    """Validate a command envelope ``{"id": ..., "action": {...}}``."""
    if not isinstance(body, dict):
        raise ActionError('A command must be a JSON object: {"id": "...", "action": {...}}.')
    client_id = body.get("id")
    if not isinstance(client_id, str) or not CLIENT_ID.match(client_id):
        raise ActionError("'id' must be a string of 1 to 100 letters, digits or . _ : - chosen by the client.", "bad_id")
    action = body.get("action")
    if not isinstance(action, dict) or not isinstance(action.get("type"), str):
        raise ActionError("'action' must be an object with a 'type', such as {\"type\": \"roll\", \"notation\": \"2d6\"}.")
    try:
        encoded = canonical_json(action)
    except (TypeError, ValueError):
        raise ActionError("'action' must contain only plain JSON values.")
    if len(encoded) > MAX_ACTION_BYTES:
        raise ActionError(f"The action is too large (at most {MAX_ACTION_BYTES} bytes).", "too_large")
    if b"\\u0000" in encoded or "\x00" in encoded.decode("utf-8"):
        raise ActionError("Text in an action can't contain NUL characters.")
    visibility = action.get("visibility", VISIBILITY_PUBLIC)
    if not isinstance(visibility, str) or visibility not in dict(VISIBILITY_CHOICES):
        raise ActionError("'visibility' must be one of: " + ", ".join(dict(VISIBILITY_CHOICES)) + ".")
    return client_id, action


def check_name(value, what: str, max_length: int = 80) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ActionError(f"{what} is required.")
    value = value.strip()
    if len(value) > max_length:
        raise ActionError(f"{what} is too long (at most {max_length} characters).")
    return value


# --- do_* -----------------------------------------------------------------------

@dataclass
class CommandResult:
    events: list[Event]
    replayed: bool  # True when a repeated id returned the original events


def _body_hash(action: dict) -> str:
    return hashlib.sha256(canonical_json(action)).hexdigest()


def do_command(membership: Membership, body, dice=None) -> CommandResult:
    """Run one client command and return its events.

    A repeated id with the same action returns the original events without
    acting again; with a different action it is a :class:`Conflict`.
    """
    client_id, action = check_command(body)
    body_hash = _body_hash(action)
    user = membership.user
    with transaction.atomic():
        campaign = lock_campaign(membership.campaign_id)
        previous = Command.objects.filter(campaign=campaign, actor=user, client_id=client_id).first()
        if previous is not None:
            if previous.body_hash != body_hash:
                raise Conflict(f"Command id '{client_id}' was already used for a different action.")
            return CommandResult(list(previous.events.select_related("actor", "character").order_by("seq")), True)
        # A hidden roll's nonce is drawn before its dice, which depend on it.
        nonce = fairdice.new_nonce() if action.get("visibility", VISIBILITY_PUBLIC) != VISIBILITY_PUBLIC else ""
        source = dice or dice_module.dice_for(campaign, nonce=nonce)
        recorder = source if isinstance(source, fairdice.RecordingDice) else fairdice.RecordingDice(source)
        drafts = _decide(campaign, membership, action, recorder)
        if not drafts:
            raise Refused("That action changes nothing, so nothing was stored.")
        drafts = _link_request(campaign, action, drafts)
        drafts = _record_dice_and_seal(drafts, recorder.log, nonce)
        command = Command.objects.create(campaign=campaign, actor=user, client_id=client_id, body_hash=body_hash)
        events = append(campaign, drafts, actor=user, command=command)
        projections.apply(campaign, events)
        broadcast_on_commit(campaign.id, events)
    return CommandResult(events, False)


def _link_request(campaign: Campaign, action: dict, drafts: list[Draft]) -> list[Draft]:
    """An action sent in answer to a GM's ``roll_requested`` names it (``"request": seq``);
    the first event records ``"answers": seq`` so the log links the two exactly.

    A request is open until an answer that still counts: voiding the answer (a mistaken
    roll) opens the request again, as the table shows it, and voiding the request closes it."""
    seq = action.get("request")
    if seq is None:
        return drafts
    request = check_seq(campaign, {"seq": seq})
    character = drafts[0].character
    if request.type != "roll_requested" or character is None or request.character_id != character.id:
        raise ActionError(f"Event {seq} is not a roll request for this character.")
    answers = list(Event.objects.filter(campaign=campaign, payload__answers=seq).values_list("seq", flat=True))
    voided = set(Event.objects.filter(campaign=campaign, type="event_voided", payload__seq__in=[seq, *answers])
                 .values_list("payload__seq", flat=True))
    if seq in voided:
        raise Refused(f"Request #{seq} was voided: there is nothing to answer.")
    answered = next((s for s in sorted(answers) if s not in voided), None)
    if answered is not None:
        raise Refused(f"That request was already answered in #{answered}.")
    return [replace(drafts[0], payload={**drafts[0].payload, "answers": seq}), *drafts[1:]]


def _record_dice_and_seal(drafts: list[Draft], dice_log: list[list[int]], nonce: str) -> list[Draft]:
    """Record every die drawn on the command's first event; seal hidden events."""
    if dice_log:
        drafts = [replace(drafts[0], payload={**drafts[0].payload, "dice_log": dice_log}), *drafts[1:]]
    return [replace(d, payload=fairdice.seal(dict(d.payload), nonce)) if d.visibility != VISIBILITY_PUBLIC else d
            for d in drafts]


def _require_gm(membership: Membership, what: str) -> None:
    if not membership.is_gm:
        raise Forbidden(f"Only the GM can {what}.")


def _decide(campaign: Campaign, membership: Membership, action: dict, dice) -> list[Draft]:
    """Turn a validated action into drafts, inside the locked transaction.

    It writes nothing but identity rows (a new character, a new member);
    ``append`` moves the stream's session and scene counters."""
    kind = action["type"]
    visibility = action.get("visibility", VISIBILITY_PUBLIC)
    if membership.role == ROLE_SPECTATOR:
        raise Forbidden("Spectators watch the table; they can't act at it.")
    if kind == "roll":
        character = access_character(membership, action["character"]) if action.get("character") is not None else None
        try:
            event = roll_event(action, dice)
        except RuleError as e:
            raise ActionError(e.message, e.code)
        return [Draft(event.type, event.payload, event.version, character, visibility)]
    if kind == "add_seed":
        return [_decide_add_seed(campaign, action)]
    if kind == "create_character":
        return [_decide_create_character(campaign, membership, action)]
    if kind in SCENE_ACTIONS:
        _require_gm(membership, kind.replace("_", " ") + "s")
        return [SCENE_ACTIONS[kind](campaign)]
    if kind in GM_TABLE_ACTIONS:
        _require_gm(membership, GM_TABLE_ACTIONS[kind][0])
        return [GM_TABLE_ACTIONS[kind][1](campaign, membership, action)]
    # Anything else is the campaign's rule system's to decide.
    rules = campaign.rules
    if kind not in rules.actions:
        known = sorted(["roll", "add_seed", "create_character", *SCENE_ACTIONS, *GM_TABLE_ACTIONS, *rules.actions])
        raise ActionError(f"Unknown action '{kind[:40]}'. Known actions: {', '.join(known)}.", "unknown_action")
    if kind in rules.gm_actions:
        _require_gm(membership, f"take the action '{kind}'")
    if action.get("character") is None:
        raise ActionError(f"The action '{kind}' needs a 'character' (its id).")
    character = access_character(membership, action["character"])
    state = character.projection.state
    try:
        decided = rules.decide(state, action, dice)
    except RuleError as e:
        # Malformed input is a 400; anything else is the rules saying no (422).
        raise ActionError(e.message, e.code) if e.code in INPUT_ERRORS else Refused(e.message, e.code)
    return [Draft(e.type, e.payload, e.version, character, visibility) for e in decided]


def _decide_add_seed(campaign: Campaign, action: dict) -> Draft:
    """A player's own randomness, mixed into every later die of the session."""
    if campaign.current_session is None:
        raise Refused("Seeds are added to a running session: wait for the GM to start one.")
    seed = action.get("seed")
    if not isinstance(seed, str) or not 1 <= len(seed) <= fairdice.MAX_PLAYER_SEED or not seed.isprintable():
        raise ActionError(f"'seed' must be 1 to {fairdice.MAX_PLAYER_SEED} printable characters of your choice.")
    return Draft("seed_added", {"seed": seed})


def _decide_create_character(campaign: Campaign, membership: Membership, action: dict) -> Draft:
    name = check_name(action.get("name"), "A character name")
    owner = membership.user
    if action.get("owner") is not None:
        _require_gm(membership, "create a character for another member")
        owner_membership = Membership.objects.filter(
            campaign=campaign, user__username=action["owner"], role__in=[ROLE_GM, ROLE_PLAYER]
        ).first()
        if owner_membership is None:
            raise ActionError(f"'{str(action['owner'])[:40]}' is not a player in this campaign.")
        owner = owner_membership.user
    try:
        sheet = campaign.rules.validate_sheet(action.get("sheet", {}))
    except RuleError as e:
        raise ActionError(f"The character sheet is not valid: {e.message}", "invalid_sheet")
    character = Character.objects.create(campaign=campaign, owner=owner, name=name)
    return Draft("character_created", {"name": name, "owner": owner.username, "sheet": sheet}, 1, character)


def _start_session(campaign: Campaign) -> Draft:
    if campaign.current_session is not None:
        raise Refused(f"Session {campaign.current_session} is still running: end it first.")
    number = campaign.session_count + 1
    seed = fairdice.new_seed(campaign, number)
    return Draft("session_started", {"session": number, "dice_scheme": fairdice.SCHEME,
                                     "dice_commitment": fairdice.seed_commitment(seed.seed)})


def _end_session(campaign: Campaign) -> Draft:
    if campaign.current_session is None:
        raise Refused("No session is running.")
    if campaign.current_scene is not None:
        raise Refused(f"Scene {campaign.current_scene} is still running: end it first.")
    seed = DiceSeed.objects.filter(campaign=campaign, session=campaign.current_session).first()
    return Draft("session_ended", {"session": campaign.current_session, "dice_seed": seed.seed if seed else None})


def _start_scene(campaign: Campaign) -> Draft:
    if campaign.current_session is None:
        raise Refused("Start a session before starting a scene.")
    if campaign.current_scene is not None:
        raise Refused(f"Scene {campaign.current_scene} is still running: end it first.")
    return Draft("scene_started", {"scene": campaign.scene_count + 1})


def _end_scene(campaign: Campaign) -> Draft:
    if campaign.current_scene is None:
        raise Refused("No scene is running.")
    return Draft("scene_ended", {"scene": campaign.current_scene})


INPUT_ERRORS = frozenset({"invalid", "invalid_sheet", "unknown_action", "bad_notation"})

SCENE_ACTIONS = {
    "start_session": _start_session,
    "end_session": _end_session,
    "start_scene": _start_scene,
    "end_scene": _end_scene,
}


# --- GM tools at the table ------------------------------------------------------------

# Events that can't be voided: the campaign's frame, not something that happened in play.
UNVOIDABLE = frozenset({"campaign_created", "member_joined", "character_created", "event_voided", "roll_revealed",
                        "session_started", "session_ended", "scene_started", "scene_ended"})
MAX_REASON = 500


def check_reason(action: dict, required: bool = False) -> str:
    reason = action.get("reason", "")
    if reason is None:
        reason = ""
    if not isinstance(reason, str) or len(reason) > MAX_REASON:
        raise ActionError(f"'reason' must be text of at most {MAX_REASON} characters.")
    if required and not reason.strip():
        raise ActionError("Say why: 'reason' is required.")
    return reason.strip()


def check_seq(campaign: Campaign, action: dict) -> Event:
    seq = action.get("seq")
    if isinstance(seq, bool) or not isinstance(seq, int) or not 1 <= seq <= campaign.last_seq:
        raise ActionError(f"'seq' must be the number of an event in this log (1 to {campaign.last_seq}).")
    return Event.objects.get(campaign=campaign, seq=seq)


def _void(campaign: Campaign, membership: Membership, action: dict) -> Draft:
    """Void a mistaken event: a new event with a reason; the original stays, projections skip it."""
    target = check_seq(campaign, action)
    reason = check_reason(action, required=True)
    if target.type in UNVOIDABLE:
        raise Refused(f"A '{target.type}' event can't be voided.")
    if Event.objects.filter(campaign=campaign, type="event_voided", payload__seq=target.seq).exists():
        raise Refused(f"Event {target.seq} is already voided.")
    return Draft("event_voided", {"seq": target.seq, "type": target.type, "reason": reason}, 1, target.character)


def _reveal(campaign: Campaign, membership: Membership, action: dict) -> Draft:
    """Make a hidden roll public. The reveal carries the dice so every reader can check them."""
    target = check_seq(campaign, action)
    if target.visibility == VISIBILITY_PUBLIC:
        raise Refused(f"Event {target.seq} is already public.")
    if Event.objects.filter(campaign=campaign, type="roll_revealed", payload__seq=target.seq).exists():
        raise Refused(f"Event {target.seq} has already been revealed.")
    return Draft("roll_revealed", {"seq": target.seq, "type": target.type, "payload": target.payload}, 1,
                 target.character)


def _request_roll(campaign: Campaign, membership: Membership, action: dict) -> Draft:
    """Ask a player for a roll: the suggested action appears on their page, one click away."""
    character = access_character(membership, action.get("character"))
    wanted = action.get("action")
    if not isinstance(wanted, dict) or not isinstance(wanted.get("type"), str):
        raise ActionError("'action' must be the action to ask for, such as {\"type\": \"skill_test\", ...}.")
    if wanted["type"] not in campaign.rules.actions and wanted["type"] != "roll":
        raise ActionError(f"{campaign.rules.title} has no action '{wanted['type'][:40]}'.", "unknown_action")
    wanted = {**wanted, "character": character.id}
    return Draft("roll_requested", {"action": wanted, "note": check_reason({"reason": action.get("note")})},
                 1, character)


def _add_member(campaign: Campaign, membership: Membership, action: dict) -> Draft:
    role = action.get("role", ROLE_PLAYER)
    if role not in (ROLE_PLAYER, ROLE_SPECTATOR):
        raise ActionError("'role' must be player or spectator.")
    username = action.get("username")
    user = User.objects.filter(username=username).first() if isinstance(username, str) else None
    if user is None:
        raise ActionError("There is no user with that name: they can sign up first.")
    if Membership.objects.filter(campaign=campaign, user=user).exists():
        raise Refused(f"{user.username} is already at this table.")
    Membership.objects.create(campaign=campaign, user=user, role=role)
    return Draft("member_joined", {"username": user.username, "role": role})


GM_TABLE_ACTIONS = {
    "void": ("void events", _void),
    "reveal": ("reveal hidden rolls", _reveal),
    "request_roll": ("ask for rolls", _request_roll),
    "add_member": ("add members", _add_member),
}


def do_create_campaign(gm, name: str, system: str, slug: str | None = None) -> Campaign:
    """Create a campaign with ``gm`` as its GM; its log opens with ``campaign_created``."""
    name = check_name(name, "A campaign name", 120)
    try:
        get_system(system)
    except KeyError:
        raise ActionError(f"Unknown rule system '{str(system)[:20]}'.")
    base = slugify(slug or name)[:50] or "campaign"
    with transaction.atomic():
        candidate, n = base, 1
        while Campaign.objects.filter(slug=candidate).exists():
            n += 1
            candidate = f"{base}-{n}"
        campaign = Campaign.objects.create(slug=candidate, name=name, system=system)
        Membership.objects.create(campaign=campaign, user=gm, role=ROLE_GM)
        campaign = lock_campaign(campaign.id)
        events = append(campaign, [Draft("campaign_created", {"name": name, "system": system, "gm": gm.username})],
                        actor=gm)
        broadcast_on_commit(campaign.id, events)
    return campaign


def do_add_member(campaign: Campaign, user, role: str, actor=None) -> Membership:
    """Add ``user`` to ``campaign`` (idempotent: an existing member keeps their role)."""
    if role not in dict(ROLE_CHOICES):
        raise ActionError("The role must be gm, player or spectator.")
    with transaction.atomic():
        locked = lock_campaign(campaign.id)
        existing = Membership.objects.filter(campaign=locked, user=user).first()
        if existing:
            return existing
        try:
            membership = Membership.objects.create(campaign=locked, user=user, role=role)
        except IntegrityError:
            raise Conflict(f"{user.username} is already a member.")
        events = append(locked, [Draft("member_joined", {"username": user.username, "role": role})],
                        actor=actor or user)
        broadcast_on_commit(locked.id, events)
    return membership
