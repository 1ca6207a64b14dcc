"""``manage.py import_log FILE``: load a campaign export into an empty database.

FILE (or ``-`` for stdin) is a JSON Lines export with a header line, as
``manage.py export_log SLUG --header`` writes it (see docs/audit.md). The
import recreates the users (with unusable passwords: they set one with
``changepassword`` or a reset), the campaign, its members, characters, dice
seeds and every event exactly, with the ids the hash chain covers (campaign,
actors, characters). The events go through the log's one record path
(``campaign.eventlog.record``, in batches): each must be exactly the next event of
the chain (seq, session and scene, link and hash are checked there), and the
stream's counters and the characters' projections move as they did when the
events were first recorded. Then the chain is read back and verified. It all
happens in one transaction: on any problem nothing is imported.

A file is hostile until checked: every field is checked for its type and range
before it reaches the database (roles, visibilities, usernames as Django's
validator wants them, 64-hex dice seeds...), and every problem ends in one
``CommandError`` line naming it, never a traceback. A chain whose hashes were
all recomputed still links, so ``--expect-head SEQ:HASH`` (a head known from
elsewhere: a published checkpoint, ``verify_log`` run before the export)
refuses any file whose event SEQ does not have that hash.
"""

from __future__ import annotations

import json
import re
import sys
from datetime import datetime

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError
from django.core.management.color import no_style
from django.db import DatabaseError, connection, transaction
from django.db.migrations.executor import MigrationExecutor

from campaign import projections, roster
from campaign.accounts import is_pseudonym
from campaign.actions import ActionError, check_name
from campaign.eventlog import FORMAT_1, FORMAT_2, ChainBroken, lock_campaign, record, verify_chain
from campaign.exports import FORMAT, FORMAT_VERSION, is_header
from campaign.models import (
    GENESIS_HASH,
    ROLE_CHOICES,
    SHOWN_CHOICES,
    SHOWN_FULL,
    VISIBILITY_CHOICES,
    Campaign,
    Character,
    CharacterProjection,
    Command as CommandRecord,
    DiceSeed,
    Event,
    Membership,
)
from rules import system_choices

BATCH = 1000  # at most; see _batch_size
EVENT_KEYS = ("seq", "type", "version", "payload", "actor_id", "character", "session", "scene", "visibility",
              "created_at", "prev_hash", "hash")
HEX64 = re.compile(r"[0-9a-f]{64}")
SLUG = re.compile(r"[-a-zA-Z0-9_]{1,60}")
MAX_ID = 2**63 - 1
MAX_COUNT = 2**31 - 1  # session and scene numbers: PostgreSQL integers


class Malformed(ValueError):
    """A field of the file that is not what an export holds (the message names it)."""


# --- field checks: each returns the value or raises Malformed naming it -------------------------

def _when(text) -> datetime:
    try:
        value = datetime.fromisoformat(text) if isinstance(text, str) else None
    except ValueError:
        value = None
    if value is None or value.tzinfo is None:
        raise Malformed(f"{text!r:.40} is not an ISO 8601 time with a time zone")
    return value


def _number(value, what: str, lo: int = 1, hi: int = MAX_ID) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
        raise Malformed(f"{what} must be a whole number from {lo} to {hi}, not {value!r:.40}")
    return value


def _optional_number(value, what: str, hi: int = MAX_ID) -> int | None:
    return None if value is None else _number(value, what, 1, hi)


def _text(value, what: str, max_length: int, *, empty: bool = False) -> str:
    if not isinstance(value, str) or len(value) > max_length or (not empty and not value.strip()) or "\x00" in value:
        raise Malformed(f"{what} must be text of {0 if empty else 1} to {max_length} characters, not {value!r:.40}")
    return value


def _name(value, what: str, max_length: int) -> str:
    """A name as the live server takes it (check_name: the one rule of names), and as it stores it:
    already stripped, so a name is never changed on its way in."""
    try:
        checked = check_name(value, what, max_length)
    except ActionError as e:
        raise Malformed(e.message) from None
    if checked != value:
        raise Malformed(f"{what} must not start or end with spaces, not {value!r:.40}")
    return value


def _choice(value, what: str, choices) -> str:
    allowed = [c for c, _ in choices]
    if value not in allowed:
        raise Malformed(f"{what} must be one of {', '.join(allowed)}, not {value!r:.40}")
    return value


def _hash_format(value) -> int:
    if type(value) is not int or value not in (FORMAT_1, FORMAT_2):  # not True, not 2.0
        raise Malformed(f"'format' must be {FORMAT_1} or {FORMAT_2} (the event's hash format), not {value!r:.20}")
    return value


def _hex64(value, what: str) -> str:
    if not isinstance(value, str) or not HEX64.fullmatch(value):
        raise Malformed(f"{what} must be 64 lowercase hex digits, not {value!r:.70}")
    return value


def _rows(value, what: str) -> list[dict]:
    if not isinstance(value, list) or not all(isinstance(row, dict) for row in value):
        raise Malformed(f"'{what}' must be a list of objects")
    return value


def _json(line: str, number: int):
    """One line's JSON; NaN, Infinity and absurd nesting are refused like any other non-JSON."""
    def refuse(constant):
        raise ValueError(constant)

    try:
        return json.loads(line, parse_constant=refuse)
    except (ValueError, RecursionError):
        raise CommandError(f"Line {number} is not JSON.")


def _expected_head(text: str | None) -> tuple[int, str] | None:
    if text is None:
        return None
    seq, _, digest = text.partition(":")
    if not seq.isascii() or not seq.isdigit() or len(seq) > 18 or not HEX64.fullmatch(digest):
        raise CommandError("--expect-head must be SEQ:HASH, e.g. 42:<64 hex digits>.")
    return int(seq), digest


class Command(BaseCommand):
    help = "Load a campaign export (export_log SLUG --header) into an empty database, exactly, then verify it."

    def add_arguments(self, parser):
        parser.add_argument("file", help="the JSON Lines export, or - to read stdin")
        parser.add_argument("--expect-head", metavar="SEQ:HASH",
                            help="refuse the file unless its event SEQ has this hash (a head known from elsewhere)")

    def handle(self, *args, **options):
        self.expected_head = _expected_head(options.get("expect_head"))
        self._refuse_unless_empty()
        stream = sys.stdin if options["file"] == "-" else self._open(options["file"])
        try:
            with transaction.atomic():
                campaign, count = self._import(stream)
                report = verify_chain(campaign)
                if not report.ok:
                    raise CommandError(f"After the import the chain does not verify: BAD seq {report.bad_seq}: "
                                       f"{report.reason}. Nothing was imported.")
        except UnicodeDecodeError:
            raise CommandError("The file is not UTF-8 text. Nothing was imported.")
        except DatabaseError as e:  # a value the checks let through but the database refuses
            raise CommandError(f"The database refused a value of the file ({str(e).splitlines()[0][:200]}). "
                               "Nothing was imported.")
        finally:
            if stream is not sys.stdin:
                stream.close()
        characters = CharacterProjection.objects.filter(character__campaign=campaign).count()
        self.stdout.write(f"Imported campaign {campaign.slug!r}: {count} events, "
                          f"{Membership.objects.filter(campaign=campaign).count()} members, "
                          f"{characters} character projections folded. Chain OK {report.count} events.")

    # --- checks ---------------------------------------------------------------------------

    def _open(self, path):
        try:
            return open(path, encoding="utf-8")
        except OSError as e:
            raise CommandError(f"Can't read {path}: {e.strerror}.")

    def _refuse_unless_empty(self):
        # An unmigrated database has no tables to count (or lacks a column): said as one line, not a traceback.
        executor = MigrationExecutor(connection)
        if executor.migration_plan(executor.loader.graph.leaf_nodes()):
            raise CommandError("The database is not migrated: run `manage.py migrate` first. Nothing was imported.")
        User = get_user_model()
        found = {
            "users": User.objects.count(),
            "campaigns": Campaign.objects.count(),
            "events": Event.objects.count(),
            "characters": Character.objects.count(),
            "memberships": Membership.objects.count(),
            "commands": CommandRecord.objects.count(),
        }
        present = {name: n for name, n in found.items() if n}
        if present:
            listed = ", ".join(f"{n} {name}" for name, n in present.items())
            raise CommandError(
                f"The database is not empty ({listed}). import_log only loads into an empty database, so that "
                "every id the hash chain covers can be kept: create a new database, run `manage.py migrate`, "
                "and import there.")

    def _header(self, line: str, number: int) -> dict:
        data = _json(line, number)
        if not is_header(data):
            raise CommandError("The file has no header line: export it with `manage.py export_log SLUG --header` "
                               "(the header names the campaign, its users, members and characters).")
        if data.get("format") != FORMAT or data.get("version") != FORMAT_VERSION:
            raise CommandError(f"This is not a {FORMAT} version {FORMAT_VERSION} export "
                               f"(format {data.get('format')!r:.40}, version {data.get('version')!r:.40}).")
        if data.get("scope") != "campaign":
            raise CommandError(f"This export holds only session {data.get('session')!r:.20}: import needs the whole "
                               "campaign (export_log SLUG --header, without --session).")
        return data

    def _record(self, campaign: Campaign, batch: list[Event]) -> None:
        """Record a batch through the log's one record path; whatever it refuses, said in one line."""
        try:
            record(campaign, batch)  # no doorbell: the campaign is new, no table has it open
            return
        except ChainBroken as e:
            raise CommandError(f"{e} Nothing was imported.")
        except DatabaseError:
            raise
        except Exception as e:  # noqa: BLE001  the fold: any error here comes from a payload no server wrote
            problem = f"{type(e).__name__}: {str(e)[:200]}"
        # Raised outside the except block, so the failed fold's frames (and the database cursor
        # they hold open) are released now, inside the transaction, not after its rollback.
        raise CommandError(f"The characters can't be folded from the events ({problem}): the file holds "
                           "payloads no Talekeeper server wrote. Nothing was imported.")

    # --- the import -----------------------------------------------------------------------

    def _import(self, stream) -> tuple[Campaign, int]:
        lines = (line for line in stream if line.strip())
        first = next(lines, None)
        if first is None:
            raise CommandError("The file is empty.")
        head = self._header(first, 1)
        try:
            campaign, users, characters = self._identities(head)
        except (KeyError, TypeError, ValueError, ValidationError) as e:
            detail = e.messages[0] if isinstance(e, ValidationError) else str(e)
            raise CommandError(f"The header line is incomplete or malformed ({type(e).__name__}: {detail:.200}).")
        count = self._events(lock_campaign(campaign.id), lines, set(users), characters)
        if count == 0:
            raise CommandError("The file has a header but no events.")
        stated = head.get("head")
        if isinstance(stated, dict) and [stated.get("seq"), stated.get("hash")] != list(self.last_event):
            raise CommandError(f"The header says the log ends at seq {stated.get('seq')!r:.20}, but its events end at "
                               f"seq {self.last_event[0]}: the file was cut or changed.")
        if self.expected_head is not None and not self.expected_head_seen:
            raise CommandError(f"The file has no event {self.expected_head[0]} with the expected hash: it does not "
                               "extend the head you know (its chain was rewritten, or it is another campaign).")
        self._reset_sequences()
        # A member who left and came back was seated again by her event: the date is the header's.
        for user_id, joined_at in self.joined.items():
            Membership.objects.filter(campaign=campaign, user_id=user_id).update(joined_at=joined_at)
        return Campaign.objects.get(pk=campaign.pk), count

    def _identities(self, head: dict) -> tuple[Campaign, dict[int, int], dict[int, Character]]:
        """The header's campaign, users, members, characters and seeds: each field checked, then stored."""
        info = head["campaign"]
        if not isinstance(info, dict):
            raise Malformed("'campaign' must be an object")
        users = self._users(_rows(head["users"], "users"))
        slug = info["slug"]
        if not isinstance(slug, str) or not SLUG.fullmatch(slug):
            raise Malformed(f"the campaign's slug must be 1 to 60 letters, digits, - or _, not {slug!r:.40}")
        campaign = Campaign(id=_number(info["id"], "the campaign's id"), slug=slug,
                            name=_name(info["name"], "A campaign name", 120),
                            system=_choice(info["system"], "the campaign's system", system_choices()))
        if info.get("invite_code"):
            campaign.invite_code = _text(info["invite_code"], "the invite code", 64)
        campaign.save(force_insert=True)
        Campaign.objects.filter(pk=campaign.pk).update(created_at=_when(info["created_at"]))
        members, self.joined = set(), {}
        for m in _rows(head["members"], "members"):
            user_id = m["user_id"]
            if not isinstance(user_id, int) or user_id not in users or user_id in members:
                raise Malformed(f"member user_id {user_id!r:.20} is not one of the header's users, or is listed twice")
            members.add(user_id)
            # Seated before the events, which seat them again only where they left and came back
            # (campaign.roster); the signing and the campaign's name come from the events.
            Membership.objects.create(campaign=campaign, user_id=users[user_id],
                                      role=_choice(m["role"], "a member's role", ROLE_CHOICES))
            self.joined[users[user_id]] = _when(m["joined_at"])
        characters = {}
        for c in _rows(head["characters"], "characters"):
            ident, owner = _number(c["id"], "a character's id"), c.get("owner_id")
            if ident in characters or (owner is not None and (not isinstance(owner, int) or owner not in users)):
                raise Malformed(f"character {ident} is listed twice or its owner is not one of the header's users")
            # An NPC keeps what the players may see of it (an older header has no NPCs).
            characters[ident] = Character.objects.create(
                id=ident, campaign=campaign, owner_id=users[owner] if owner is not None else None,
                name=_name(c["name"], "A character name", 80), npc=c.get("npc") is True,
                shown=_choice(c.get("shown", SHOWN_FULL), "an NPC's shown", SHOWN_CHOICES))
            Character.objects.filter(pk=ident).update(created_at=_when(c["created_at"]))
        sessions = set()
        for row in _rows(head.get("dice_seeds", []), "dice_seeds"):
            session = _number(row["session"], "a dice seed's session", hi=MAX_COUNT)
            if session in sessions:
                raise Malformed(f"session {session} has two dice seeds")
            sessions.add(session)
            seed = DiceSeed.objects.create(campaign=campaign, session=session, seed=_hex64(row["seed"], "a dice seed"))
            DiceSeed.objects.filter(pk=seed.pk).update(created_at=_when(row["created_at"]))
        return campaign, users, characters

    def _users(self, rows: list[dict]) -> dict[int, int]:
        User = get_user_model()
        ids = {}
        for row in rows:
            ident = _number(row["id"], "a user's id")
            username = _text(row["username"], "a username", User._meta.get_field("username").max_length)
            if not is_pseudonym(username, ident):  # a deleted account keeps its "former member <id>"
                User.username_validator(username)  # the rule sign-up applies: letters, digits and @.+-_ only
            if ident in ids or User.objects.filter(username=username).exists():
                raise Malformed(f"user {ident} or the username {username!r} is listed twice")
            is_active = row.get("is_active", True)
            if not isinstance(is_active, bool):
                raise Malformed(f"a user's is_active must be true or false, not {is_active!r:.20}")
            user = User(pk=ident, username=username, is_active=is_active,
                        email=_text(row.get("email") or "", "an email address", 254, empty=True),
                        first_name=_text(row.get("first_name") or "", "a first name", 150, empty=True),
                        last_name=_text(row.get("last_name") or "", "a last name", 150, empty=True))
            if row.get("date_joined"):
                user.date_joined = _when(row["date_joined"])
            user.set_unusable_password()
            user.save(force_insert=True)
            ids[ident] = user.pk
        return ids

    def _events(self, campaign: Campaign, lines, users: set[int], characters: dict[int, Character]) -> int:
        """Read, check and record the events, a batch at a time (``campaign`` is the locked row)."""
        batch: list[Event] = []
        size = _batch_size()
        self.last_event, self.expected_head_seen = (0, GENESIS_HASH), False
        for number, line in enumerate(lines, start=2):
            event = self._event(campaign, line, number, users, characters)
            self.last_event = (event.seq, event.hash)
            self.expected_head_seen |= self.expected_head == self.last_event
            batch.append(event)
            if len(batch) >= size:
                self._record(campaign, batch)
                batch = []
        if batch:
            self._record(campaign, batch)
        return campaign.last_seq

    def _event(self, campaign, line, number, users, characters) -> Event:
        data = _json(line, number)
        if not isinstance(data, dict) or any(key not in data for key in EVENT_KEYS):
            raise CommandError(f"Line {number} is not an event of a full export (it lacks "
                               f"{', '.join(k for k in EVENT_KEYS if not isinstance(data, dict) or k not in data)}).")
        if data.get("hidden"):
            raise CommandError(f"Event {data['seq']!r:.20} is sealed (a hidden roll as a member sees it): import "
                               "needs the operator's full export, `manage.py export_log SLUG --header`.")
        try:
            return self._checked_event(campaign, data, users, characters)
        except Malformed as e:
            raise CommandError(f"Line {number}: {e}.")

    def _checked_event(self, campaign, data: dict, users: set[int], characters: dict[int, Character]) -> Event:
        """The line as an unsaved Event, every field checked for what an export can hold."""
        seq = _number(data["seq"], "'seq'")
        actor, character = data["actor_id"], data["character"]
        if actor is not None and (not isinstance(actor, int) or actor not in users):
            raise Malformed(f"event {seq} names actor id {actor!r:.20}, who is not in the header's users")
        if character is not None and (not isinstance(character, int) or character not in characters):
            raise Malformed(f"event {seq} names character id {character!r:.20}, "
                            "which is not in the header's characters")
        if not isinstance(data["payload"], dict):
            raise Malformed(f"event {seq}'s payload must be an object")
        kind = _text(data["type"], "'type'", 40)
        if kind in roster.ROW_EVENTS:  # the rows they name are written from them (campaign.roster)
            for key in ("user_id", "owner_id"):
                value = data["payload"].get(key)
                if value is not None and (type(value) is not int or value not in users):
                    raise Malformed(f"event {seq}'s {key} {value!r:.20} is not one of the header's users")
        return Event(campaign_id=campaign.id, seq=seq, type=kind,
                     version=_number(data["version"], "'version'", hi=32767), payload=data["payload"],
                     actor_id=actor, character=characters[character] if character is not None else None,
                     session=_optional_number(data["session"], "'session'", MAX_COUNT),
                     scene=_optional_number(data["scene"], "'scene'", MAX_COUNT),
                     visibility=_choice(data["visibility"], "'visibility'", VISIBILITY_CHOICES),
                     created_at=_when(data["created_at"]), prev_hash=_hex64(data["prev_hash"], "'prev_hash'"),
                     hash=_hex64(data["hash"], "'hash'"),
                     format=_hash_format(data.get("format", FORMAT_1)))

    def _reset_sequences(self):
        """Explicit ids leave PostgreSQL's sequences behind: move them past the imported rows."""
        User = get_user_model()
        statements = connection.ops.sequence_reset_sql(no_style(), [User, Campaign, Membership, Character, DiceSeed,
                                                                    Event])
        with connection.cursor() as cursor:
            for sql in statements:
                cursor.execute(sql)


def _batch_size() -> int:
    """Events per record() call: one INSERT and one fold each. No more than a snapshot block, so an
    imported character gets snapshots about as often as one played live (campaign.projections)."""
    return max(1, min(BATCH, projections.snapshot_every()))
