#!/usr/bin/env python3
"""Check a Talekeeper log export without trusting the server: Python's standard library and
Talekeeper's pure ``rules/``, shipped together as one file (``make verifier``).

    python3 -I talekeeper-verify.pyz EXPORT.jsonl [--receipt FILE ...] [--key BASE64 | --key-file FILE]
                                                  [--anchor LINE ...] [--campaign-id N]

EXPORT.jsonl is a member's export (``GET /api/campaigns/<slug>/export.jsonl?header=1``, or
``manage.py export_log``), exactly as that member sees it: hidden events arrive sealed and are checked
through their body digest. Receipts are checkpoint files from ``GET``/``POST /api/campaigns/<slug>/checkpoints``
(one checkpoint, a list, or the ``{"checkpoints": [...]}`` the list answers with); the key is the
answer of ``GET /api/key`` saved as a file (every key the server signed with, and when each was
valid), or one key in base64. An anchor is the line the table shows at a session's end
(``Talekeeper <slug> #<seq> <24 hex digits in groups of 4>``), pasted from the group's own chat.

It prints ``BAD seq N: why`` for each failure (exit status 1), ``OK ...`` otherwise; ``WARNING seq N: ...``
for a member's key none of her earlier keys vouched for (not a failure); notes say what it
could not check. What it checks is docs/fair-dice.md ("The standalone verifier"); this file is one
reading of those pages, kept free of Talekeeper's server code on purpose (it replays the rules with
``rules/``, which is pure Python).
"""

from __future__ import annotations

import argparse
import base64
import binascii
import bisect
import hashlib
import hmac
import json
import math
import re
import sys
from collections import Counter, namedtuple

try:
    import rules  # noqa: F401  (inside the .pyz, beside this file)
except ImportError:  # run from a checkout as tools/talekeeper_verify.py: rules/ is beside tools/
    import os

    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from rules import RuleError, get_system  # noqa: E402
from rules.base import copy_json  # noqa: E402
from rules.contests import fill  # noqa: E402
from rules.fights import CHOSEN as FIGHT_CHOSEN  # noqa: E402
from rules.replay import BUNDLE, FIGHT_ROUND, VOID, fold_one, outcome_problem  # noqa: E402
from rules import senders, vouching, witness  # noqa: E402

GENESIS = "0" * 64
SCHEME_V1 = "talekeeper-hmac-sha256-v1"
SCHEME_V2 = "talekeeper-hmac-sha256-v2"
SCHEME_V3 = "talekeeper-hmac-sha256-v3"  # v2's derivation with "v3" in its prefixes: the sessions of signed logs
SCHEME_V4 = witness.DICE_SCHEME  # a witnessed command's dice, inside a v3 session (docs/fair-dice.md)
DERIVED = {SCHEME_V2: "v2", SCHEME_V3: "v3", SCHEME_V4: "v4"}
COMMAND_SCHEME = "talekeeper-command-v1"
# Events the server makes by itself: they carry no member's signature (docs/fair-dice.md).
SERVER_MADE = frozenset({"campaign_created", "member_joined"})
KEY_ADDED, KEY_REVOKED = "member_key_added", "member_key_revoked"
SIGNING_REQUIRED = "signed_commands_required"  # the GM's switch: members sign from this event on, for good
MAX_LIVE_KEYS = 20

# --- RFC 8785 canonical JSON (JCS) ------------------------------------------------------------

_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r"}


def jcs(value) -> bytes:
    return _encode(value).encode("utf-8")


def _encode(value) -> str:
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return str(value) if abs(value) <= 2**53 else _number(float(value))
    if isinstance(value, float):
        return _number(value)
    if isinstance(value, str):
        return '"' + "".join(_ESCAPES.get(c) or (f"\\u{ord(c):04x}" if c < " " else c) for c in value) + '"'
    if isinstance(value, list):
        return "[" + ",".join(_encode(v) for v in value) + "]"
    if isinstance(value, dict):
        keys = sorted(value, key=lambda k: k.encode("utf-16-be"))
        return "{" + ",".join(_encode(k) + ":" + _encode(value[k]) for k in keys) + "}"
    raise TypeError(f"{type(value).__name__} is not JSON")


def _number(x: float) -> str:
    """ECMAScript Number.prototype.toString for a finite double."""
    if math.isnan(x) or math.isinf(x):
        raise ValueError("NaN and Infinity are not JSON")
    if x == 0:
        return "0"
    if x < 0:
        return "-" + _number(-x)
    mantissa, _, exponent = repr(x).partition("e")
    whole, _, fraction = mantissa.partition(".")
    raw = whole + fraction
    n = len(whole) + int(exponent or 0) - (len(raw) - len(raw.lstrip("0")))
    digits = raw.strip("0") or "0"
    k = len(digits)
    if k <= n <= 21:
        return digits + "0" * (n - k)
    if 0 < n <= 21:
        return digits[:n] + "." + digits[n:]
    if -6 < n <= 0:
        return "0." + "0" * (-n) + digits
    e = n - 1
    return digits[0] + ("." + digits[1:] if k > 1 else "") + "e" + ("+" if e >= 0 else "-") + str(abs(e))


# --- Ed25519 signature check (RFC 8032, section 5.1.7) -----------------------------------------

_P = 2**255 - 19
_L = 2**252 + 27742317777372353535851937790883648493
_D = -121665 * pow(121666, _P - 2, _P) % _P
_SQRT_M1 = pow(2, (_P - 1) // 4, _P)


def _add(a, b):
    x1, y1, z1, t1 = a
    x2, y2, z2, t2 = b
    A, B = (y1 - x1) * (y2 - x2) % _P, (y1 + x1) * (y2 + x2) % _P
    C, D = 2 * t1 * t2 * _D % _P, 2 * z1 * z2 % _P
    E, F, G, H = B - A, D - C, D + C, B + A
    return E * F % _P, G * H % _P, F * G % _P, E * H % _P


def _mul(s: int, point):
    result = (0, 1, 1, 0)
    while s:
        if s & 1:
            result = _add(result, point)
        point = _add(point, point)
        s >>= 1
    return result


def _x_of(y: int, sign: int):
    if y >= _P:
        return None
    x2 = (y * y - 1) * pow(_D * y * y + 1, _P - 2, _P)
    if x2 % _P == 0:
        return None if sign else 0
    x = pow(x2, (_P + 3) // 8, _P)
    if (x * x - x2) % _P:
        x = x * _SQRT_M1 % _P
    if (x * x - x2) % _P:
        return None
    return _P - x if (x & 1) != sign else x


def _point(encoded: bytes):
    y = int.from_bytes(encoded, "little")
    sign, y = y >> 255, y & ((1 << 255) - 1)
    x = _x_of(y, sign)
    return None if x is None else (x, y, 1, x * y % _P)


_BY = 4 * pow(5, _P - 2, _P) % _P
_B = (_x_of(_BY, 0), _BY, 1, _x_of(_BY, 0) * _BY % _P)


def ed25519_verify(public: bytes, message: bytes, signature: bytes) -> bool:
    if len(public) != 32 or len(signature) != 64:
        return False
    A, R = _point(public), _point(signature[:32])
    s = int.from_bytes(signature[32:], "little")
    if A is None or R is None or s >= _L:
        return False
    h = int.from_bytes(hashlib.sha512(signature[:32] + public + message).digest(), "little") % _L
    left, right = _mul(s, _B), _add(R, _mul(h, A))
    return (left[0] * right[2] - right[0] * left[2]) % _P == 0 and (left[1] * right[2] - right[1] * left[2]) % _P == 0


# --- hashes --------------------------------------------------------------------------------------

def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def body_digest(body: dict) -> str:
    return sha256_hex(jcs(body))


def event_hash(campaign_id: int, event: dict, body: dict | None, digest: str | None) -> str | None:
    """The event's hash from its fields; None when it can't be computed (a sealed format-1 event)."""
    fmt = event.get("format", 1)
    common = {"campaign": campaign_id, "seq": event["seq"], "actor": event["actor_id"], "session": event["session"],
              "scene": event["scene"], "visibility": event["visibility"], "created_at": event["created_at"]}
    if fmt == 2:
        envelope = {**common, "format": 2, "body": body_digest(body) if body is not None else digest}
        return sha256_hex(event["prev_hash"].encode("ascii") + jcs(envelope))
    if fmt == 1:
        if body is None:
            return None
        fields = {**common, "type": body["type"], "version": body["version"], "character": body["character"],
                  "payload": body["payload"]}
        # Format 1: Python's json with sorted keys, compact separators, UTF-8 unescaped.
        encoded = json.dumps(fields, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
        return sha256_hex(event["prev_hash"].encode("ascii") + encoded)
    raise ValueError(f"unknown hash format {fmt!r}")


def body_of(event: dict) -> dict | None:
    if event.get("hidden"):
        return None
    return {"type": event["type"], "version": event["version"], "character": event["character"],
            "payload": event["payload"]}


# --- dice ------------------------------------------------------------------------------------

def _face(seed_hex: str, message_for, sides: int) -> int:
    limit = (2**64 // sides) * sides
    counter = 0
    while True:
        mac = hmac.new(bytes.fromhex(seed_hex), message_for(counter).encode("ascii"), hashlib.sha256).digest()
        value = int.from_bytes(mac[:8], "big")
        if value < limit:
            return value % sides + 1
        counter += 1


def face_v2(seed, campaign_id, session, actor_id, command_id, index, sides, version="v2") -> int:
    prefix = f"talekeeper-dice-{version}|{campaign_id}|{session}|{actor_id}|{command_id}|{index}|"
    return _face(seed, lambda c: prefix + str(c), sides)


def nonce_v2(seed, campaign_id, session, actor_id, command_id, version="v2") -> str:
    message = f"talekeeper-nonce-{version}|{campaign_id}|{session}|{actor_id}|{command_id}".encode("ascii")
    return hmac.new(bytes.fromhex(seed), message, hashlib.sha256).hexdigest()[:32]


# --- base64url (members' keys and signatures) ----------------------------------------------------

def unb64url(text) -> bytes | None:
    """The bytes of unpadded base64url ``text``; None if it is not that."""
    if not isinstance(text, str) or not re.fullmatch(r"[A-Za-z0-9_-]*", text) or len(text) % 4 == 1:
        return None
    try:
        return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except (ValueError, binascii.Error):
        return None


def command_message(campaign_id: int, session, commitment, command_id, action) -> bytes:
    """What a member signs for one command (docs/fair-dice.md, "Signed commands")."""
    return jcs({"scheme": COMMAND_SCHEME, "campaign": campaign_id, "session": session, "commitment": commitment,
                "id": command_id, "action": action})


def face_v1(seed, campaign_id, session, seq, index, sides, mix, nonce) -> int:
    suffix = f":{nonce}" if nonce else ""
    return _face(seed, lambda c: f"{campaign_id}:{session}:{seq}:{index}:{c}:{mix}{suffix}", sides)


# --- the checks ------------------------------------------------------------------------------

# --- what a payload shows ---------------------------------------------------------------------

# A stored event as the fold reads it (rules/replay.py), with its actor.
Row = namedtuple("Row", "seq type version payload character_id actor_id")
FATE_FACES = {1: -1, 2: 0, 3: 1}  # a Fate die is a d3 read as -, blank, + (rules/notation.py)
# Payload keys whose lists are dice the table draws (each system's module in static/talekeeper/systems/):
# ``dice`` (TOTE, WYRM, MdT: ``[{"face", ...}]``; Tale: faces, or lists of faces by side), WYRM's
# ``new_dice`` (a reroll's), Tale's ``challenge_dice`` and ``sorted``. A bare number there is a count.
SHOWN = ("dice", "new_dice", "challenge_dice", "sorted")


def _is_log(log) -> bool:
    return isinstance(log, list) and all(isinstance(d, list) and len(d) == 2 and all(type(n) is int for n in d)
                                         and d[0] >= 1 for d in log)


def _faces(value) -> list:
    """The faces in a shown list: ``{"face": n}`` entries, bare numbers in lists, nested lists and sides."""
    if isinstance(value, dict):
        if "face" in value:
            return [value["face"]]
        return [face for item in value.values() if isinstance(item, (list, dict)) for face in _faces(item)]
    if isinstance(value, list):
        return [face for item in value for face in (_faces(item) if isinstance(item, (list, dict)) else [item])]
    return []


def shown_dice(payload: dict):
    """``(field, faces, fate)`` for every group of dice ``payload`` shows."""
    for index, term in enumerate(payload.get("terms") or []):
        if isinstance(term, dict) and isinstance(term.get("dice"), list):
            yield f"term {index + 1}", _faces(term["dice"]), bool(term.get("fate"))
    for field in SHOWN:
        if isinstance(payload.get(field), (list, dict)):
            yield field, _faces(payload[field]), False


def switch_problem(seq: int, on: int, payload, session, running) -> str:
    """Why a ``signed_commands_required`` event is not the one switch that turned signing on at ``on``
    ('' when it is): one only, stored between sessions, saying only "on"."""
    if seq != on:
        return (f"a second switch of signed commands, which came on at #{on}: they are required once, "
                "and never switched off or on again")
    if session is not None or running is not None:
        return "signed commands switched on inside a session: they come on between sessions only"
    if payload != {"signed_commands": True}:
        return "a switch of signed commands that does not say they are required: signing is never switched off"
    return ""


class Verifier:
    def __init__(self, events: list[dict], campaign_id: int, system: str | None = None):
        self.events, self.campaign_id, self.system = events, campaign_id, system
        self.signed_from: int | None = None
        self.by_seq = {e["seq"]: e for e in events}
        self.problems: list[str] = []
        self.notes: list[str] = []
        self.warnings: list[str] = []  # a key no earlier key of its member vouched for (rules/vouching.py)
        # seq of a sealed event -> its body as a later reveal showed it (checked against the digest)
        self.revealed: dict[int, dict] = {}

    def bad(self, seq, why: str) -> None:
        self.problems.append(f"BAD seq {seq}: {why}")

    def chain(self) -> None:
        unchecked = 0
        expected_seq = self.events[0]["seq"] if self.events else 1
        prev = self.events[0]["prev_hash"] if self.events else GENESIS
        if expected_seq != 1:
            self.notes.append(f"the export starts at seq {expected_seq}: its first link is taken on trust")
        newest_format = 1
        for event in self.events:
            seq = event["seq"]
            if event.get("format", 1) < newest_format:
                # Format 1 was followed by 2 for good: an older one later means a sealed event this member
                # can't rehash (or dice of scheme v1, which a host can aim) slipped in.
                return self.bad(seq, f"hash format {event.get('format', 1)} after format {newest_format}: "
                                     "a log's format never goes back")
            newest_format = max(newest_format, event.get("format", 1))
            if seq != expected_seq:
                return self.bad(expected_seq, f"is missing (the next event in the export is {seq})")
            if event["prev_hash"] != prev:
                return self.bad(seq, "its prev_hash is not the previous event's hash")
            body = body_of(event)
            if body is not None and event.get("body_digest") not in (None, body_digest(body)):
                return self.bad(seq, "its body_digest is not the digest of its body")
            if body is None and event.get("format", 1) == 2 and not event.get("body_digest"):
                return self.bad(seq, "a sealed format-2 event without its body digest")
            if body is None and event["visibility"] == "public":
                # Every member reads a public event: sealed, its dice would go unchecked here.
                self.bad(seq, "a public event served sealed: its body (and its dice) kept from this member")
            computed = event_hash(self.campaign_id, event, body, event.get("body_digest"))
            if computed is None:
                unchecked += 1  # a sealed format-1 event: its hash covers a payload this member can't see
            elif computed != event["hash"]:
                return self.bad(seq, "its hash does not match its contents")
            prev, expected_seq = event["hash"], seq + 1
        if unchecked:
            self.notes.append(f"{unchecked} sealed format-1 event(s) linked but not rehashed (payload unseen)")

    def reveals(self) -> None:
        for event in self.events:
            if event["type"] != "roll_revealed" or event.get("hidden"):
                continue
            payload = event["payload"]
            target = self.by_seq.get(payload.get("seq")) if isinstance(payload.get("seq"), int) else None
            if target is None:
                self.notes.append(f"reveal #{event['seq']} names #{payload.get('seq')}, outside this export")
                continue
            body = payload.get("body")
            if not isinstance(body, dict) and isinstance(payload.get("payload"), dict):
                # A scheme-v1 reveal carried the sealed payload; its event names the same character.
                body = {"type": payload.get("type"), "version": 1, "character": event["character"],
                        "payload": payload["payload"]}
            if not isinstance(body, dict):
                self.bad(event["seq"], "a reveal without the revealed body")
                continue
            if target.get("format", 1) == 2:
                digest = target.get("body_digest") or body_digest(body_of(target))
                if body_digest(body) != digest:
                    self.bad(event["seq"], f"the revealed body does not match #{target['seq']}'s body digest")
                    continue
            elif event_hash(self.campaign_id, target, body, None) != target["hash"]:
                self.bad(event["seq"], f"the revealed body does not hash to #{target['seq']}'s hash")
                continue
            self.revealed[target["seq"]] = body

    def dice(self) -> tuple[int, int]:
        sessions: dict[int, dict] = {}
        for event in self.events:
            if event["type"] in ("session_started", "session_ended") and not event.get("hidden"):
                pair = sessions.setdefault(event["payload"].get("session"), {})
                if event["type"] in pair:  # a second commitment (or seed) for the same session: its first counts
                    self.bad(event["seq"], f"session {event['payload'].get('session')} "
                                           f"{event['type'].split('_')[1]} a second time")
                    continue
                pair[event["type"]] = event
        self._session_frames()
        checked_sessions = dice = 0
        bounds: dict = {}  # a finished session's number -> (its start's seq, its end's seq)
        for number, pair in sorted(sessions.items(), key=lambda kv: kv[0] or 0):
            start, end = pair.get("session_started"), pair.get("session_ended")
            if start is None or end is None:
                if start is not None:
                    self.notes.append(f"session {number} has not ended: its dice can't be checked yet")
                continue
            bounds[number] = (start["seq"], end["seq"])
            seed = end["payload"].get("dice_seed") or ""
            try:
                ok = sha256_hex(bytes.fromhex(seed)) == start["payload"].get("dice_commitment")
            except ValueError:
                ok = False
            if not ok:
                self.bad(end["seq"], "the revealed seed does not match the commitment published at the start")
                continue
            if start["payload"].get("dice_scheme") == SCHEME_V1 and start.get("format", 1) >= 2:
                # v1 dice hang on seq and on seeds anyone adds, so a host can aim them; the sessions that
                # have them started before hash format 2, which came with scheme v2.
                self.bad(start["seq"], f"session {number} starts under dice scheme v1 in a format-2 event: "
                                       "v1 ended with format 1")
                continue
            if start["payload"].get("dice_scheme") not in (SCHEME_V1, *DERIVED):
                self.bad(start["seq"], f"session {number} starts under an unknown dice scheme "
                                       f"{str(start['payload'].get('dice_scheme'))[:60]!r}")
                continue
            checked_sessions += 1
            dice += self._session_dice(number, seed, start["payload"].get("dice_scheme"), start["seq"], end["seq"])
        self._session_bounds(bounds)
        return checked_sessions, dice

    def command_ids(self) -> None:
        """A member's command id is used once in a campaign (the same id rolls the same dice): a second
        event under it would replay the dice of the first, each matching the seed."""
        first: dict = {}
        for event in self.events:
            body = body_of(event) or self.revealed.get(event["seq"])
            command_id = body["payload"].get("command_id") if body is not None else None
            if command_id is None:
                continue
            key = (event["actor_id"], json.dumps(command_id))
            if key in first:
                self.bad(event["seq"], f"command id {command_id} of this member was used before, in #{first[key]}")
            else:
                first[key] = event["seq"]

    def _session_frames(self) -> None:
        """Every session stamped on an event opens with its start and, once the log goes on past it,
        closes with its end, both public: a start or end this member reads sealed (stored for the GM
        alone) would leave every die of that session unchecked here."""
        first: dict = {}
        last: dict = {}
        for event in self.events:
            number = event.get("session")
            if type(number) is int:
                first.setdefault(number, event)
                last[number] = event
        final = self.events[-1]["seq"] if self.events else 0
        for number in sorted(first):
            # An export that starts mid-session holds no start to read (its first link is taken on trust too).
            starts_here = first[number] is not self.events[0] or first[number]["seq"] == 1
            frames = [("session_started", "start", first[number])] if starts_here else []
            if last[number]["seq"] != final:  # the log goes on: the session has ended
                frames.append(("session_ended", "end", last[number]))
            for kind, word, event in frames:
                if event.get("hidden") or event["type"] != kind or event["payload"].get("session") != number \
                        or event["visibility"] != "public":
                    self.bad(event["seq"], f"session {number}'s {word} is not a public {kind} this member can "
                                           "read: its dice can't be checked")

    def _session_bounds(self, bounds: dict) -> None:
        """Every event between a finished session's start and end is stamped with it, and none outside:
        a roll made while it ran, stamped as rolled outside any session, would escape its seed."""
        ranges = sorted((first, last, number) for number, (first, last) in bounds.items())
        starts = [first for first, _, _ in ranges]
        for event in self.events:
            at = bisect.bisect_right(starts, event["seq"]) - 1
            inside = ranges[at] if at >= 0 and event["seq"] <= ranges[at][1] else None
            stamped = event.get("session")
            if (inside is not None and stamped != inside[2]) or (inside is None and type(stamped) is int and stamped in bounds):
                within = f"session {inside[2]} runs from #{inside[0]} to #{inside[1]}" if inside else \
                    f"session {stamped} runs from #{bounds[stamped][0]} to #{bounds[stamped][1]}"
                self.bad(event["seq"], f"stamped session {stamped}, but {within}")

    def _session_dice(self, session, seed, scheme, first, last) -> int:
        count, player_seeds = 0, []
        for seq in range(first, last + 1):
            event = self.by_seq.get(seq)
            if event is None:
                continue
            body = body_of(event) or self.revealed.get(seq)
            if body is None:
                continue  # sealed and never revealed: its digest is all this member holds
            payload = body["payload"]
            if body["type"] == "seed_added":
                player_seeds.append(payload.get("seed", ""))
            log = payload.get("dice_log")
            if not log:
                continue
            if not isinstance(log, list) or not all(isinstance(d, list) and len(d) == 2 and
                                                    all(type(n) is int for n in d) and d[0] >= 1 for d in log):
                self.bad(seq, "its dice_log is not a list of [sides, face] pairs")
                continue
            hidden = event["visibility"] != "public"
            command_id, version = payload.get("command_id"), DERIVED.get(scheme)
            if witness.resolution_of(payload) and scheme == SCHEME_V3:
                # A witnessed command's decision: its id is on its pending event, and its dice hang on the
                # digest of its witnesses' contributions too (scheme v4).
                command_id, version = self._witnessed_dice_id(payload), "v4"
                if command_id is None:
                    self.bad(seq, "a witnessed roll's decision whose pending event this member can't read")
                    continue
            elif scheme != SCHEME_V1 and (payload.get("dice_scheme") != scheme or payload.get("verifiable") is False):
                # Dice "not verifiable" inside a session, or of another scheme: the seed would not be asked.
                self.bad(seq, f"dice rolled in session {session} without its dice scheme ({scheme})")
                continue
            for index, (sides, face) in enumerate(log):
                if scheme == SCHEME_V1:
                    mix = sha256_hex("\n".join(player_seeds).encode("utf-8"))
                    want = face_v1(seed, self.campaign_id, session, seq, index, sides, mix,
                                   payload.get("nonce", "") if hidden else "")
                else:
                    want = face_v2(seed, self.campaign_id, session, event["actor_id"], command_id, index, sides, version)
                count += 1
                if want != face:
                    self.bad(seq, f"die {index + 1} (d{sides}) shows {face}, the seed gives {want}")
                    break
            if scheme != SCHEME_V1 and hidden and payload.get("nonce_drawn") is not True and \
                    payload.get("nonce") != nonce_v2(seed, self.campaign_id, session, event["actor_id"],
                                                     command_id, version):
                self.bad(seq, "the hidden roll's nonce is not the one the seed gives")
        return count

    def _witnessed_dice_id(self, payload) -> str | None:
        """What a witnessed command's dice derive from: its pending event's command id and the digest."""
        named = payload.get("command_of")
        pending = self.body(self.by_seq[named]) if type(named) is int and named in self.by_seq else None
        if pending is None or pending["type"] != witness.PENDING or not isinstance(pending["payload"].get("command_id"), str):
            return None
        return witness.dice_id(pending["payload"]["command_id"], str(payload.get("witness_digest")))

    # --- witnessed rolls (docs/fair-dice.md, "Witnessed rolls") -------------------------------

    def witnessed(self) -> None:
        """Every contribution stored between a roll's pending event and its decision is the decision's,
        none other, each by a listed witness, once; the digest is theirs (rules/witness.py)."""
        for seq, why in witness.problems(self.seen()):
            self.bad(seq, why)

    def senders(self) -> None:
        """Every member's command was sent by a member, for characters she may act for (rules/senders.py)."""
        for seq, why in senders.problems(self.seen()):
            self.bad(seq, why)

    def seen(self) -> list[witness.Seen]:
        """The log as this member reads it (a sealed event's body once a reveal showed it), for rules/."""
        out = []
        for event in self.events:
            body = self.body(event)
            out.append(witness.Seen(event["seq"], body["type"] if body else None, body["payload"] if body else None,
                                    event.get("actor_id"), event.get("actor"), event.get("session"),
                                    body["character"] if body else None))
        return out

    # --- signed commands (docs/fair-dice.md, "Signed commands") -------------------------------

    def body(self, event: dict) -> dict | None:
        return body_of(event) or self.revealed.get(event["seq"])

    def signing_from(self) -> int | None:
        """The seq from which every member's command must be signed: from ``campaign_created`` with
        ``signed_commands``, from the first ``signed_commands_required`` (the GM's switch in a campaign
        made before), or from the event after the first ``session_started`` of scheme v3."""
        for event in self.events:
            body = self.body(event)
            if body is None:
                continue
            if body["type"] == "campaign_created" and body["payload"].get("signed_commands") is True:
                return event["seq"]
            if body["type"] == SIGNING_REQUIRED:
                return event["seq"]
            if body["type"] == "session_started" and body["payload"].get("dice_scheme") == SCHEME_V3:
                return event["seq"] + 1
        return None

    def signatures(self) -> None:
        """Rules 1-7: every event from where signing is on is server-made, a command's signed first
        event, or a later event of a command; every signature by a key the log registered for the
        event's actor before it, over the action stored, in the session and commitment it ran in."""
        on = self.signing_from()
        self.signed_from = on
        if on is None:
            unsigned = sum(1 for e in self.events if (self.body(e) or {}).get("type") not in SERVER_MADE)
            if self.events:
                self.notes.append(f"not signed: none of this log's {unsigned} member event(s) is signed (it predates "
                                  "signed commands): the host could have sent any of them in a member's name, and "
                                  "changed an action or re-aimed a retry without a member's tools seeing it")
            return
        if on > 1 and self.events and self.events[0]["seq"] < on:
            self.notes.append(f"not signed: events #{self.events[0]['seq']}..#{on - 1} predate signed commands: the "
                              "host could have sent any of them in a member's name")
        keys: dict[str, dict] = {}  # key -> {"actor", "added", "revoked"}
        firsts: dict[int, dict] = {}  # seq of a command's first event -> that event
        commitments: dict[int, str] = {}  # session -> its start's dice commitment
        running = None  # the session running before the event at hand: (number, commitment) or None
        sealed = 0
        for event in self.events:
            seq, body = event["seq"], self.body(event)
            if body is not None and body["type"] == "session_started" and isinstance(body["payload"].get("session"), int):
                commitments.setdefault(body["payload"]["session"], body["payload"].get("dice_commitment"))
            sent_in = running
            if body is not None and body["type"] == "session_started":
                running = (event["session"], commitments.get(event["session"]))
            elif body is not None and body["type"] == "session_ended":
                running = None
            if seq < on:
                continue
            if body is None:
                sealed += 1
                continue
            payload = body["payload"]
            if body["type"] == SIGNING_REQUIRED:
                problem = switch_problem(seq, on, payload, event.get("session"), sent_in)
                if problem:
                    self.bad(seq, problem)
                continue
            if body["type"] == "session_started" and payload.get("dice_scheme") != SCHEME_V3:
                self.bad(seq, f"session {payload.get('session')} starts under {str(payload.get('dice_scheme'))[:40]}"
                              f" after signed commands came on at #{on}: a log never goes back")
            if event.get("session") is not None and payload.get("verifiable") is False:
                self.bad(seq, "stored \"verifiable\": false inside a session of a signed log: its dice escape the seed")
            if body["type"] in SERVER_MADE and not any(k in payload for k in ("command_id", "signature", "command_of")):
                continue
            if "command_of" in payload:
                named = payload["command_of"]
                first = firsts.get(named) if type(named) is int else None
                if first is None and type(named) is int and named < seq and named in self.by_seq \
                        and self.body(self.by_seq[named]) is None:
                    sealed += 1  # its command's first event is sealed from this member: the GM's export checks it
                elif first is None or first["seq"] >= seq:
                    self.bad(seq, f"names #{payload['command_of']} as its command's first event, which is not "
                                  "an earlier signed command this member reads")
                elif (first["actor_id"], first["session"]) != (event["actor_id"], event["session"]):
                    self.bad(seq, f"a later event of #{first['seq']}'s command, by another member or in another session")
                continue
            problem = self._command_problem(event, payload, keys, sent_in)
            if problem:
                self.bad(seq, problem)
            else:
                firsts[seq] = event
                self._keep_key(event, body, keys)
        self.warnings.extend(vouching.warning(keys[key]["member"], key, added) for added, key in vouching.unvouched(keys))
        if sealed:
            self.notes.append(f"{sealed} event(s) sealed from you after signing came on: their signatures can't be "
                              "checked here (the GM's export can)")

    def _command_problem(self, event, payload, keys, sent_in) -> str:
        """Why a signed command's first event fails rules 1-4 ('' when it holds)."""
        command_id, action, signature = payload.get("command_id"), payload.get("action"), payload.get("signature")
        if command_id is None and action is None and signature is None:
            return ("not signed: a member's event with no signed command behind it (the host could have "
                    "written it in the member's name)")
        if not isinstance(command_id, str) or not isinstance(action, dict) or not isinstance(signature, dict):
            return "a command's first event without its command id, its action and its signature"
        key, sig = unb64url(signature.get("key")), unb64url(signature.get("sig"))
        if key is None or len(key) != 32 or sig is None or len(sig) != 64 or \
                set(signature) != {"key", "session", "commitment", "sig"}:
            return "its signature is not {key, session, commitment, sig} of an Ed25519 key and signature"
        message = command_message(self.campaign_id, signature["session"], signature["commitment"], command_id, action)
        if not ed25519_verify(key, message, sig):
            return "its signature does not verify over the action stored (changed, or never signed by this key)"
        filled = payload.get("filled", {})
        if not isinstance(filled, dict) or set(filled) & set(action):
            return "its 'filled' numbers overwrite keys of the signed action"
        if action.get("type") == "add_member_key":
            if action.get("key") != signature["key"] or payload.get("key") != signature["key"]:
                return "a key registered without its own signature (signed by another key)"
            if signature["key"] in keys:
                return "registers a key the log already holds"
        else:
            holder = keys.get(signature["key"])
            if holder is None or holder["actor"] != event["actor_id"]:
                return ("signed by a key the log never registered for this member before it"
                        if holder is None else f"signed by another member's key (#{holder['added']})")
            if holder["revoked"] is not None:
                return f"signed by a key revoked at #{holder['revoked']}"
        number, commitment = sent_in if sent_in is not None else (None, None)
        if (signature["session"], signature["commitment"]) != (number, commitment):
            where = f"session {number}" if number is not None else "no session"
            return (f"signed for session {signature['session']} (commitment {str(signature['commitment'])[:12]}), "
                    f"but stored in {where}: a signature replayed from elsewhere")
        return ""

    def _keep_key(self, event, body, keys) -> None:
        action = body["payload"]["action"]
        if action.get("type") == "add_member_key":
            live = sum(1 for k in keys.values() if k["actor"] == event["actor_id"] and k["revoked"] is None)
            if live >= MAX_LIVE_KEYS:
                self.bad(event["seq"], f"a {MAX_LIVE_KEYS + 1}st live key of this member")
            keys[action["key"]] = {"actor": event["actor_id"], "added": event["seq"], "revoked": None,
                                   "vouched": vouching.on_first_use(keys, event["actor_id"]),
                                   "member": event.get("actor")}
        elif action.get("type") == "revoke_member_key":
            target = keys.get(action.get("key"))
            if target is None or target["actor"] != event["actor_id"]:
                self.bad(event["seq"], "revokes a key that is not one of this member's")
            elif target["revoked"] is None:
                target["revoked"] = event["seq"]
        elif action.get("type") == vouching.ENDORSE:
            signer = body["payload"]["signature"]["key"]
            problem = vouching.endorsement_problem(keys, event["actor_id"], signer, action, body["payload"])
            if problem:
                self.bad(event["seq"], problem)
            else:
                vouching.endorse(keys, signer, action["key"])

    # --- the rules, replayed ------------------------------------------------------------------

    def replay(self, system_name: str | None) -> int:
        """Decide every rules command this member can read again with ``rules/`` and compare the events
        stored for it (docs/fair-dice.md: "The standalone verifier"); returns how many replayed as stored.

        Each character's state is folded from the events this member reads (and reveals showed). Once an
        event sealed from her comes before a command, the state may hold what she can't see: a difference
        there is a note (the GM's export replays it), except for a plain roll, which reads no state."""
        if system_name is None:
            self.notes.append("the rules were not replayed: the export has no header naming its system")
            return 0
        try:
            rules = get_system(system_name)
        except KeyError:
            self.notes.append(f"the rules were not replayed: this verifier does not know the system {system_name!r}")
            return 0
        rows: list = []
        voided: set[int] = set()
        states: dict = {}
        seqs: dict = {}
        blind_from = None  # the first event sealed from this member and never revealed
        pending = []  # (first row, the action the rules read, dice_log, state before, blind_from)
        pending_replays = []  # (a witnessed roll's pending seq, its decision's replay as above)
        groups: dict[int, list] = {}  # a command's first seq -> its rows
        last_first = None
        for event in self.events:
            body = self.body(event)
            if body is None:
                blind_from = blind_from or event["seq"]
                last_first = None
                continue
            row = Row(event["seq"], body["type"], body["version"], body["payload"], body["character"],
                      event["actor_id"])
            payload = body["payload"]
            rows.append(row)
            if body["type"] == witness.PENDING:
                groups[row.seq] = []  # its decision comes later, first of the events the rules replay
                last_first = None
            elif witness.resolution_of(payload) and type(payload.get("command_of")) is int:
                held = self.by_seq.get(payload["command_of"])
                held = self.body(held) if held is not None else None
                if held is not None and held["type"] == witness.PENDING and isinstance(held["payload"].get("action"), dict):
                    groups[payload["command_of"]] = [row]
                    command = self._command_to_replay(rules, row, states, blind_from, held["payload"]["action"])
                    if command is not None:
                        pending_replays.append((payload["command_of"], command))
            elif body["type"] in (witness.CALL, witness.CLOSED):
                pass  # the public call to a sealed roll's witnesses, the close of its commitments: the platform's
            elif type(payload.get("command_of")) is int:
                groups.get(payload["command_of"], []).append(row)
            elif isinstance(payload.get("action"), dict) and "command_id" in payload:
                groups[row.seq] = [row]
                last_first = row
                command = self._command_to_replay(rules, row, states, blind_from)
                if command is not None:
                    pending.append(command)
            elif self.signed_from is None and last_first is not None and row.actor_id == last_first.actor_id:
                groups[last_first.seq].append(row)  # an old log marks no later event: the rules say how many
            if body["type"] == VOID and type(payload.get("seq")) is int:
                # A void takes back an earlier event: fold again from the start without it.
                voided.add(payload["seq"])
                states, seqs = {}, {}
                for earlier in rows[:-1]:
                    fold_one(rules, earlier, states, seqs, voided)
            fold_one(rules, row, states, seqs, voided)
        replayed = 0
        for first, action, filled, log, state, blind, group in \
                [(*c, groups[c[0].seq]) for c in pending] + [(*c, groups[seq]) for seq, c in pending_replays]:
            problem = outcome_problem(rules, state, action, log, group, filled,
                                      more=self.signed_from is None)
            if problem is None:
                replayed += 1
            elif blind is not None:
                self.notes.append(f"seq {problem[0]}: {problem[1]} on the sheet as you can see it; events sealed "
                                  f"from you (from #{blind}) came before it, so only the GM's export can say")
            else:
                self.bad(*problem)
        return replayed

    def _command_to_replay(self, rules, row, states, blind_from, action=None):
        """What replaying the command whose first event is ``row`` needs, taken before it folds
        (``action``: a witnessed command's, from its pending event)."""
        payload, action = row.payload, action if action is not None else row.payload["action"]
        if action.get("type") not in ("roll", FIGHT_ROUND) and action.get("type") not in rules.actions:
            return None  # the platform's own commands (sessions, scenes, chat, reveals) are not the rules'
        if action.get("type") == FIGHT_ROUND and row.type == FIGHT_CHOSEN and not payload.get("dice_log"):
            return None  # a side's choice kept until its round: the rules decide nothing, and roll nothing, yet
        filled = payload.get("filled") if isinstance(payload.get("filled"), dict) else None
        opponent = action.get("vs_character")
        if filled and type(opponent) is int and opponent in states and blind_from is None:
            try:
                want = fill(rules, action, states[opponent])
            except (RuleError, KeyError, TypeError, ValueError):
                want = None
            if want != filled:
                self.bad(row.seq, "its 'filled' numbers are not what the opponent's sheet says")
        log = payload.get("dice_log") or []
        if not isinstance(log, list) or not all(isinstance(d, list) and len(d) == 2 and all(type(n) is int for n in d)
                                               for d in log):
            return None  # named by the dice check
        state = copy_json(states[row.character_id]) if row.character_id in states else None
        stateless = action.get("type") in ("roll", FIGHT_ROUND)  # a fight's round reads `filled`, no sheet
        return row, action, filled, log, state, None if stateless else blind_from

    # --- the dice a member is shown -------------------------------------------------------------

    def displayed_dice(self) -> None:
        """Every die a payload shows (``dice[].face``, a notation roll's terms, each system's lists of
        faces) is a die of its ``dice_log``: the table draws what the payload says, the seed checks the log."""
        for event in self.events:
            body = self.body(event)
            if body is None:
                continue
            for payload in ([e.get("payload", {}) for e in body["payload"].get("events", [])]
                            if body["type"] == BUNDLE else [body["payload"]]):
                self._shown_against_log(event["seq"], payload, body["payload"].get("dice_log"))

    def _shown_against_log(self, seq, payload, log) -> None:
        if not isinstance(payload, dict):
            return
        rolled = Counter(face for sides, face in log) if _is_log(log) else Counter()
        fate = Counter(FATE_FACES.get(face) for sides, face in log if sides == 3) if _is_log(log) else Counter()
        for field, faces, is_fate in shown_dice(payload):
            if not faces:
                continue
            if not _is_log(log):
                self.bad(seq, f"shows dice ({field}) but records no dice_log to check them against")
                return
            missing = Counter(faces) - (fate if is_fate else rolled)
            if missing:
                face = next(iter(missing))
                self.bad(seq, f"shows a {face} ({field}) that is not among its dice_log's faces")
                return

    # --- receipts and anchors -----------------------------------------------------------------

    def receipts(self, receipts: list[dict], keys: list[dict] | None, slug: str | None) -> None:
        last = self.events[-1]["seq"] if self.events else 0
        for receipt in receipts:
            seq = receipt.get("seq")
            if slug is not None and receipt.get("campaign") != slug:
                self.notes.append(f"a receipt of campaign {str(receipt.get('campaign'))[:60]!r} is not this "
                                  f"export's ({slug!r}): not checked")
                continue
            if keys is None:
                self.notes.append(f"receipt at seq {seq}: signature not checked (no --key)")
            else:
                problem = receipt_signature_problem(receipt, keys)
                if problem:
                    self.bad(seq, problem)
                    continue
            if not isinstance(seq, int) or isinstance(seq, bool) or seq == 0:
                continue
            self._anchored(seq, receipt.get("hash"), "your receipt", last)

    def anchors(self, anchors: list[tuple[str, int, str]], slug: str | None) -> None:
        last = self.events[-1]["seq"] if self.events else 0
        for anchor_slug, seq, prefix in anchors:
            if slug is not None and anchor_slug != slug:
                self.bad(seq, f"this anchor is for campaign {anchor_slug!r}, not {slug!r}")
                continue
            self._anchored(seq, prefix, "the anchor", last)

    def _anchored(self, seq: int, hash_or_prefix, what: str, last: int) -> None:
        """Whether the log still has, at ``seq``, the hash ``what`` holds (or begins with)."""
        event = self.by_seq.get(seq)
        if event is None:
            if seq > last:
                # Not a rewrite the chain could show: the events after the head are gone, as when the
                # server was restored from a backup older than the receipt.
                self.bad(seq, f"the log ends at #{last} but {what} covers #{seq}: events {last + 1}..{seq} are "
                              "missing, as after a restore from an older backup")
            else:
                self.notes.append(f"{what} at seq {seq} is outside this export")
        elif not isinstance(hash_or_prefix, str) or not hash_or_prefix or \
                not event["hash"].startswith(hash_or_prefix.lower()):
            self.bad(seq, f"the event's hash differs from {what}'s: the log was rewritten up to #{seq}")


EVENT_KEYS = ("seq", "type", "version", "payload", "actor_id", "character", "session", "scene", "visibility",
              "created_at", "prev_hash", "hash")


class Malformed(Exception):
    pass


def export_items(text: str):
    """``(line number, JSON value)`` of an export: JSON Lines, or one JSON document holding the events
    (a list, or ``{"events": [...]}`` as the events API pages them), numbered from 1 as items."""
    try:
        whole = json.loads(text)
    except ValueError:
        whole = None
    if isinstance(whole, dict) and isinstance(whole.get("events"), list):
        whole = whole["events"]
    if isinstance(whole, list):
        yield from enumerate(whole, start=1)
        return
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            yield number, json.loads(line)
        except ValueError:
            raise Malformed(f"line {number} is not JSON")


def read_export(path: str) -> tuple[dict | None, list[dict]]:
    header, events = None, []
    with open(path, encoding="utf-8") as f:
        text = f.read()
    for number, data in export_items(text):
        if not isinstance(data, dict):
            raise Malformed(f"line {number} is not a JSON object")
        if data.get("type") == "export_header" and "seq" not in data:
            header = data
            continue
        missing = [k for k in EVENT_KEYS if k not in data]
        if missing or not isinstance(data["seq"], int) or not isinstance(data["payload"], dict) \
                or not all(isinstance(data[k], str) for k in ("prev_hash", "hash", "created_at")):
            raise Malformed(f"line {number} is not an event of an export (missing or wrong: "
                            f"{', '.join(missing) or 'seq, payload or hashes'})")
        for key in ("session", "scene", "actor_id", "character"):
            # JCS writes 1.0 as 1, so the hash can't tell them apart: read it as the number it is.
            if isinstance(data[key], float) and data[key].is_integer():
                data[key] = int(data[key])
            if data[key] is not None and type(data[key]) is not int:
                raise Malformed(f"line {number}: its {key} is neither a whole number nor null")
        events.append(data)
    return header, events


def read_receipts(paths: list[str]) -> list[dict]:
    """Checkpoints from files of any shape the server gives them in: one checkpoint, a list, or the
    ``{"checkpoints": [...]}`` that ``GET .../checkpoints`` answers (saved as it came)."""
    receipts = []
    for path in paths:
        with open(path, encoding="utf-8") as f:
            try:
                data = json.load(f)
            except ValueError:
                raise Malformed(f"{path} is not JSON")
        if isinstance(data, dict) and isinstance(data.get("checkpoints"), list):
            data = data["checkpoints"]
        for receipt in data if isinstance(data, list) else [data]:
            if not isinstance(receipt, dict) or not all(k in receipt for k in ("seq", "hash", "signature")):
                raise Malformed(f"{path} holds something that is not a checkpoint "
                                "({campaign, seq, hash, created_at, signature})")
            receipts.append(receipt)
    return receipts


def read_keys(text: str) -> list[dict]:
    """The server's checkpoint keys: ``GET /api/key``'s answer (``{"public_key", "keys": [{"public_key",
    "valid_from", "valid_until"}, ...]}``; older servers give ``public_key`` alone), a list of keys, or one
    key in base64. Each as ``{"key": bytes, "valid_from", "valid_until"}`` (None: unbounded)."""
    try:
        data = json.loads(text)
    except ValueError:
        data = text.strip()
    if isinstance(data, dict) and isinstance(data.get("keys"), list):
        data = data["keys"]
    entries = data if isinstance(data, list) else [data]
    keys = []
    for entry in entries:
        if isinstance(entry, str):
            entry = {"public_key": entry}
        if not isinstance(entry, dict) or not isinstance(entry.get("public_key"), str):
            raise Malformed("the key file is not GET /api/key's answer")
        try:
            raw = base64.b64decode(entry["public_key"], validate=True)
        except (ValueError, binascii.Error):
            raw = b""
        if len(raw) != 32:
            raise Malformed(f"{entry['public_key'][:60]!r} is not an Ed25519 public key in base64")
        keys.append({"key": raw, "valid_from": entry.get("valid_from"), "valid_until": entry.get("valid_until")})
    return keys


def receipt_signature_problem(receipt: dict, keys: list[dict]) -> str:
    """Why no server key signs ``receipt`` at its time ('' when one does): a retired key vouches only for
    what it signed while it was the current one (``valid_from <= created_at < valid_until``)."""
    message = jcs({k: receipt.get(k) for k in ("campaign", "seq", "hash", "created_at")})
    try:
        signature = base64.b64decode(receipt.get("signature", ""), validate=True)
    except (ValueError, TypeError, binascii.Error):
        signature = b""
    created = receipt.get("created_at")
    signers = [k for k in keys if ed25519_verify(k["key"], message, signature)]
    if not signers:
        return "the receipt's signature is not the server key's (none of the keys given signs it)"
    if not any((k["valid_from"] is None or (isinstance(created, str) and k["valid_from"] <= created)) and
               (k["valid_until"] is None or (isinstance(created, str) and created < k["valid_until"])) for k in signers):
        return f"the receipt is signed by a server key that was not valid at its time ({str(created)[:40]})"
    return ""


ANCHOR = re.compile(r"talekeeper\s+(\S+)\s+#(\d+)\s+([0-9a-f\s]+)", re.IGNORECASE)


def parse_anchor(line: str) -> tuple[str, int, str]:
    """``(slug, seq, 24 hex digits)`` of an anchor line (format: docs/fair-dice.md, "Anchors")."""
    text = " ".join(line.split()).strip("\"'`\u201c\u201d ")
    match = ANCHOR.fullmatch(text)
    digits = re.sub(r"\s", "", match.group(3)).lower() if match else ""
    if match is None or len(digits) != 24 or (len(match.group(2)) > 1 and match.group(2).startswith("0")):
        raise Malformed(f"not an anchor line: {line[:80]!r} (it reads: Talekeeper <campaign> #<seq> "
                        "<24 hex digits in groups of 4>)")
    return match.group(1), int(match.group(2)), digits


def anchor_line(slug: str, seq: int, hash_hex: str) -> str:
    """The anchor line of the checkpoint ``(seq, hash)`` of campaign ``slug``."""
    digits = hash_hex[:24].lower()
    return f"Talekeeper {slug} #{seq} " + " ".join(digits[i:i + 4] for i in range(0, 24, 4))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        prog="talekeeper-verify",
        description="Verify a Talekeeper log export: chain, dice, the rules' outcomes, members' signatures, "
                    "reveals, receipts and anchors.")
    parser.add_argument("export", help="JSON Lines export, as a member downloaded it (header line optional)")
    parser.add_argument("--receipt", action="append", default=[], metavar="FILE",
                        help="a checkpoint file: one checkpoint, a list, or GET .../checkpoints's answer")
    parser.add_argument("--key", help="the server's Ed25519 public key, base64 (GET /api/key)")
    parser.add_argument("--key-file", help="a file holding GET /api/key's JSON (every key, with its validity)")
    parser.add_argument("--anchor", action="append", default=[], metavar="LINE",
                        help='an anchor line from your group\'s chat: "Talekeeper <campaign> #<seq> <hex groups>"')
    parser.add_argument("--campaign-id", type=int, help="the campaign's id (needed when the export has no header)")
    args = parser.parse_args(argv)
    try:
        header, events = read_export(args.export)
    except (OSError, Malformed) as e:
        print(f"BAD export: {e}")
        return 2
    try:
        receipts = read_receipts(args.receipt)
        anchors = [parse_anchor(line) for line in args.anchor]
        keys = None
        if args.key_file:
            with open(args.key_file, encoding="utf-8") as f:
                keys = read_keys(f.read())
        elif args.key:
            keys = read_keys(args.key)
    except (OSError, Malformed) as e:
        print(f"BAD input: {e}")
        return 2
    campaign = (header or {}).get("campaign") or {}
    campaign_id = args.campaign_id if args.campaign_id is not None else campaign.get("id")
    if campaign_id is None:
        parser.error("the export has no header line: pass --campaign-id")
    slug = campaign.get("slug")
    created = next((e for e in events if e.get("type") == "campaign_created" and not e.get("hidden")), None)
    system = campaign.get("system") or (created["payload"].get("system") if created else None)
    verifier = Verifier(events, campaign_id, system)  # in file order: a reordered file must fail
    verifier.chain()
    verifier.reveals()
    sessions, dice = verifier.dice()
    verifier.command_ids()
    verifier.signatures()
    verifier.witnessed()
    verifier.senders()
    verifier.displayed_dice()
    replayed = verifier.replay(verifier.system)
    verifier.receipts(receipts, keys, slug)
    verifier.anchors(anchors, slug)
    for note in verifier.notes:
        print(f"note: {note}")
    for warning in verifier.warnings:
        print(warning)
    if verifier.problems:
        for problem in verifier.problems:
            print(problem)
        return 1
    signed = f", signed from #{verifier.signed_from}" if verifier.signed_from is not None else ", not signed"
    print(f"OK {len(events)} events, {dice} dice in {sessions} finished session(s), {replayed} command(s) "
          f"replayed by the rules, {len(verifier.revealed)} reveal(s), {len(receipts)} receipt(s), "
          f"{len(anchors)} anchor(s){signed}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
