"""``manage.py import_log FILE``: load a campaign export into an empty database.

FILE (or ``-`` for stdin) is a JSON Lines export with a header line, as
``manage.py export_log SLUG --header`` writes it (see docs/audit.md). The
import recreates the users (with unusable passwords: they set one with
``changepassword`` or a reset), the campaign, its members, characters, dice
seeds and every event exactly, with the ids the hash chain covers (campaign,
actors, characters). Every event's link and hash is checked as it is read;
then the projections are rebuilt and the chain verified. It all happens in one
transaction: on any problem nothing is imported.
"""

from __future__ import annotations

import json
import sys
from datetime import datetime

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError
from django.core.management.color import no_style
from django.db import connection, transaction

from campaign import projections
from campaign.exports import FORMAT, FORMAT_VERSION, is_header
from campaign.log import FORMAT_1, FORMAT_2, event_hash, lock_campaign, verify_chain
from campaign.models import (
    GENESIS_HASH,
    Campaign,
    Character,
    CharacterProjection,
    Command as CommandRecord,
    DiceSeed,
    Event,
    Membership,
)

BATCH = 1000
EVENT_KEYS = ("seq", "type", "version", "payload", "actor_id", "character", "session", "scene", "visibility",
              "created_at", "prev_hash", "hash")


def _when(text: str) -> datetime:
    value = datetime.fromisoformat(text)
    if value.tzinfo is None:
        raise ValueError(f"timestamp without a time zone: {text}")
    return value


class Command(BaseCommand):
    help = "Load a campaign export (export_log SLUG --header) into an empty database, exactly, then verify it."

    def add_arguments(self, parser):
        parser.add_argument("file", help="the JSON Lines export, or - to read stdin")

    def handle(self, *args, **options):
        self._refuse_unless_empty()
        stream = sys.stdin if options["file"] == "-" else self._open(options["file"])
        try:
            with transaction.atomic():
                campaign, count = self._import(stream)
                locked = lock_campaign(campaign.id)
                projections.rebuild(locked)
                report = verify_chain(locked)
                if not report.ok:
                    raise CommandError(f"After the import the chain does not verify: BAD seq {report.bad_seq}: "
                                       f"{report.reason}. Nothing was imported.")
        finally:
            if stream is not sys.stdin:
                stream.close()
        characters = CharacterProjection.objects.filter(character__campaign=campaign).count()
        self.stdout.write(f"Imported campaign {campaign.slug!r}: {count} events, "
                          f"{Membership.objects.filter(campaign=campaign).count()} members, "
                          f"{characters} character projections rebuilt. Chain OK {report.count} events.")

    # --- checks ---------------------------------------------------------------------------

    def _open(self, path):
        try:
            return open(path, encoding="utf-8")
        except OSError as e:
            raise CommandError(f"Can't read {path}: {e.strerror}.")

    def _refuse_unless_empty(self):
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
        try:
            data = json.loads(line)
        except ValueError:
            raise CommandError(f"Line {number} is not JSON.")
        if not is_header(data):
            raise CommandError("The file has no header line: export it with `manage.py export_log SLUG --header` "
                               "(the header names the campaign, its users, members and characters).")
        if data.get("format") != FORMAT or data.get("version") != FORMAT_VERSION:
            raise CommandError(f"This is not a {FORMAT} version {FORMAT_VERSION} export "
                               f"(format {data.get('format')!r}, version {data.get('version')!r}).")
        if data.get("scope") != "campaign":
            raise CommandError(f"This export holds only session {data.get('session')}: import needs the whole "
                               "campaign (export_log SLUG --header, without --session).")
        return data

    # --- the import -----------------------------------------------------------------------

    def _import(self, stream) -> tuple[Campaign, int]:
        lines = (line for line in stream if line.strip())
        first = next(lines, None)
        if first is None:
            raise CommandError("The file is empty.")
        head = self._header(first, 1)
        try:
            info = head["campaign"]
            users = self._users(head["users"])
            campaign = Campaign(id=info["id"], slug=info["slug"], name=info["name"], system=info["system"])
            if info.get("invite_code"):
                campaign.invite_code = info["invite_code"]
            campaign.save(force_insert=True)
            Campaign.objects.filter(pk=campaign.pk).update(created_at=_when(info["created_at"]))
            for m in head["members"]:
                member = Membership.objects.create(campaign=campaign, user_id=users[m["user_id"]], role=m["role"])
                Membership.objects.filter(pk=member.pk).update(joined_at=_when(m["joined_at"]))
            characters = set()
            for c in head["characters"]:
                owner = users[c["owner_id"]] if c.get("owner_id") is not None else None
                Character.objects.create(id=c["id"], campaign=campaign, owner_id=owner, name=c["name"])
                Character.objects.filter(pk=c["id"]).update(created_at=_when(c["created_at"]))
                characters.add(c["id"])
            for s in head.get("dice_seeds", []):
                seed = DiceSeed.objects.create(campaign=campaign, session=s["session"], seed=s["seed"])
                DiceSeed.objects.filter(pk=seed.pk).update(created_at=_when(s["created_at"]))
        except (KeyError, TypeError, ValueError) as e:
            raise CommandError(f"The header line is incomplete or malformed ({type(e).__name__}: {e}).")
        count = self._events(campaign, lines, set(users), characters)
        if count == 0:
            raise CommandError("The file has a header but no events.")
        self._reset_sequences()
        return Campaign.objects.get(pk=campaign.pk), count

    def _users(self, rows: list[dict]) -> dict[int, int]:
        User = get_user_model()
        ids = {}
        for row in rows:
            user = User(pk=row["id"], username=row["username"], email=row.get("email") or "",
                        first_name=row.get("first_name") or "", last_name=row.get("last_name") or "",
                        is_active=row.get("is_active", True))
            if row.get("date_joined"):
                user.date_joined = _when(row["date_joined"])
            user.set_unusable_password()
            user.save(force_insert=True)
            ids[row["id"]] = user.pk
        return ids

    def _events(self, campaign: Campaign, lines, users: set[int], characters: set[int]) -> int:
        stream = {"last_seq": 0, "head_hash": GENESIS_HASH, "session_count": 0, "current_session": None,
                  "scene_count": 0, "current_scene": None}
        batch: list[Event] = []
        number = 1
        for number, line in enumerate(lines, start=2):
            event = self._event(campaign, line, number, stream, users, characters)
            batch.append(event)
            if len(batch) >= BATCH:
                Event.objects.bulk_create(batch)
                batch = []
        if batch:
            Event.objects.bulk_create(batch)
        Campaign.objects.filter(pk=campaign.pk).update(**stream)
        return stream["last_seq"]

    def _event(self, campaign, line, number, stream, users, characters) -> Event:
        try:
            data = json.loads(line)
        except ValueError:
            raise CommandError(f"Line {number} is not JSON.")
        if not isinstance(data, dict) or any(key not in data for key in EVENT_KEYS):
            raise CommandError(f"Line {number} is not an event of a full export (it lacks "
                               f"{', '.join(k for k in EVENT_KEYS if not isinstance(data, dict) or k not in data)}).")
        seq = data["seq"]
        if data.get("hidden"):
            raise CommandError(f"Event {seq} is sealed (a hidden roll as a member sees it): import needs the "
                               "operator's full export, `manage.py export_log SLUG --header`.")
        if seq != stream["last_seq"] + 1:
            raise CommandError(f"Event {stream['last_seq'] + 1} is missing (line {number} holds seq {seq}).")
        if data["prev_hash"] != stream["head_hash"]:
            raise CommandError(f"Event {seq}'s prev_hash does not match the previous event's hash.")
        fields = {"campaign": campaign.id, "seq": seq, "type": data["type"], "version": data["version"],
                  "payload": data["payload"], "actor": data["actor_id"], "character": data["character"],
                  "session": data["session"], "scene": data["scene"], "visibility": data["visibility"],
                  "created_at": data["created_at"]}
        if data.get("format", FORMAT_1) not in (FORMAT_1, FORMAT_2):
            raise CommandError(f"Event {seq} has an unknown hash format {str(data.get('format'))[:20]!r}.")
        if event_hash(data["prev_hash"], fields, data.get("format", FORMAT_1)) != data["hash"]:
            raise CommandError(f"Event {seq}'s hash does not match its contents: the file was changed (or the "
                               "campaign id in the header is not the one the chain was made with).")
        if data["actor_id"] is not None and data["actor_id"] not in users:
            raise CommandError(f"Event {seq} names actor id {data['actor_id']}, who is not in the header's users.")
        if data["character"] is not None and data["character"] not in characters:
            raise CommandError(f"Event {seq} names character id {data['character']}, "
                               "which is not in the header's characters.")
        try:
            created_at = _when(data["created_at"])
        except (TypeError, ValueError):
            raise CommandError(f"Event {seq}'s created_at is not an ISO 8601 time with a zone.")
        if data["type"] == "session_started":
            stream["session_count"] += 1
            stream["current_session"] = data["session"]
        elif data["type"] == "session_ended":
            stream["current_session"] = None
        elif data["type"] == "scene_started":
            stream["scene_count"] += 1
            stream["current_scene"] = data["scene"]
        elif data["type"] == "scene_ended":
            stream["current_scene"] = None
        stream["last_seq"], stream["head_hash"] = seq, data["hash"]
        return Event(campaign_id=campaign.id, seq=seq, type=data["type"], version=data["version"],
                     payload=data["payload"], actor_id=data["actor_id"], character_id=data["character"],
                     session=data["session"], scene=data["scene"], visibility=data["visibility"],
                     created_at=created_at, prev_hash=data["prev_hash"], hash=data["hash"],
                     format=data.get("format", FORMAT_1))

    def _reset_sequences(self):
        """Explicit ids leave PostgreSQL's sequences behind: move them past the imported rows."""
        User = get_user_model()
        statements = connection.ops.sequence_reset_sql(no_style(), [User, Campaign, Membership, Character, DiceSeed,
                                                                    Event])
        with connection.cursor() as cursor:
            for sql in statements:
                cursor.execute(sql)
