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
import itertools
import re
import secrets
from dataclasses import dataclass, replace

from django.contrib.auth import get_user_model
from django.db import IntegrityError, connection, transaction
from django.utils import timezone
from django.utils.text import slugify

from rules import RuleError, get_system
from rules.notation import roll_event

from . import checkpoints
from .canonical import jcs
from . import dice as dice_module
from . import fairdice
from . import hidden
from . import projections
from .broadcast import broadcast_on_commit, close_sockets_on_commit
from .log import Draft, append, canonical_json, event_body, hashed_fields, lock_campaign
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
from .visibility import Viewer

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


def access_membership_now(membership: Membership) -> Membership:
    """The membership as it stands now (inside the campaign's lock): a socket opened
    before a removal, a role change or a deactivation acts with today's rights or not at all."""
    current = (Membership.objects.select_related("user", "campaign")
               .filter(pk=membership.pk, user__is_active=True).first())
    if current is None:
        raise Forbidden("You are no longer a member of this campaign.", "not_member")
    return current


def access_character(membership: Membership, character_id) -> Character:
    """A character of the membership's campaign that this member may act for."""
    if isinstance(character_id, bool) or not isinstance(character_id, int):
        raise ActionError("'character' must be the id (a number) of a character in this campaign.")
    # With its projection: a rules action reads the state, and projections.apply
    # folds the new events into the same row without reading it again.
    character = Character.objects.select_related("projection").filter(
        campaign_id=membership.campaign_id, pk=character_id).first()
    if character is None:
        raise NotFound(f"This campaign has no character {character_id}.")
    if not membership.is_gm and character.owner_id != membership.user_id:
        raise Forbidden(f"You can't act for {character.name}: only their player and the GM can.")
    return character


def access_character_for_reading(membership: Membership, character_id) -> Character:
    """Any character of the membership's campaign: every member may read every sheet at the table."""
    character = (
        Character.objects.select_related("owner", "projection", "campaign")
        .filter(campaign_id=membership.campaign_id, pk=character_id)
        .first()
    )
    if character is None:
        raise NotFound(f"This campaign has no character {character_id}.")
    return character


# --- check_* --------------------------------------------------------------------

CLIENT_ID = re.compile(r"^[A-Za-z0-9._:\-]{1,100}$")
MAX_ACTION_BYTES = 16_000
MAX_ACTION_DEPTH = 16  # real actions nest 3 deep; deeper is only ever an attack on the encoder's stack


def json_depth(value) -> int:
    """How deeply lists and objects nest in ``value`` (without recursion, so any depth is safe)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            item = list(item.values())
        if isinstance(item, list):
            deepest = max(deepest, depth)
            stack.extend((child, depth + 1) for child in item)
    return deepest


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
    if json_depth(action) > MAX_ACTION_DEPTH:
        raise ActionError(f"The action nests too deeply (at most {MAX_ACTION_DEPTH} levels).", "too_deep")
    try:
        # The encoding the log hashes (RFC 8785): a number no JSON reader can hold
        # (beyond a double's range) is refused here, not a 500 at the append.
        encoded = jcs(action)
    except (TypeError, ValueError, OverflowError):
        raise ActionError("'action' must contain only plain JSON values (numbers within a double's range).")
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
    with transaction.atomic():
        campaign = lock_campaign(membership.campaign_id)
        membership = access_membership_now(membership)
        user = membership.user
        command = _claim_command(campaign, user, client_id, body_hash)
        if command is None:
            previous = Command.objects.get(campaign=campaign, actor=user, client_id=client_id)
            if previous.body_hash != body_hash:
                raise Conflict(f"Command id '{client_id}' was already used for a different action.")
            return CommandResult(list(previous.events.select_related("actor", "character").order_by("seq")), True)
        # The dice depend on who acts and the id their client chose, nothing else
        # the server could vary (docs/fair-dice.md). The unique constraint on
        # Command (campaign, actor, client id) means an id rolls at most once.
        source = dice_module.dice_for(campaign, user.pk, client_id)
        recorder = source.dice if dice is None else fairdice.RecordingDice(dice)
        drafts = _decide(campaign, membership, action, recorder)
        if not drafts:
            raise Refused("That action changes nothing, so nothing was stored.")
        drafts = hidden.one_event(drafts)
        drafts = _link_request(campaign, action, drafts)
        drafts = _record_dice_and_seal(drafts, client_id, action, recorder.log, source)
        events = append(campaign, drafts, actor=user, command=command)
        projections.apply(campaign, events)
        if any(e.type == "session_ended" for e in events):
            checkpoints.sign_head(campaign)  # every session end leaves a receipt of the log so far
        broadcast_on_commit(campaign.id, events)
    return CommandResult(events, False)


def _claim_command(campaign: Campaign, user, client_id: str, body_hash: str) -> Command | None:
    """Store the command's row, or return None if its client id was used before.

    The unique constraint decides, in the same round trip as the insert
    (``ON CONFLICT DO NOTHING``, PostgreSQL and SQLite alike) instead of a read
    first. If the command is then refused, the transaction takes the row back.
    """
    command = Command(campaign=campaign, actor=user, client_id=client_id, body_hash=body_hash,
                      created_at=timezone.now())
    table, quote = Command._meta.db_table, connection.ops.quote_name
    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {quote(table)} (campaign_id, actor_id, client_id, body_hash, created_at) "
            "VALUES (%s, %s, %s, %s, %s) ON CONFLICT (campaign_id, actor_id, client_id) DO NOTHING RETURNING id",
            [campaign.id, user.id, client_id, body_hash, connection.ops.adapt_datetimefield_value(command.created_at)],
        )
        row = cursor.fetchone()
    if row is None:
        return None
    command.id = row[0]
    command._state.adding = False
    return command


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


def _record_dice_and_seal(drafts: list[Draft], client_id: str, action: dict, dice_log: list[list[int]],
                          source: fairdice.CommandDice) -> list[Draft]:
    """Record every die drawn, the command id and the action on the command's first
    event (so anyone can recompute and replay it), and give hidden events their
    nonce: a hidden event's commitment is its body digest, and the nonce in the
    body is what makes that digest impossible to guess from the few outcomes."""
    if dice_log:
        payload = fairdice.record(dict(drafts[0].payload), client_id, action, dice_log,
                                  verifiable=source.session_dice is not None)
        drafts = [replace(drafts[0], payload=payload), *drafts[1:]]
    if all(d.visibility == VISIBILITY_PUBLIC for d in drafts):
        return drafts
    nonce = source.nonce
    return [replace(d, payload={**d.payload, "nonce": nonce}) if d.visibility != VISIBILITY_PUBLIC else d
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
    try:
        # Who may see the decision depends on what hidden events it reads (campaign/hidden.py).
        decided, visibility = hidden.decide(rules, character, Viewer.of(membership), action, visibility, dice,
                                            INPUT_ERRORS)
    except RuleError as e:
        raise rule_refusal(e)
    return [Draft(e.type, e.payload, e.version, character, visibility) for e in decided]


def _decide_add_seed(campaign: Campaign, action: dict) -> Draft:
    """A player's note of randomness, kept in the log.

    Since dice scheme v2 it moves no die: a seed the server could add as well
    was a way to grind dice, not to protect them (docs/fair-dice.md). The
    action stays so old clients and scripts keep working."""
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
        if not isinstance(action["owner"], str):
            raise ActionError("'owner' must be the username of a player in this campaign.")
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


def rule_refusal(e: RuleError) -> ActionError:
    """What a client is told when the rules raise: malformed input is a 400, anything else is
    the rules saying no (422). The one mapping, for commands and previews alike."""
    return ActionError(e.message, e.code) if e.code in INPUT_ERRORS else Refused(e.message, e.code)

SCENE_ACTIONS = {
    "start_session": _start_session,
    "end_session": _end_session,
    "start_scene": _start_scene,
    "end_scene": _end_scene,
}


# --- GM tools at the table ------------------------------------------------------------

# Events that can't be voided: the campaign's frame, not something that happened in play.
UNVOIDABLE = frozenset({"campaign_created", "member_joined", "character_created", "event_voided", "roll_revealed",
                        "session_started", "session_ended", "scene_started", "scene_ended",
                        "member_removed", "member_role_changed", "campaign_renamed"})
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
    return Draft("event_voided", {"seq": target.seq, "type": hidden.shown_type(target), "reason": reason}, 1,
                 target.character)


def _reveal(campaign: Campaign, membership: Membership, action: dict) -> Draft:
    """Make a hidden roll public. The reveal carries the sealed event's whole body, so
    every reader checks it against the body digest the chain already holds."""
    target = check_seq(campaign, action)
    if target.visibility == VISIBILITY_PUBLIC:
        raise Refused(f"Event {target.seq} is already public.")
    if Event.objects.filter(campaign=campaign, type="roll_revealed", payload__seq=target.seq).exists():
        raise Refused(f"Event {target.seq} has already been revealed.")
    body = event_body(hashed_fields(target))
    return Draft("roll_revealed", {"seq": target.seq, "body": body}, 1, target.character)


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


def access_other_member(campaign: Campaign, membership: Membership, username) -> Membership:
    """Another member of the campaign, by username (the GM can't remove or demote themselves:
    a campaign always keeps a GM)."""
    other = (Membership.objects.select_related("user").filter(campaign=campaign, user__username=username).first()
             if isinstance(username, str) else None)
    if other is None:
        raise ActionError(f"'{str(username)[:40]}' is not a member of this campaign.")
    if other.user_id == membership.user_id:
        raise Refused("You can't change your own place at the table.")
    return other


def _remove_member(campaign: Campaign, membership: Membership, action: dict) -> Draft:
    """The member leaves the table: their sockets close; their characters and past events stay."""
    other = access_other_member(campaign, membership, action.get("username"))
    other.delete()
    close_sockets_on_commit(other.user_id, campaign.id)
    return Draft("member_removed", {"username": other.user.username, "role": other.role})


def _change_role(campaign: Campaign, membership: Membership, action: dict) -> Draft:
    """A new role; their sockets close so they reconnect seeing exactly what the new role may."""
    other = access_other_member(campaign, membership, action.get("username"))
    role = action.get("role")
    if role not in dict(ROLE_CHOICES):
        raise ActionError("'role' must be gm, player or spectator.")
    if role == other.role:
        raise Refused(f"{other.user.username} is already {role}.")
    before = other.role
    Membership.objects.filter(pk=other.pk).update(role=role)
    close_sockets_on_commit(other.user_id, campaign.id)
    return Draft("member_role_changed", {"username": other.user.username, "from": before, "role": role})


def _rename_campaign(campaign: Campaign, membership: Membership, action: dict) -> Draft:
    name = check_name(action.get("name"), "A campaign name", 120)
    if name == campaign.name:
        raise Refused(f"The campaign is already called {name}.")
    before = campaign.name
    Campaign.objects.filter(pk=campaign.pk).update(name=name)
    campaign.name = name
    return Draft("campaign_renamed", {"from": before, "name": name})


GM_TABLE_ACTIONS = {
    "void": ("void events", _void),
    "reveal": ("reveal hidden rolls", _reveal),
    "request_roll": ("ask for rolls", _request_roll),
    "add_member": ("add members", _add_member),
    "remove_member": ("remove members", _remove_member),
    "change_role": ("change roles", _change_role),
    "rename_campaign": ("rename the campaign", _rename_campaign),
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
        campaign = _new_campaign_row(base, name, system)
        Membership.objects.create(campaign=campaign, user=gm, role=ROLE_GM)
        campaign = lock_campaign(campaign.id)
        events = append(campaign, [Draft("campaign_created", {"name": name, "system": system, "gm": gm.username})],
                        actor=gm)
        broadcast_on_commit(campaign.id, events)
    return campaign


def _new_campaign_row(base: str, name: str, system: str) -> Campaign:
    """The campaign row under the first free slug of base, base-2, base-3...

    Two people creating "Night Watch" at once both see "night-watch" free; the
    second insert then hits the unique slug (PostgreSQL makes it wait for the
    first to commit), and moves on to the next slug instead of failing."""
    for n in itertools.count(1):
        candidate = base if n == 1 else f"{base}-{n}"
        if Campaign.objects.filter(slug=candidate).exists():
            continue
        try:
            with transaction.atomic():  # a savepoint: the clash must not spoil the outer transaction
                return Campaign.objects.create(slug=candidate, name=name, system=system)
        except IntegrityError:
            continue


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


def do_checkpoint(membership: Membership):
    """Sign the campaign's head now, for any member who wants a receipt of the log so far."""
    with transaction.atomic():
        campaign = lock_campaign(membership.campaign_id)  # the head can't move while it is signed
        return checkpoints.sign_head(campaign)


def do_rotate_invite(membership: Membership) -> Campaign:
    """A new invite link for the campaign; the old one stops working at once.

    Not an event: the link is a secret of the GM's, not something that happened
    at the table (and the log is read by every member)."""
    _require_gm(membership, "make a new invite link")
    with transaction.atomic():
        campaign = lock_campaign(membership.campaign_id)
        campaign.invite_code = secrets.token_urlsafe()
        campaign.invite_created_at = timezone.now()
        Campaign.objects.filter(pk=campaign.pk).update(invite_code=campaign.invite_code,
                                                       invite_created_at=campaign.invite_created_at)
    return campaign
