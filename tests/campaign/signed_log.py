"""Signed logs written from docs/fair-dice.md ("Signed commands"), without the server: the exports a
member would download from a campaign whose members sign, for the standalone verifier's tests.

Everything here is built from the spec: hashes through campaign.eventlog (format 2), members' keys
with ``cryptography`` (deterministic from the username), dice of scheme v3 with ``hmac``. A
dishonest host's edits change the events and then :meth:`SignedLog.rechain` recomputes every hash,
as a host who writes the database does.
"""

from __future__ import annotations

import base64
import copy
import hashlib
import hmac
import json
from pathlib import Path

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from campaign.canonical import jcs
from campaign.eventlog import FORMAT_2, body_digest, event_body, event_hash
from rules.notation import roll_event

GENESIS = "0" * 64
V3 = "talekeeper-hmac-sha256-v3"
USERS = {"gm": 1, "alice": 2, "bob": 3}


def b64url(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def private_key(name: str) -> Ed25519PrivateKey:
    return Ed25519PrivateKey.from_private_bytes(hashlib.sha256(f"talekeeper-test-key|{name}".encode()).digest())


def public_key(name: str) -> str:
    raw = private_key(name).public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return b64url(raw)


class V3Dice:
    """Scheme v3: scheme v2's derivation (docs/fair-dice.md, section 2) with "v3" in its prefixes."""

    def __init__(self, seed: str, campaign_id: int, session: int, actor_id: int, command_id: str):
        self.key, self.prefix, self.index, self.log = bytes.fromhex(seed), \
            f"talekeeper-dice-v3|{campaign_id}|{session}|{actor_id}|{command_id}|", 0, []

    def roll(self, sides: int) -> int:
        limit, counter = (2**64 // sides) * sides, 0
        while True:
            message = f"{self.prefix}{self.index}|{counter}".encode("ascii")
            value = int.from_bytes(hmac.new(self.key, message, hashlib.sha256).digest()[:8], "big")
            if value < limit:
                break
            counter += 1
        self.index += 1
        self.log.append([sides, value % sides + 1])
        return value % sides + 1


class SignedLog:
    """A campaign's log as its GM's export would hold it, every member's command signed."""

    def __init__(self, campaign_id: int = 7, slug: str = "the-vale", system: str = "tote"):
        self.campaign_id, self.slug, self.system = campaign_id, slug, system
        self.events: list[dict] = []
        self.session: int | None = None
        self.sessions = 0
        self.seeds: dict[int, str] = {}
        self.commitments: dict[int, str] = {}
        self.ids = 0
        self.server("campaign_created", {"name": "The Vale", "system": system, "gm": "gm", "signed_commands": True},
                    "gm")
        for name in USERS:
            self.server("member_joined", {"username": name, "role": "gm" if name == "gm" else "player"}, name)
            self.register(name)

    # --- writing events ---------------------------------------------------------------------

    def append(self, type_: str, payload: dict, actor: str, visibility: str = "public") -> dict:
        event = {"seq": len(self.events) + 1, "format": FORMAT_2, "type": type_, "version": 1, "payload": payload,
                 "actor": actor, "actor_id": USERS[actor], "character": None, "character_name": None,
                 "session": self.session, "scene": None, "visibility": visibility,
                 "created_at": f"2026-01-01T20:{len(self.events) // 60:02d}:{len(self.events) % 60:02d}.000000+00:00"}
        self.events.append(event)
        self.rechain()
        return event

    def server(self, type_: str, payload: dict, actor: str) -> dict:
        return self.append(type_, payload, actor)

    def new_id(self) -> str:
        self.ids += 1
        return hashlib.sha256(f"id-{self.ids}".encode()).hexdigest()[:32]

    def signature(self, actor: str, command_id: str, action: dict, key_of: str | None = None,
                  session: int | None | str = "now", campaign_id: int | None = None) -> dict:
        """The envelope's signature by ``key_of``'s key (the actor's by default), for the session now."""
        session = self.session if session == "now" else session
        commitment = self.commitments.get(session) if session is not None else None
        message = jcs({"scheme": "talekeeper-command-v1", "campaign": campaign_id or self.campaign_id,
                       "session": session, "commitment": commitment, "id": command_id, "action": action})
        return {"key": public_key(key_of or actor), "session": session, "commitment": commitment,
                "sig": b64url(private_key(key_of or actor).sign(message))}

    def command(self, actor: str, action: dict, payload: dict | None = None, type_: str | None = None,
                visibility: str = "public", **signing) -> dict:
        command_id = self.new_id()
        record = {"command_id": command_id, "action": action,
                  "signature": self.signature(actor, command_id, action, **signing)}
        return self.append(type_ or action["type"], {**(payload or {}), **record}, actor, visibility)

    def register(self, name: str, label: str = "laptop", key_name: str | None = None) -> dict:
        """``name`` registers the key ``key_name`` (her own first key by default), signed by that key."""
        key = public_key(key_name or name)
        action = {"type": "add_member_key", "key": key, "label": label}
        return self.command(name, action, {"key": key, "label": label}, type_="member_key_added",
                            key_of=key_name or name)

    def revoke(self, name: str, key_name: str, by_key: str) -> dict:
        action = {"type": "revoke_member_key", "key": public_key(key_name)}
        return self.command(name, action, {"key": public_key(key_name)}, type_="member_key_revoked", key_of=by_key)

    def start_session(self) -> dict:
        number = self.sessions + 1
        seed = hashlib.sha256(f"seed-{number}".encode()).hexdigest()
        commitment = hashlib.sha256(bytes.fromhex(seed)).hexdigest()
        command_id = self.new_id()
        action = {"type": "start_session"}
        signature = self.signature("gm", command_id, action)  # sent outside a session: null, null
        self.sessions, self.seeds[number], self.commitments[number] = number, seed, commitment
        self.session = number
        return self.append("session_started", {"session": number, "dice_scheme": V3, "dice_commitment": commitment,
                                               "command_id": command_id, "action": action, "signature": signature},
                           "gm")

    def end_session(self) -> dict:
        number = self.session
        event = self.command("gm", {"type": "end_session"}, {"session": number, "dice_seed": self.seeds[number]},
                             type_="session_ended")
        self.session = None
        return event

    def roll(self, actor: str, notation: str, **extra) -> dict:
        command_id = self.new_id()
        action = {"type": "roll", "notation": notation, **extra}
        dice = V3Dice(self.seeds[self.session], self.campaign_id, self.session, USERS[actor], command_id)
        decided = roll_event(action, dice).payload
        payload = {**json.loads(json.dumps(decided)), "command_id": command_id, "action": action,
                   "signature": self.signature(actor, command_id, action), "dice_log": dice.log,
                   "dice_scheme": V3}
        return self.append("roll", payload, actor)

    # --- a host's edits ---------------------------------------------------------------------

    def at(self, seq: int) -> dict:
        return self.events[seq - 1]

    def rechain(self) -> None:
        """Every hash again from #1: what a host who rewrites the database does after an edit."""
        prev = GENESIS
        for seq, event in enumerate(self.events, start=1):
            event["seq"] = seq
            fields = {"campaign": self.campaign_id, "seq": seq, "type": event["type"], "version": event["version"],
                      "payload": event["payload"], "actor": event["actor_id"], "character": event["character"],
                      "session": event["session"], "scene": event["scene"], "visibility": event["visibility"],
                      "created_at": event["created_at"]}
            event["body_digest"] = body_digest(event_body(fields))
            event["prev_hash"], event["hash"] = prev, event_hash(prev, fields, FORMAT_2, event["body_digest"])
            prev = event["hash"]

    def insert(self, at: int, event: dict) -> None:
        self.events.insert(at - 1, event)
        self.rechain()

    # --- what a member downloads ------------------------------------------------------------

    def export(self, path: Path, header: bool = True) -> str:
        lines = []
        if header:
            lines.append({"type": "export_header", "format": "talekeeper-export", "version": 1,
                          "campaign": {"id": self.campaign_id, "slug": self.slug, "name": "The Vale",
                                       "system": self.system}})
        lines += copy.deepcopy(self.events)
        path.write_text("".join(json.dumps(line, sort_keys=True, ensure_ascii=False) + "\n" for line in lines))
        return str(path)
