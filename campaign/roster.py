"""The rows a campaign's log names, folded from the log: a projection like the characters' states.

Every column below is what the log's events say, written by the record path from the events it
records (never by a ``decide_*`` on the side) and restored by ``manage.py rebuild_projections``:

| row | columns | from |
|---|---|---|
| the campaign | ``name``, ``system`` | ``campaign_created``, ``campaign_renamed`` |
| | ``witnessed_rolls`` | ``campaign_created``, ``campaign_configured`` |
| | ``signed_from`` | ``campaign_created`` with ``signed_commands``, ``signed_commands_required``, or the first ``session_started`` of dice scheme v3 |
| | the stream: ``last_seq``, ``head_hash``, the session and scene counters | the last event; ``session_*``, ``scene_*`` |
| a membership | who, and the role | ``campaign_created`` (its actor is the GM), ``member_joined``, ``member_role_changed``, ``member_removed`` |
| a character | ``name``, ``owner``, ``npc``, ``shown`` | ``character_created``, ``npc_shown`` |

The campaign's columns ride on the stream head's ``UPDATE`` (:func:`fold_campaign`, at no extra round
trip); the few events that change a membership or a character write their row with one statement each
(:func:`apply`), in the transaction that stores them. What is not here is not the log's: the invite
link and the dice seeds are secrets, the command rows and checkpoints are records kept beside the log.

A member is named in these events by ``user_id`` (and ``owner_id`` for a character's owner). An event
stored before they carried the id names her by username only. Which member a membership event names is
read once, for the rebuild and every verifier alike: :class:`Roster` folds the log through
rules/senders.py's :class:`~rules.senders.Seats` and keeps the member each event names, in the role it
gives her. That reading: the member who joined by the invite link is the event's actor; otherwise the
name an earlier event of the log (or its actor) gave her; where a verifier would wait for a later
event's actor called so, the rebuild asks for the account called so now (``Seats(account=...)``), the
same member. A character's owner named by username is read by the same names. A name no account has
any more (an account deleted since, renamed to its pseudonym) can't be read: the rows it would decide
are left as they stand, and the rebuild says so (:attr:`Roster.unread`). The owner a
``character_created`` names (``owner_id``) is taken as it stands: whether a signed command could give
it is the verifiers' question, not the rebuild's. The dates of a row (``joined_at``, ``created_at``) are
its event's time when the rebuild makes the row again, and are otherwise left alone.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from django.contrib.auth import get_user_model

from rules.senders import Seats

from .member_keys import SEEN_FIELDS, SIGNING_REQUIRED, as_seen, signs_from
from .models import (GENESIS_HASH, ROLE_CHOICES, ROLE_GM, SHOWN_CHOICES, SHOWN_FULL, Campaign, Character, Event,
                     Membership)

ROLES = frozenset(dict(ROLE_CHOICES))
SHOWN = frozenset(dict(SHOWN_CHOICES))

CAMPAIGN_COLUMNS = ("name", "system", "signed_from", "witnessed_rolls")
STREAM_COLUMNS = ("last_seq", "head_hash", "session_count", "current_session", "scene_count", "current_scene")
SESSION_EVENTS = frozenset({"session_started", "session_ended", "scene_started", "scene_ended"})
# The events that change a membership or a character's row (a hidden command's ``bundle`` holds
# rules events only, never one of these: campaign.visibility.one_event bundles what the rules decided).
ROW_EVENTS = frozenset({"campaign_created", "member_joined", "member_removed", "member_role_changed",
                        "character_created", "npc_shown"})
FOLDED = ROW_EVENTS | SESSION_EVENTS | {"campaign_renamed", "campaign_configured", SIGNING_REQUIRED}
WITNESSED = "witnessed_rolls"


# --- the campaign row: folded in memory, written with the stream head ---------------------------------

def open_session_or_scene(stream, kind: str) -> None:
    """A start event is stamped with the session or scene it opens..."""
    if kind == "session_started":
        stream.session_count += 1
        stream.current_session = stream.session_count
    elif kind == "scene_started":
        stream.scene_count += 1
        stream.current_scene = stream.scene_count


def close_session_or_scene(stream, kind: str) -> None:
    """...and an end event with the one it closes; what follows carries none."""
    if kind == "session_ended":
        stream.current_session = None
    elif kind == "scene_ended":
        stream.current_scene = None


def fold_campaign(campaign, event) -> None:
    """The campaign's own columns (:data:`CAMPAIGN_COLUMNS`) after ``event``, in place."""
    payload = event.payload
    if event.type == "campaign_created":
        campaign.name = payload.get("name", campaign.name)
        campaign.system = payload.get("system", campaign.system)
        campaign.witnessed_rolls = payload.get(WITNESSED, "off")
    elif event.type == "campaign_renamed":
        campaign.name = payload.get("name", campaign.name)
    elif event.type == "campaign_configured" and WITNESSED in payload:
        campaign.witnessed_rolls = payload[WITNESSED]
    if campaign.signed_from is None:
        campaign.signed_from = signs_from(event)


# --- memberships and characters: one statement per event that changes one -----------------------------

def apply(campaign: Campaign, events) -> None:
    """Write the membership and character rows ``events`` change (chained, about to be stored).

    A new row is inserted unless it is there already (``import_log`` makes the rows from its header
    first: they stand, as the header has them, dates included). An event without the
    member's id (stored before events carried it: only ``import_log`` records such) is left to
    :func:`rebuild`, which reads it as the module says."""
    for event in events:
        if event.type in ROW_EVENTS:
            _WRITES[event.type](campaign, event)


def _seat(campaign_id: int, user_id: int, role: str) -> None:
    if role not in ROLES:
        raise ValueError(f"no role {role!r:.20}")
    Membership.objects.bulk_create([Membership(campaign_id=campaign_id, user_id=user_id, role=role)],
                                   ignore_conflicts=True)


def _created(campaign: Campaign, event) -> None:
    if event.actor_id is not None:
        _seat(campaign.id, event.actor_id, ROLE_GM)


def _joined(campaign: Campaign, event) -> None:
    if event.payload.get("user_id") is not None:
        _seat(campaign.id, event.payload["user_id"], event.payload["role"])


def _removed(campaign: Campaign, event) -> None:
    if event.payload.get("user_id") is not None:
        Membership.objects.filter(campaign_id=campaign.id, user_id=event.payload["user_id"]).delete()


def _role_changed(campaign: Campaign, event) -> None:
    if event.payload.get("user_id") is not None:
        if event.payload.get("role") not in ROLES:
            raise ValueError(f"no role {event.payload.get('role')!r:.20}")
        Membership.objects.filter(campaign_id=campaign.id, user_id=event.payload["user_id"]).update(
            role=event.payload["role"])


def _character_created(campaign: Campaign, event) -> None:
    payload = event.payload
    if "owner_id" not in payload:
        return
    row = Character(id=event.character_id, campaign_id=campaign.id, **_character_fields(payload, payload["owner_id"]))
    Character.objects.bulk_create([row], ignore_conflicts=True)
    made = event.character if Event.character.is_cached(event) else None
    if made is not None and made._state.adding:  # the instance the decision made: it is stored now
        made.created_at, made._state.adding = row.created_at, False


def _shown(campaign: Campaign, event) -> None:
    if event.payload.get("shown") not in SHOWN:
        raise ValueError(f"no way of showing an NPC {event.payload.get('shown')!r:.20}")
    Character.objects.filter(pk=event.character_id).update(shown=event.payload["shown"])


_WRITES = {"campaign_created": _created, "member_joined": _joined, "member_removed": _removed,
           "member_role_changed": _role_changed, "character_created": _character_created, "npc_shown": _shown}


def _character_fields(payload: dict, owner_id: int | None) -> dict:
    if payload.get("shown", SHOWN_FULL) not in SHOWN or not isinstance(payload.get("name"), str):
        raise ValueError("a character_created no server wrote")
    return {"name": payload["name"], "owner_id": owner_id, "npc": payload.get("npc") is True,
            "shown": payload.get("shown", SHOWN_FULL)}


# --- the whole log, folded: what rebuild_projections compares and restores ----------------------------

@dataclass
class Roster:
    """The rows as the log says they are (see the module's table)."""

    name: str | None = None
    system: str | None = None
    signed_from: int | None = None
    witnessed_rolls: str = "off"
    last_seq: int = 0
    head_hash: str = GENESIS_HASH
    session_count: int = 0
    current_session: int | None = None
    scene_count: int = 0
    current_scene: int | None = None
    members: dict[int, str] = field(default_factory=dict)  # user id -> role
    joined: dict[int, datetime] = field(default_factory=dict)  # user id -> when she (last) joined
    characters: dict[int, dict] = field(default_factory=dict)  # id -> name, owner_id, npc, shown
    created: dict[int, datetime] = field(default_factory=dict)
    unknown_owners: set[int] = field(default_factory=set)  # characters whose owner can't be read
    unread: list[str] = field(default_factory=list)  # events naming someone the log can't say who is
    members_unread: bool = False  # a membership event among them: the log can't say who all the members are
    # Who a membership event names, as every verifier reads it, with this host's accounts where the log
    # ties a username to no id (rules/senders.py).
    seats: Seats = field(init=False, repr=False, compare=False)
    _accounts: dict[str, int | None] = field(default_factory=dict, repr=False, compare=False)

    def __post_init__(self):
        self.seats = Seats(account=self.account)

    def account(self, username: str) -> int | None:
        """The id of the account called ``username`` now (None: no account is)."""
        if username not in self._accounts:
            self._accounts[username] = (get_user_model().objects.filter(username=username)
                                        .values_list("pk", flat=True).first())
        return self._accounts[username]

    def fold(self, event) -> None:
        """Fold one stored event (loaded as :func:`fold` loads them: with its actor's username)."""
        open_session_or_scene(self, event.type)
        close_session_or_scene(self, event.type)
        fold_campaign(self, event)
        change = self.seats.see(as_seen(event)).change
        payload, kind = event.payload, event.type
        if kind == "campaign_created" and event.actor_id is not None:
            self.members[event.actor_id], self.joined[event.actor_id] = ROLE_GM, event.created_at
        elif change is not None:
            if change.who is None:
                self.members_unread = True
                self.unread.append(f"#{event.seq} {kind} names {str(payload.get('username'))[:40]!r}, "
                                   "whom no account is called now")
            elif change.role is None:
                self.members.pop(change.who, None)
                self.joined.pop(change.who, None)
            else:
                self.members[change.who] = change.role
                if kind == "member_joined":
                    self.joined[change.who] = event.created_at
        elif kind == "character_created" and event.character_id is not None:
            owner = payload.get("owner_id")
            if owner is None and "owner_id" not in payload:
                owner = self.seats.named(payload.get("owner"))
                if owner is None:
                    self.unknown_owners.add(event.character_id)
                    self.unread.append(f"#{event.seq} character_created names the owner "
                                       f"{str(payload.get('owner'))[:40]!r}, whom no account is called now")
            self.characters[event.character_id] = _character_fields(payload, owner)
            self.created[event.character_id] = event.created_at
        elif kind == "npc_shown" and event.character_id in self.characters:
            self.characters[event.character_id]["shown"] = payload["shown"]


def fold(campaign: Campaign) -> Roster:
    """The rows as the campaign's whole log says they are (read under its lock)."""
    roster = Roster()
    events = (Event.objects.filter(campaign=campaign, type__in=FOLDED).order_by("seq").select_related("actor")
              .only(*SEEN_FIELDS, "created_at"))
    for event in events.iterator(chunk_size=2000):
        roster.fold(event)
    head = Event.objects.filter(campaign=campaign).order_by("-seq").values_list("seq", "hash").first()
    if head is not None:
        roster.last_seq, roster.head_hash = head
    return roster


def rebuild(campaign: Campaign, check: bool = False) -> tuple[list[str], list[str]]:
    """Make the campaign's rows what its log says (``check``: compare only, write nothing).

    Returns ``(differing, unread)``: what differed from the log, and the events whose member the log
    can't name (their rows are left as they stand). Call with the campaign's lock held."""
    roster = fold(campaign)
    differing: list[str] = []
    changes = {column: getattr(roster, column) for column in CAMPAIGN_COLUMNS + STREAM_COLUMNS
               if getattr(campaign, column) != getattr(roster, column)
               and not (column in ("name", "system") and getattr(roster, column) is None)}
    differing += [f"the campaign's {column}" for column in changes]
    if changes and not check:
        Campaign.objects.filter(pk=campaign.pk).update(**changes)
        for column, value in changes.items():
            setattr(campaign, column, value)
    differing += _members(campaign, roster, check)
    differing += _characters(campaign, roster, check)
    return differing, roster.unread


def _members(campaign: Campaign, roster: Roster, check: bool) -> list[str]:
    rows = {m.user_id: m for m in Membership.objects.filter(campaign=campaign).select_related("user")}
    accounts = dict(get_user_model().objects.filter(pk__in=set(rows) | set(roster.members))
                    .values_list("pk", "username"))
    differing = []
    for user_id, role in roster.members.items():
        row = rows.get(user_id)
        if row is not None and row.role == role:
            continue
        differing.append(f"{accounts.get(user_id, user_id)}'s membership")
        if check:
            continue
        if row is None:
            made = Membership.objects.create(campaign=campaign, user_id=user_id, role=role)
            Membership.objects.filter(pk=made.pk).update(joined_at=roster.joined[user_id])
        else:
            Membership.objects.filter(pk=row.pk).update(role=role)
    # A member the log never seated (or removed) has no row, unless the log names someone it can't read.
    if not roster.members_unread:
        for user_id, row in rows.items():
            if user_id not in roster.members:
                differing.append(f"{accounts.get(user_id, user_id)}'s membership")
                if not check:
                    row.delete()
    return differing


def _characters(campaign: Campaign, roster: Roster, check: bool) -> list[str]:
    rows = {c.id: c for c in Character.objects.filter(campaign=campaign)}
    differing = []
    for character_id, fields in roster.characters.items():
        if character_id in roster.unknown_owners:
            fields = {k: v for k, v in fields.items() if k != "owner_id"}
        row = rows.get(character_id)
        if row is not None and all(getattr(row, k) == v for k, v in fields.items()):
            continue
        differing.append(f"{fields['name']} (id {character_id})'s row")
        if check:
            continue
        if row is None:
            Character.objects.create(id=character_id, campaign=campaign, **fields)
            Character.objects.filter(pk=character_id).update(created_at=roster.created[character_id])
        else:
            Character.objects.filter(pk=character_id).update(**fields)
    return differing
