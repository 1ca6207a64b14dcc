"""Campaigns, their members and characters, and the campaign event log.

The log (:class:`Event`) is the product: the rows that name things (campaign,
membership, character: campaign/roster.py) and the characters' states
(:class:`CharacterProjection`) are projections of it, rebuilt from the log
alone; the rest (invite links, dice seeds, command rows, checkpoints, tokens)
is kept beside it.
"""

from __future__ import annotations

import hashlib
from datetime import timedelta
import secrets

from django.conf import settings
from django.db import models
from django.utils import timezone

from rules import get_system, system_choices

ROLE_GM = "gm"
ROLE_PLAYER = "player"
ROLE_SPECTATOR = "spectator"
ROLE_CHOICES = [(ROLE_GM, "GM"), (ROLE_PLAYER, "Player"), (ROLE_SPECTATOR, "Spectator")]

VISIBILITY_PUBLIC = "public"
VISIBILITY_GM = "gm"
VISIBILITY_SECRET = "secret"
# A whisper's own: the sender, the members its payload names ("to") and the GM. Never chosen
# in an action's "visibility"; a message with "to" gets it (campaign/actions/messages.py).
VISIBILITY_WHISPER = "whisper"
# Legacy: how a GM's decision that read hidden changes some members may see was stored before; read
# by the GM and the members its payload names ("shared_with"). Such decisions are stored "gm" now, with
# the same "shared_with" (campaign/visibility/readers.py): "shared" in the sealed envelope told the table that a
# player reads the decision. Kept so the events stored with it read (and hash) as they were; never
# chosen in an action's "visibility", never stored again. Its words name the badge of such a decision.
VISIBILITY_SHARED = "shared"
# Each visibility's words, said once: what it means (the title of an event's badge and the
# model's choice), its badge on an event in the log and the audit (none when public), and how a
# member picks it when acting (None: never picked). The table reads them from table_data.
VISIBILITY_WORDS = {
    VISIBILITY_PUBLIC: {"means": "Everyone sees the dice", "badge": "", "choose": "Everyone"},
    VISIBILITY_GM: {"means": "Only the GM sees the dice", "badge": "GM only", "choose": "Only the GM"},
    VISIBILITY_SECRET: {"means": "Only the roller and the GM see the dice", "badge": "secret",
                        "choose": "Only me and the GM"},
    VISIBILITY_WHISPER: {"means": "Only the sender, the members whispered to and the GM", "badge": "whisper",
                         "choose": None},
    VISIBILITY_SHARED: {"means": "Only the GM and the members who saw what it was decided on", "badge": "shared",
                        "choose": None},
}
VISIBILITY_CHOICES = [(value, words["means"]) for value, words in VISIBILITY_WORDS.items()]
# What an action may ask for in its "visibility" field.
CHOSEN_VISIBILITIES = (VISIBILITY_PUBLIC, VISIBILITY_GM, VISIBILITY_SECRET)

GENESIS_HASH = "0" * 64


class SystemField(models.CharField):
    """A campaign's rule system, by name. Its choices are the registry's (``rules.SYSTEMS``), read when
    the process starts; migrations see a plain CharField, so a new system needs none."""

    def deconstruct(self):
        name, _path, args, kwargs = super().deconstruct()
        kwargs.pop("choices", None)
        return name, "django.db.models.CharField", args, kwargs


class Campaign(models.Model):
    """A campaign, and the head of its event stream.

    ``last_seq`` and ``head_hash`` are the stream row: every append locks this
    row, so appends to one campaign are serialised and seq order is commit
    order. ``current_session``/``current_scene`` are kept beside them because
    every event is stamped with them inside the same lock.
    """

    slug = models.SlugField(max_length=60, unique=True)
    name = models.CharField(max_length=120)
    system = SystemField(max_length=20, choices=system_choices())
    created_at = models.DateTimeField(auto_now_add=True)
    invite_code = models.CharField(max_length=64, unique=True, default=secrets.token_urlsafe)
    # When the GM last made the invite link; it expires INVITE_DAYS later (see invite_is_valid).
    invite_created_at = models.DateTimeField(default=timezone.now)

    last_seq = models.PositiveBigIntegerField(default=0)
    head_hash = models.CharField(max_length=64, default=GENESIS_HASH)
    session_count = models.PositiveIntegerField(default=0)
    current_session = models.PositiveIntegerField(null=True, blank=True)
    scene_count = models.PositiveIntegerField(default=0)
    current_scene = models.PositiveIntegerField(null=True, blank=True)
    # The seq from which every member's command must carry her signature (docs/fair-dice.md, "Signed
    # commands"); null: a campaign whose members do not sign. Set once, when the campaign is made.
    signed_from = models.PositiveBigIntegerField(null=True, blank=True)
    # Whose dice-drawing commands wait for the other members' tables' entropy (docs/fair-dice.md,
    # "Witnessed rolls"): "off", "gm" or "everyone". The log holds it (``campaign_created``,
    # ``campaign_configured``); this column is its copy for the command pipeline, kept in the same
    # transaction as the event that sets it.
    witnessed_rolls = models.CharField(max_length=10, default="off")
    # The earliest deadline of a pending witnessed roll (null: none pending), read with the stream's
    # lock, so any process resolves an overdue one on the campaign's next command at no extra query.
    witness_due = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return self.name

    def invite_is_valid(self) -> bool:
        days = settings.INVITE_DAYS
        return not days or timezone.now() < self.invite_created_at + timedelta(days=days)

    @property
    def rules(self):
        return get_system(self.system)


class Membership(models.Model):
    campaign = models.ForeignKey(Campaign, on_delete=models.PROTECT, related_name="memberships")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="memberships")
    role = models.CharField(max_length=10, choices=ROLE_CHOICES)
    joined_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["campaign", "user"], name="one_membership_per_user")]

    def __str__(self) -> str:
        return f"{self.user} as {self.role} in {self.campaign}"

    @property
    def is_gm(self) -> bool:
        return self.role == ROLE_GM


SHOWN_HIDDEN = "hidden"
SHOWN_NAME = "name"
SHOWN_FULL = "full"
SHOWN_CHOICES = [(SHOWN_HIDDEN, "Hidden from the players"), (SHOWN_NAME, "Players see the name only"),
                 (SHOWN_FULL, "Players see everything")]


def new_character_id() -> int:
    """A character's id, drawn at random: ids that counted up told a player, from the gap between two
    ids she reads, that a character she may not know of (a hidden NPC) was made between them, and so
    which sealed event made it (docs/hidden-information.md). Below 2**53, so every JSON reader
    reads it exactly; a clash, one in billions even with millions of characters, is an error, not a
    silent reuse (the primary key)."""
    return secrets.randbelow(2**53 - 1) + 1


class Character(models.Model):
    """A character's identity. Its state lives in :class:`CharacterProjection`.

    An NPC (``npc``) is a character the GM owns; ``shown`` is what the players
    may see of it (campaign/actions/npcs.py). Both mirror the log
    (``character_created``, ``npc_shown``), as ``name`` does."""

    id = models.BigIntegerField(primary_key=True, default=new_character_id, editable=False)
    campaign = models.ForeignKey(Campaign, on_delete=models.PROTECT, related_name="characters")
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, null=True, blank=True)
    name = models.CharField(max_length=80)
    created_at = models.DateTimeField(auto_now_add=True)
    npc = models.BooleanField(default=False)
    shown = models.CharField(max_length=10, choices=SHOWN_CHOICES, default=SHOWN_FULL)

    class Meta:
        ordering = ["created_at", "id"]  # the order they were made in (ids are random)

    def __str__(self) -> str:
        return self.name


class ImmutableError(Exception):
    """Raised on any attempt to change or remove a stored event."""


class EventQuerySet(models.QuerySet):
    def update(self, **kwargs):
        raise ImmutableError("Events are immutable: correct a mistake with a new event.")

    def delete(self):
        raise ImmutableError("Events are immutable: correct a mistake with a new event.")

    _raw_delete = delete
    bulk_update = update


class Command(models.Model):
    """A client's command, remembered forever so a retry never acts twice.

    The unique constraint, not a cache, is what makes commands idempotent: a
    retry a year later still finds the original.
    """

    campaign = models.ForeignKey(Campaign, on_delete=models.PROTECT)
    actor = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT)
    client_id = models.CharField(max_length=100)
    body_hash = models.CharField(max_length=64)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["campaign", "actor", "client_id"], name="one_command_per_client_id")
        ]


class WitnessedRoll(models.Model):
    """A witnessed command waiting for its witnesses (docs/fair-dice.md, "Witnessed rolls").

    ``pending_seq`` is its ``roll_pending`` event; ``closed_seq`` its ``commitments_closed`` (the
    witnesses' commitments close before any reveals), ``resolved_seq`` the first event of its
    resolution, each set exactly once (an ``UPDATE ... WHERE ... IS NULL`` under the stream's lock): a
    timer, a sweep and the last commitment or reveal can all try, one closes, one resolves. ``due_at``:
    when the phase it is in (commitments, then reveals) runs out."""

    campaign = models.ForeignKey(Campaign, on_delete=models.PROTECT)
    pending_seq = models.PositiveBigIntegerField()
    witnesses = models.JSONField(default=list)  # user ids, as the pending event lists them
    due_at = models.DateTimeField()
    closed_seq = models.PositiveBigIntegerField(null=True, blank=True)
    resolved_seq = models.PositiveBigIntegerField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["campaign", "pending_seq"], name="one_resolution_per_pending_roll")
        ]
        indexes = [models.Index(fields=["campaign", "due_at"], name="witnessed_due",
                                condition=models.Q(resolved_seq__isnull=True))]


class Event(models.Model):
    """One immutable entry of a campaign's log.

    ``seq`` runs 1..N without gaps per campaign. ``hash`` is SHA-256 over
    ``prev_hash`` and a canonical encoding (``format``) of the other fields (see
    :func:`campaign.eventlog.event_hash`), so any edit behind the server's back
    breaks the chain. Model, queryset and database triggers all refuse
    UPDATE and DELETE.
    """

    # No index of its own: every index below starts with the campaign. A lone one looked
    # as cheap to a planner with stale statistics as (campaign, seq), and it then read
    # a whole 100k log to find one block of it (docs/performance.md).
    campaign = models.ForeignKey(Campaign, on_delete=models.PROTECT, related_name="events", db_index=False)
    seq = models.PositiveBigIntegerField()
    type = models.CharField(max_length=40)
    version = models.PositiveSmallIntegerField(default=1)
    payload = models.JSONField(default=dict)
    actor = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, null=True, blank=True)
    character = models.ForeignKey(Character, on_delete=models.PROTECT, null=True, blank=True)
    session = models.PositiveIntegerField(null=True, blank=True)
    scene = models.PositiveIntegerField(null=True, blank=True)
    visibility = models.CharField(max_length=10, choices=VISIBILITY_CHOICES, default=VISIBILITY_PUBLIC)
    command = models.ForeignKey(Command, on_delete=models.PROTECT, null=True, blank=True, related_name="events")
    created_at = models.DateTimeField()
    prev_hash = models.CharField(max_length=64)
    hash = models.CharField(max_length=64)
    # Which encoding ``hash`` was made with (campaign.eventlog.event_hash): 1 for
    # events stored before RFC 8785 hashing, 2 for every new append.
    format = models.PositiveSmallIntegerField(default=1)

    objects = EventQuerySet.as_manager()

    class Meta:
        ordering = ["campaign", "seq"]
        constraints = [models.UniqueConstraint(fields=["campaign", "seq"], name="gap_free_seq_per_campaign")]
        indexes = [
            models.Index(fields=["campaign", "type", "seq"]),
            models.Index(fields=["campaign", "character", "seq"]),
            # The audit page's filters, each ending in seq so a page reads in order.
            models.Index(fields=["campaign", "session", "seq"], name="campaign_event_audit_session"),
            models.Index(fields=["campaign", "scene", "seq"], name="campaign_event_audit_scene"),
            models.Index(fields=["campaign", "actor", "seq"], name="campaign_event_audit_actor"),
            # Hidden events of a campaign: what a sheet must not give away (campaign.visibility.visible_fold,
            # campaign.sheets) and what a command's lock asks about (campaign.eventlog.lock_stream). By
            # campaign first: a character's hidden events include those naming it among a contest's
            # sides, which no index finds, so they are looked for among its campaign's hidden events.
            models.Index(fields=["campaign", "character", "seq"], condition=~models.Q(visibility="public"),
                         name="campaign_event_hidden_by_camp"),
        ]

    def __str__(self) -> str:
        return f"{self.campaign_id}#{self.seq} {self.type}"

    def save(self, *args, **kwargs):
        if not self._state.adding:
            raise ImmutableError("Events are immutable: correct a mistake with a new event.")
        kwargs["force_insert"] = True
        super().save(*args, **kwargs)

    def delete(self, *args, **kwargs):
        raise ImmutableError("Events are immutable: correct a mistake with a new event.")


class CharacterProjection(models.Model):
    """A character's current state, folded from the log up to ``last_seq``.

    Updated in the same transaction as each append, and rebuildable at any
    time with ``manage.py rebuild_projections``.
    """

    character = models.OneToOneField(Character, on_delete=models.PROTECT, primary_key=True, related_name="projection")
    state = models.JSONField(default=dict)
    last_seq = models.PositiveBigIntegerField(default=0)


class CharacterSnapshot(models.Model):
    """A character's state as of ``seq``: a cache derived from the log, never its source.

    The state right after event ``seq``, counting the voids appended up to
    ``seq`` and leaving out the events in the skip set a caller named
    (``skipped`` identifies that set's members up to ``seq``; "" for none).
    That is a fact of the log's first ``seq`` events, so a snapshot never
    goes stale: a later void or skip set only decides which snapshots a fold
    may start from (``campaign.projections``). ``rebuild_projections`` drops
    and rewrites them all.
    """

    character = models.ForeignKey(Character, on_delete=models.CASCADE, related_name="snapshots")
    seq = models.PositiveBigIntegerField()
    skipped = models.CharField(max_length=64, blank=True, default="")
    state = models.JSONField()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["character", "seq", "skipped"], name="one_snapshot_per_seq")]


def new_token_key() -> str:
    return secrets.token_urlsafe(32)


def token_digest(key: str) -> str:
    """What is stored of a token: its SHA-256. A token is 256 random bits, so a fast
    hash is enough; a stolen database then holds no usable token."""
    return hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()


class ApiTokenManager(models.Manager):
    def create(self, **kwargs):
        """A new token; its key is on the returned object only (``token.key``), shown once."""
        key = new_token_key()
        token = super().create(digest=token_digest(key), prefix=key[:6], **kwargs)
        token.key = key
        return token


class ApiToken(models.Model):
    """A bearer token for scripts and bots (``Authorization: Bearer <key>``).

    Only the key's digest is stored; the key is shown once, when it is made.
    """

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens")
    name = models.CharField(max_length=60, blank=True, default="")
    digest = models.CharField(max_length=64, unique=True)
    prefix = models.CharField(max_length=8, blank=True, default="")  # the key's start, to tell tokens apart
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)

    objects = ApiTokenManager()

    def __str__(self) -> str:
        return f"token {self.name or self.prefix} for {self.user}"


class DiceSeed(models.Model):
    """The secret seed behind every die of one play session (see docs/fair-dice.md).

    Its SHA-256 is published in the session's start event and the seed itself
    in the end event; until then only the server knows it.
    """

    campaign = models.ForeignKey(Campaign, on_delete=models.PROTECT, related_name="dice_seeds")
    session = models.PositiveIntegerField()
    seed = models.CharField(max_length=64)  # 32 random bytes, hex
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["campaign", "session"], name="one_seed_per_session")]


class Checkpoint(models.Model):
    """The server's signed statement "this campaign's log had this head" (docs/fair-dice.md).

    Made at every session end and whenever a member asks. A member keeps the
    JSON as a receipt: a log that later does not extend it (truncated,
    reordered, rewritten) is caught by ``verify_log --receipt`` or the
    standalone verifier, and the signature shows the server issued it.
    """

    campaign = models.ForeignKey(Campaign, on_delete=models.PROTECT, related_name="checkpoints")
    seq = models.PositiveBigIntegerField()
    hash = models.CharField(max_length=64)
    created_at = models.CharField(max_length=40)  # the exact ISO string that was signed
    signature = models.CharField(max_length=100)  # base64 of the 64-byte Ed25519 signature

    class Meta:
        ordering = ["campaign", "seq", "id"]
