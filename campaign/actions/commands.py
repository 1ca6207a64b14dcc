"""A client command, from its envelope to its stored events: check it, lock the stream (reading
what the command needs in the same round trip), let the action's noun decide, record (append with
the projections in one statement), then ring the table's doorbell on commit."""

from __future__ import annotations

import copy
import hashlib
import re
from dataclasses import dataclass, replace
from typing import Callable
from datetime import timedelta

from django.conf import settings
from django.db.models import Min, Q

from django.db import transaction
from django.utils import timezone

from .. import checkpoints
from .. import dice as dice_module
from .. import fairdice
from .. import member_keys
from ..canonical import jcs
from ..eventlog import STREAM_COLUMNS, Draft, Stream, canonical_json, lock_campaign, lock_stream, marks_after, record
from ..models import (
    ROLE_GM,
    ROLE_SPECTATOR,
    CHOSEN_VISIBILITIES,
    VISIBILITY_PUBLIC,
    Campaign,
    Character,
    Command,
    Event,
    Membership,
    WitnessedRoll,
)
from ..outages import command_transaction
from ..publish import publish_on_commit
from ..visibility import HIDDEN_ROW, Viewer, hidden, may_see, naming_readers
from .access import access_membership_now
from .keys import check_signature
from .kept import Readers
from ..errors import ActionError, Conflict, Forbidden, Refused
from .log_entries import check_seq
from .platform import PLATFORM_ACTIONS
from .rules_actions import decide_rules_action, rules_readers
from . import witnesses as witnessing
import rules.witness as witnessed

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
    if not isinstance(visibility, str) or visibility not in CHOSEN_VISIBILITIES:
        raise ActionError("'visibility' must be one of: " + ", ".join(CHOSEN_VISIBILITIES) + ".")
    return client_id, action


@dataclass
class CommandResult:
    events: list[Event]
    replayed: bool  # True when a repeated id returned the original events
    # The log's head right after the command, from the row it locked: what a socket's ack
    # carries, without reading the stream row again after COMMIT.
    head: dict | None = None


def _head(campaign: Campaign) -> dict:
    return {"seq": campaign.last_seq, "hash": campaign.head_hash}


def _body_hash(action: dict) -> str:
    return hashlib.sha256(canonical_json(action)).hexdigest()


def do_command(membership: Membership, body, dice=None) -> CommandResult:
    """Run one client command and return its events.

    A repeated id with the same action returns the original events without
    acting again; with a different action it is a :class:`Conflict`.

    In a campaign whose members sign (``signed_from``), the envelope's ``signature`` is checked before
    anything is decided (campaign/actions/keys.py), and the command's first event keeps the envelope
    verbatim (:func:`_with_signature`).
    """
    client_id, action = check_command(body)
    with command_transaction():  # a connection lost at COMMIT is an unknown outcome, not "nothing stored"
        stream = _lock(membership, client_id, action)
        result = _command(stream, client_id, action, body, dice)
        if action["type"] in WITNESSING and not result.replayed:
            _witnessed_next(stream.campaign, {action["type"]: {action["roll"]}})
            result.head = _head(stream.campaign)
    return result


# A witness's commands: her commitment, then her reveal (docs/fair-dice.md, "Witnessed rolls").
WITNESSING = frozenset({witnessed.COMMIT, witnessed.CONTRIBUTE})


def _witnessed_next(campaign: Campaign, rolls: dict[str, set[int]]) -> None:
    """After witnesses' commands stored in this transaction (``rolls``: action type -> the rolls they
    named): close each roll every witness has now committed to, decide each every closed witness has now
    revealed to."""
    for roll in sorted(rolls.get(witnessed.COMMIT, ())):
        _close_if_complete(campaign, roll)
    for roll in sorted(rolls.get(witnessed.CONTRIBUTE, ())):
        _resolve_if_complete(campaign, roll)


def do_contributions(items: list[tuple[Membership, dict]]) -> list[CommandResult | ActionError]:
    """Several ``witness_commit`` and ``witness_roll`` commands of one campaign (the commitments or reveals
    a table's witnesses sent at once), in ONE transaction: one lock, one ``COMMIT``, and each roll they
    complete closed or decided in it.

    Each is the command :func:`do_command` would run, in the order given, and answered on its own: its
    result, or the :class:`ActionError` that refused it, which stored nothing and spoils none of the
    others (a witness's command's decision writes nothing, so a refusal has nothing to undo). A repeated id is
    answered with its events, also when the first use is earlier in the same batch. Any other error (the
    database away, the lock not granted) fails them all: nothing of any was stored, or the outcome of all
    is unknown, as for one command."""
    outcomes: list[CommandResult | ActionError | None] = [None] * len(items)
    checked = []
    for i, (membership, body) in enumerate(items):
        try:
            client_id, action = check_command(body)
        except ActionError as e:
            outcomes[i] = e
            continue
        assert action["type"] in WITNESSING, "only witnesses' commands are stored together"
        checked.append((i, membership, client_id, action, body))
    if not checked:
        return outcomes
    with command_transaction():
        stream, rolls, known, keys, stored = None, {}, None, None, []
        for i, membership, client_id, action, body in checked:
            # The first takes the lock; each later one reads what it needs under it (the membership now, an
            # earlier use of its id), after what the ones before it stored.
            if stream is None:
                stream = _lock(membership, client_id, action)
                known = witnessing.ledger(stream.campaign)
                # Read once for all: witnesses' commands register no key.
                keys = member_keys.key_records(stream.campaign.id) if stream.campaign.signed_from is not None else None
            else:
                stream = lock_stream(membership, client_id)
                stream.campaign.witness_ledger = known  # the rolls' rows, and who contributed, read once for all
            try:
                outcomes[i] = result = _command(stream, client_id, action, body, None, keys, stored.extend)
            except ActionError as e:
                outcomes[i] = e
                continue
            if not result.replayed:
                rolls.setdefault(action["type"], set()).add(action["roll"])
        # One doorbell for all of them (every event still goes to every socket, in order), and then the
        # closes' and the decisions'.
        publish_on_commit(stream.campaign.id, stored)
        _witnessed_next(stream.campaign, rolls)  # stream.campaign: the locked row, at the head the last one left it
    return outcomes


def _lock(membership: Membership, client_id: str, action: dict) -> Stream:
    """Lock the campaign's stream, reading what the command needs in the same round trip (the lock, the
    membership now, an earlier use of this id, the session's dice seed and the character the action
    names: campaign.eventlog.lock_stream), after deciding the witnessed rolls due first."""
    character_id = action.get("character")
    if isinstance(character_id, bool) or not isinstance(character_id, int) or not -2**63 <= character_id < 2**63:
        character_id = None  # not one to look up with the lock; access_character says what is wrong
    stream = lock_stream(membership, client_id, character_id)
    if _sweep(stream.campaign, everything=action["type"] in DECIDE_PENDING_FIRST):
        # Witnessed rolls resolved first (overdue ones, or every one before a command that would
        # change whether they can be decided): read what this command needs again, after them (the
        # lock is held: it waits for nothing).
        stream = lock_stream(membership, client_id, character_id)
    return stream


def _command(stream: Stream, client_id: str, action: dict, body: dict, dice,
             keys: dict[str, dict] | None = None, stored: Callable[[list[Event]], None] | None = None) -> CommandResult:
    """The command, under the lock :func:`_lock` took: its events stored, its doorbell registered.
    ``keys``: the campaign's members' keys, if the transaction read them already (check_signature);
    ``stored``: what is handed the events it stored, to publish with others (else they are published)."""
    signature = body.get("signature")
    body_hash = _body_hash(action)
    campaign = stream.campaign
    membership = access_membership_now(stream)
    user = membership.user
    if stream.previous is not None:
        previous_id, previous_hash = stream.previous
        if previous_hash != body_hash:
            raise Conflict(f"Command id '{client_id}' was already used for a different action.")
        return CommandResult(list(Event.objects.filter(command_id=previous_id)
                                  .select_related("actor", "character").order_by("seq")), True, _head(campaign))
    # The dice depend on who acts and the id their client chose, nothing else
    # the server could vary (docs/fair-dice.md). The unique constraint on
    # Command (campaign, actor, client id) means an id rolls at most once.
    signed = campaign.signed_from is not None
    if signed:
        check_signature(campaign, membership, client_id, action, signature, _commitment(campaign, stream.seed), keys)
    source = dice_module.dice_for(campaign, user.pk, client_id, seed=stream.seed)
    recorder = source.dice if dice is None else fairdice.RecordingDice(dice)
    # The rules may read more than was sent (a contest's opponent numbers, filled in by
    # campaign/actions/contests.py): they decide on a copy, and a signed command's event keeps
    # what was sent apart from what the server added (``filled``).
    decided = copy.deepcopy(action)
    if dice is None and _witnessed(campaign, membership, stream.seed, stream.character):
        drafts = _decide_unless_it_rolls(campaign, membership, decided, stream.character)
        readers = command_readers(campaign, membership, action, stream.character)
        if drafts is None or (readers is not None and readers.hidden):
            # It draws dice, or reads what some member may not see (whether it draws any is not theirs
            # to learn): stored pending, decided once its witnesses contributed.
            return _store_pending(campaign, membership, client_id, action, signature, body_hash, source,
                                  stream.character, readers)
    else:
        drafts = _decide(campaign, membership, decided, recorder, stream.character)
    if not drafts:
        raise Refused("That action changes nothing, so nothing was stored.")
    drafts = hidden.one_event(drafts)
    drafts = _link_request(campaign, action, drafts, Viewer.of(membership))
    drafts = _record_dice_and_seal(drafts, client_id, action if signed else decided, recorder.log, source,
                                   Viewer.of(membership), fairdice.scheme_for(campaign))
    if signed:
        filled = {k: v for k, v in decided.items() if k not in action}
        drafts = _with_signature(drafts, campaign.last_seq + 1, client_id, action, signature, filled)
    # Stored with its events, by the same statement: the unique constraint on
    # (campaign, actor, client id) is what makes an id act once.
    command = Command(campaign=campaign, actor=user, client_id=client_id, body_hash=body_hash,
                      created_at=timezone.now())
    events = record(campaign, drafts, actor=user, command=command)  # with the head and the projections
    assert not signed or events[0].seq == drafts[-1].payload.get("command_of", events[0].seq)
    if stored is None:
        publish_on_commit(campaign.id, events)
    else:
        stored(events)
    if action["type"] in WITNESSING:
        witnessing.ledger(campaign).stored(events[0])
    if any(e.type == "session_ended" for e in events):
        checkpoints.sign_head(campaign)  # every session end leaves a receipt of the log so far
    return CommandResult(events, False, _head(campaign))  # record moved the locked row to the new head


def _link_request(campaign: Campaign, action: dict, drafts: list[Draft], actor: Viewer) -> list[Draft]:
    """An action sent in answer to a GM's ``roll_requested`` names it (``"request": seq``);
    the first event records ``"answers": seq`` so the log links the two exactly.

    A request is open until an answer that still counts: voiding the answer (a mistaken
    roll) opens the request again, as the table shows it, and voiding the request closes it.
    An answer the actor may not see does not close it for her: "already answered in #19" told a
    player what the sealed #19 was, so she answers it as her
    table shows it, and the GM reads both."""
    seq = action.get("request")
    if seq is None:
        return drafts
    request = check_seq(campaign, {"seq": seq})
    character = drafts[0].character
    if request.type != "roll_requested" or character is None or request.character_id != character.id:
        raise ActionError(f"Event {seq} is not a roll request for this character.")
    rows = list(Event.objects.filter(campaign=campaign, payload__answers=seq)
                .values("seq", "visibility", "actor_id", **HIDDEN_ROW))
    voids, revealed = marks_after(campaign.id, seq)
    if any(may_see(void, actor, revealed) for void in voids.get(seq, ())):  # a void she can't read: open to her
        raise Refused(f"Request #{seq} was voided: there is nothing to answer.")
    answered = next((r["seq"] for r in sorted(rows, key=lambda r: r["seq"])
                     if r["seq"] not in voids and may_see(r, actor, revealed)), None)
    if answered is not None:
        raise Refused(f"That request was already answered in #{answered}.")
    return [replace(drafts[0], payload={**drafts[0].payload, "answers": seq}), *drafts[1:]]


def _commitment(campaign: Campaign, seed: str | None) -> str | None:
    """The running session's dice commitment (None outside a session), from the seed the lock read,
    or from its start when the seed was not kept (a campaign restored mid-session)."""
    if campaign.current_session is None:
        return None
    if seed is not None:
        return fairdice.seed_commitment(seed)
    start = Event.objects.filter(campaign=campaign, type="session_started",
                                 session=campaign.current_session).values_list("payload", flat=True).first()
    return (start or {}).get("dice_commitment")


# What a signed command's first event records beside the decision; no decision may use these keys.
SIGNED_KEYS = ("command_id", "action", "signature", "command_of")


def _with_signature(drafts: list[Draft], first_seq: int, client_id: str, action: dict, signature: dict,
                    filled: dict) -> list[Draft]:
    """A signed command's events: the first keeps the envelope as sent (``command_id``, ``action``,
    ``signature``) and what the server read for the rules (``filled``), never mixed into the action;
    every later one names the first (``command_of``), so a verifier knows which events one signature
    covers (docs/fair-dice.md, "Signed commands")."""
    first = dict(drafts[0].payload)
    clash = [k for k in (*SIGNED_KEYS, *(("filled",) if filled else ())) if k in first and k not in ("command_id", "action")]
    assert not clash, f"a decision's payload uses the signed command's keys {clash}"
    first.update(command_id=client_id, action=action, signature=signature)
    if filled:
        first["filled"] = filled
    later = []
    for draft in drafts[1:]:
        assert not any(k in draft.payload for k in SIGNED_KEYS), "a decision's payload uses the signed command's keys"
        later.append(replace(draft, payload={**draft.payload, "command_of": first_seq}))
    return [replace(drafts[0], payload=first), *later]


def _record_dice_and_seal(drafts: list[Draft], client_id: str, action: dict, dice_log: list[list[int]],
                          source: fairdice.CommandDice, actor: Viewer, scheme: str = fairdice.SCHEME) -> list[Draft]:
    """Record every die drawn, the command id and the action on the command's first
    event (so anyone can recompute and replay it), and give hidden events their
    nonce: a hidden event's commitment is its body digest, and the nonce in the
    body is what makes that digest impossible to guess from the few outcomes.

    The nonce is derived from the seed, the actor and the command id, unless the actor
    may not see the event (a blind roll, a decision on a character hidden-shaped for her):
    she knows her own command id, so once the session ends and the seed is out she could
    derive that nonce and test each possible body against the digest. Then it is drawn."""
    if dice_log:
        payload = fairdice.record(dict(drafts[0].payload), client_id, action, dice_log,
                                  verifiable=source.session_dice is not None, scheme=scheme)
        drafts = [replace(drafts[0], payload=payload), *drafts[1:]]
    if all(d.visibility == VISIBILITY_PUBLIC for d in drafts):
        return drafts
    sealed_from_actor = any(not may_see({"seq": 0, "visibility": d.visibility, "actor_id": actor.user_id,
                                         "payload": d.payload}, actor) for d in drafts)
    seal = {"nonce": fairdice.drawn_nonce(), "nonce_drawn": True} if sealed_from_actor else {"nonce": source.nonce}
    return [replace(d, payload={**d.payload, **seal}) if d.visibility != VISIBILITY_PUBLIC else d for d in drafts]


def _decide(campaign: Campaign, membership: Membership, action: dict, dice, character: Character | None = None
            ) -> list[Draft]:
    """Turn a validated action into drafts, inside the locked transaction: a platform action by its
    declaration (``PLATFORM_ACTIONS``: who may send it, its fields, its decide function), anything
    else by the campaign's rule system.

    ``character``: the one the action names, as the lock read it (or None).

    It writes no row the log describes: ``record`` writes those from the events
    (campaign.roster), as it moves the stream's session and scene counters."""
    kind = action["type"]
    platform = PLATFORM_ACTIONS.get(kind)
    if platform is not None:
        return platform(campaign, membership, action, dice, character)
    if membership.role == ROLE_SPECTATOR:
        raise Forbidden("Spectators watch the table; they can't act at it.")
    if kind not in campaign.rules.actions:
        known = sorted([*PLATFORM_ACTIONS, *campaign.rules.actions])
        raise ActionError(f"Unknown action '{kind[:40]}'. Known actions: {', '.join(known)}.", "unknown_action")
    return decide_rules_action(campaign, membership, action, dice, character)


# --- witnessed rolls (docs/fair-dice.md, "Witnessed rolls"; campaign/actions/witnesses.py) -------------------

# Commands before which every pending witnessed roll is decided: the session's end (a decision must be
# stamped with its session) and a change of a member's place (a decision is made with its sender's
# rights, which a replay of the rules can't see change).
DECIDE_PENDING_FIRST = frozenset({"end_session", "remove_member", "change_role"})


class _RollsDice(Exception):
    """Raised by :class:`_Probe` at a decision's first die."""


class _Probe:
    """Dice that stop a decision at its first die: whether a command draws any, without drawing one
    (a scripted test die, or a die of the seed, would be spent on a decision that is not kept). A recorder
    of none (``log``, ``source``), as a decision sealed from its actor replays its dice (hidden.ReplayDice)."""

    log: list = []

    @property
    def source(self):
        return self

    def roll(self, sides: int) -> int:
        raise _RollsDice


def _witnessed(campaign: Campaign, membership: Membership, seed: str | None, character: Character | None = None
               ) -> bool:
    """Whether this member's dice-drawing command waits for witnesses: in a signed campaign, inside a
    session whose seed the server holds, when the campaign's setting covers her role, or (under "gm")
    she was a GM at any point of this session: every verifier witnesses her rolls to its end; or (under
    "gm") the character it names is a GM's, an NPC or one a GM owns, whoever sends it (rules/witness.py).
    ``character``: the one the action names, as the lock read it (whether she may act for it is decided
    after: a roll the server refuses waits for nothing)."""
    if campaign.signed_from is None or campaign.current_session is None or seed is None:
        return False
    if witnessed.applies(campaign.witnessed_rolls, membership.role):
        return True
    if not witnessed.applies(campaign.witnessed_rolls, "gm"):
        return False
    if _was_gm_this_session(campaign, membership.user_id):
        return True
    if character is None or character.owner_id == membership.user_id and not character.npc:
        return False  # a roll of the table's, or for her own character: hers, whose role was read above
    return character.npc or Membership.objects.filter(campaign=campaign, user_id=character.owner_id,
                                                      role=ROLE_GM).exists() \
        or _was_gm_this_session(campaign, character.owner_id)


def _was_gm_this_session(campaign: Campaign, user_id: int | None) -> bool:
    """Whether a member who is no GM now was one in the current session: a GM now no longer one became
    something else in it (a role change from GM, a removal as GM) or was made GM in it, each an event of
    the session naming her with the role "gm" (``role`` or ``from``)."""
    mine = Event.objects.filter(campaign=campaign, session=campaign.current_session,
                                type__in=("member_joined", "member_role_changed", "member_removed"),
                                payload__user_id=user_id)
    return mine.filter(Q(payload__role="gm") | Q(payload__from="gm")).exists()


def _decide_unless_it_rolls(campaign: Campaign, membership: Membership, decided: dict,
                            character: Character | None) -> list[Draft] | None:
    """The decision, if it draws no die; None if it draws one (then whatever it wrote is undone)."""
    try:
        with transaction.atomic():  # a savepoint: the identity rows a decision writes go with it
            return _decide(campaign, membership, decided, _Probe(), character)
    except _RollsDice:
        return None


def command_readers(campaign: Campaign, membership: Membership, action: dict, character: Character | None
                    ) -> Readers | None:
    """Who reads the events of ``action``: the one answer its decision stores (a rules action's
    ``rules_readers``, a platform action's declared ``readers``) and a witnessed command's pending step,
    its call and a decision refused later store too. None for a platform action that never draws a die
    (it is never pending). Decided on a copy: a contest fills its opponent's numbers into the action."""
    platform = PLATFORM_ACTIONS.get(action["type"])
    if platform is None:
        return rules_readers(campaign, membership, copy.deepcopy(action), character)[0]
    if platform.readers is None:
        return None
    return platform.readers(campaign, membership, copy.deepcopy(action), character)


def _store_pending(campaign: Campaign, membership: Membership, client_id: str, action: dict, signature: dict,
                   body_hash: str, source: fairdice.CommandDice, character: Character | None,
                   readers: Readers | None) -> CommandResult:
    """Step 1 of a witnessed command: its signed envelope as a ``roll_pending`` event naming the members
    online now (its witnesses), no dice. It is read by exactly its decision's readers
    (:func:`command_readers`): a hidden one is sealed like its decision will be, and a public
    ``witness_call`` tells the witnesses which sealed event to contribute to."""
    assert readers is not None, f"the platform action {action['type']} draws dice but declares no readers"
    user = membership.user
    online = witnessing.online_members(campaign.id)
    witnesses = sorted(Membership.objects.filter(campaign=campaign, user__username__in=online)
                       .exclude(user=user).values_list("user_id", flat=True)) if online else []
    visibility = readers.visibility
    drafts = [Draft(witnessed.PENDING, naming_readers({"witnesses": witnesses}, readers.shared), 1,
                    character, visibility)]
    if visibility != VISIBILITY_PUBLIC:
        drafts.append(Draft(witnessed.CALL, {"witnesses": witnesses}, 1, None, VISIBILITY_PUBLIC))
    drafts = _record_dice_and_seal(drafts, client_id, action, [], source, Viewer.of(membership))
    drafts = _with_signature(drafts, campaign.last_seq + 1, client_id, action, signature, {})
    command = Command(campaign=campaign, actor=user, client_id=client_id, body_hash=body_hash,
                      created_at=timezone.now())
    events = record(campaign, drafts, actor=user, command=command)
    publish_on_commit(campaign.id, events)
    row = WitnessedRoll.objects.create(
        campaign=campaign, pending_seq=events[0].seq, witnesses=witnesses,
        due_at=timezone.now() + timedelta(seconds=settings.WITNESS_COMMIT_SECONDS))
    if not witnesses:  # nobody to wait for: decided at once, marked unwitnessed
        events += _resolve(campaign, row)
    else:
        _set_due(campaign)
        _schedule(campaign, row, settings.WITNESS_COMMIT_SECONDS)
    return CommandResult(events, False, _head(campaign))


def _schedule(campaign: Campaign, row: WitnessedRoll, seconds: float) -> None:
    """This process's timer for the roll's phase, once the transaction that began it commits."""
    transaction.on_commit(lambda: witnessing.schedule(resolve_overdue, campaign.id, row.pending_seq, seconds))


def _set_due(campaign: Campaign) -> None:
    """Keep the campaign row's earliest pending deadline (read by the next command's lock)."""
    due = (WitnessedRoll.objects.filter(campaign=campaign, resolved_seq__isnull=True)
           .aggregate(due=Min("due_at"))["due"])
    if due != campaign.witness_due:
        Campaign.objects.filter(pk=campaign.pk).update(witness_due=due)
        campaign.witness_due = due


def _sweep(campaign: Campaign, everything: bool = False) -> bool:
    """Resolve the campaign's overdue pending rolls (every pending one when ``everything``: before its
    session ends); whether any was. The campaign is locked."""
    if campaign.witness_due is None or (not everything and campaign.witness_due > timezone.now()):
        return False
    rows = WitnessedRoll.objects.filter(campaign=campaign, resolved_seq__isnull=True)
    if not everything:
        rows = rows.filter(due_at__lte=timezone.now())
    for row in rows.order_by("pending_seq"):
        if row.closed_seq is None:  # its commitments' time is up: closed with those that came
            _close(campaign, row)
            if not everything:
                continue  # the reveals' time starts now
        _resolve(campaign, row)
    _set_due(campaign)
    return True


def resolve_overdue(campaign_id: int) -> None:
    """The timer's way in (campaign/actions/witnesses.py): lock the campaign, resolve what is overdue."""
    with command_transaction():
        _sweep(lock_campaign(campaign_id))


def _close_if_complete(campaign: Campaign, pending_seq: int) -> None:
    """After a commitment: close its roll's commitments if every listed witness has now committed (as the
    transaction's ledger knows: campaign/actions/witnesses.py)."""
    known = witnessing.ledger(campaign)
    row = known.row(pending_seq)
    if row is None or row.resolved_seq is not None or row.closed_seq is not None:
        return
    if set(known.committed(pending_seq)) >= set(row.witnesses):
        _close(campaign, row, sorted(known.committed(pending_seq).values()))
        _set_due(campaign)


def _close(campaign: Campaign, row: WitnessedRoll, committed: list[tuple[int, int, str]] | None = None) -> list[Event]:
    """Close a pending roll's commitments, exactly once: a public ``commitments_closed`` naming every
    commitment stored since the pending event (``committed``: as the transaction's ledger knows them),
    after which no commitment is taken and the witnesses reveal. Stored as a later event of the roll's
    command, by its sender, like its call, and carrying nothing of a sealed roll but its seq. With no
    commitment, nothing can be revealed: the roll is decided at once. ``campaign`` is locked."""
    if WitnessedRoll.objects.filter(pk=row.pk, resolved_seq__isnull=True, closed_seq__isnull=True).update(
            closed_seq=campaign.last_seq + 1, due_at=timezone.now() + timedelta(seconds=settings.WITNESS_REVEAL_SECONDS)
    ) != 1:
        return []  # closed already (by the last commitment, a timer or a sweep)
    row.closed_seq = campaign.last_seq + 1
    pending = Event.objects.select_related("actor", "command").get(campaign=campaign, seq=row.pending_seq)
    if committed is None:
        committed = [(e.seq, e.actor_id, None) for e in Event.objects.filter(
            campaign=campaign, type=witnessed.COMMITTED, seq__gt=pending.seq, payload__roll=pending.seq
        ).order_by("seq")]
    close = Draft(witnessed.CLOSED, {"command_of": pending.seq, "committed": [seq for seq, _, _ in committed]}, 1,
                  None, VISIBILITY_PUBLIC)
    events = record(campaign, [close], actor=pending.actor, command=pending.command)
    publish_on_commit(campaign.id, events)
    if not committed:
        events += _resolve(campaign, row)
    else:
        _schedule(campaign, row, settings.WITNESS_REVEAL_SECONDS)
    return events


def _resolve_if_complete(campaign: Campaign, pending_seq: int) -> None:
    """After a reveal: resolve its roll if every witness its close holds has now revealed (as the
    transaction's ledger knows: campaign/actions/witnesses.py)."""
    known = witnessing.ledger(campaign)
    row = known.row(pending_seq)
    if row is None or row.resolved_seq is not None or row.closed_seq is None:
        return
    if known.came(pending_seq) >= set(known.closed_set(pending_seq)):
        decision = _resolve(campaign, row, known.contributions(pending_seq))
        if decision:
            row.resolved_seq = decision[0].seq
        _set_due(campaign)


def _resolve(campaign: Campaign, row: WitnessedRoll, contributions: list[tuple[int, int, str]] | None = None
             ) -> list[Event]:
    """The last step of a witnessed command, exactly once per pending roll: decide it with dice from the
    seed, its command id and the digest of the reveals stored since it (witnessed.digest; each checked
    against the commitment its close holds when it was stored), and store
    the decision as its later events (``command_of`` the pending event), the first naming the
    contributions (``witnessed_by``) and their digest. A decision the rules now refuse (the sheet moved
    meanwhile) is stored as ``refused``: the replay refuses the same way. ``campaign`` is locked; its
    stream fields move to the new head."""
    if WitnessedRoll.objects.filter(pk=row.pk, resolved_seq__isnull=True).update(
            resolved_seq=campaign.last_seq + 1) != 1:
        return []  # resolved already (by the last reveal, a timer or a sweep)
    pending = Event.objects.select_related("actor", "character", "command").get(campaign=campaign,
                                                                                 seq=row.pending_seq)
    client_id, action = pending.payload["command_id"], pending.payload["action"]
    if contributions is None:  # else as the transaction's ledger knows them (witnesses.Ledger)
        contributions = [(e.seq, e.actor_id, e.payload["action"]["entropy"]) for e in Event.objects.filter(
            campaign=campaign, type=witnessed.CONTRIBUTION, seq__gt=pending.seq, payload__roll=pending.seq
        ).order_by("seq")]
    digest = witnessed.digest(contributions)
    membership = Membership.objects.select_related("user", "campaign").filter(
        campaign=campaign, user_id=pending.actor_id).first()
    decided = copy.deepcopy(action)
    source = recorder = None
    try:
        if membership is None:
            raise Forbidden("The member who sent this roll has left the campaign.")
        stream = lock_stream(membership, client_id, pending.character_id)  # held already: re-reads, waits for nothing
        locked = stream.campaign
        membership = access_membership_now(stream)
        source = dice_module.dice_for(locked, pending.actor_id, witnessed.dice_id(client_id, digest), seed=stream.seed,
                                      scheme=witnessed.DICE_SCHEME)
        recorder = source.dice
        with transaction.atomic():  # a refusal undoes what the decision wrote
            drafts = _decide(locked, membership, decided, recorder, stream.character)
            if not drafts:
                raise Refused("That action changes nothing, so nothing was stored.")
            drafts = hidden.one_event(drafts)
            drafts = _link_request(locked, action, drafts, Viewer.of(membership))
    except ActionError as e:
        locked = lock_campaign(campaign.id)
        # Read by the pending event's readers (command_readers, when it was stored): a refusal now names
        # no more than they read.
        refusal = naming_readers({"action": action.get("type"), "code": e.code, "message": e.message},
                                 pending.payload.get("shared_with", []))
        drafts = [Draft(hidden.REFUSED, refusal, 1, pending.character, pending.visibility)]
    first = {**drafts[0].payload, "dice_log": recorder.log if recorder else [], "dice_scheme": witnessed.DICE_SCHEME,
             "witnessed_by": [seq for seq, _, _ in contributions], "witness_digest": digest,
             "command_of": pending.seq}
    if not contributions:
        first["unwitnessed"] = True
    filled = {k: v for k, v in decided.items() if k not in action}
    if filled:
        first["filled"] = filled
    drafts = [replace(drafts[0], payload=first),
              *(replace(d, payload={**d.payload, "command_of": pending.seq}) for d in drafts[1:])]
    if source is not None and membership is not None:
        drafts = _record_dice_and_seal(drafts, client_id, action, [], source, Viewer.of(membership))
    else:
        drafts = [replace(d, payload={**d.payload, "nonce": fairdice.drawn_nonce(), "nonce_drawn": True})
                  if d.visibility != VISIBILITY_PUBLIC else d for d in drafts]
    events = record(locked, drafts, actor=pending.actor, command=pending.command)
    WitnessedRoll.objects.filter(pk=row.pk).update(resolved_seq=events[0].seq)
    publish_on_commit(campaign.id, events)
    for column in (*STREAM_COLUMNS, "witness_due"):
        setattr(campaign, column, getattr(locked, column))
    return events
