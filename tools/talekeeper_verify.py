#!/usr/bin/env python3
"""Check a Talekeeper log export without trusting the server: Python standard library only.

    python3 talekeeper_verify.py EXPORT.jsonl [--receipt FILE ...] [--key BASE64 | --key-file FILE]
                                              [--campaign-id N]

EXPORT.jsonl is a member's export (``GET /api/campaigns/<slug>/export.jsonl?header=1``, or
``manage.py export_log``), exactly as that member sees it: hidden events arrive sealed and are checked
through their body digest. Receipts are checkpoint JSON files (one checkpoint or a list) from
``GET /api/campaigns/<slug>/checkpoints``; the keys are ``GET /api/key``'s JSON as a file (``--key-file``:
every key with its validity, or, from a server before keys rotated, its one ``public_key``), or one key
as base64 (``--key``, valid at any time).

It checks, and prints ``BAD seq N: why`` for the first failure of each kind (exit status 1):

1. the chain: seq without gaps, every ``prev_hash`` link, every hash (formats 1 and 2);
2. every finished session's dice: the revealed seed against its published commitment, and every die it
   can see (or that a reveal showed) against the seed (schemes v1 and v2), and hidden nonces;
3. every reveal against the body digest (commitment) the sealed event carried in the chain;
   and that no member's command id was used twice (the same id rolls the same dice);
4. every receipt: signed by the server key that was valid at its ``created_at``, and extended by the export
   (same hash at its seq).

Everything here is specified in docs/fair-dice.md and docs/event-log.md; this file is one reading
of those pages, kept free of Talekeeper's own code on purpose.
"""

from __future__ import annotations

import argparse
import base64
import bisect
import hashlib
import hmac
import json
import math
import sys

GENESIS = "0" * 64
SCHEME_V1 = "talekeeper-hmac-sha256-v1"
SCHEME_V2 = "talekeeper-hmac-sha256-v2"

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


def face_v2(seed, campaign_id, session, actor_id, command_id, index, sides) -> int:
    prefix = f"talekeeper-dice-v2|{campaign_id}|{session}|{actor_id}|{command_id}|{index}|"
    return _face(seed, lambda c: prefix + str(c), sides)


def nonce_v2(seed, campaign_id, session, actor_id, command_id) -> str:
    message = f"talekeeper-nonce-v2|{campaign_id}|{session}|{actor_id}|{command_id}".encode("ascii")
    return hmac.new(bytes.fromhex(seed), message, hashlib.sha256).hexdigest()[:32]


def face_v1(seed, campaign_id, session, seq, index, sides, mix, nonce) -> int:
    suffix = f":{nonce}" if nonce else ""
    return _face(seed, lambda c: f"{campaign_id}:{session}:{seq}:{index}:{c}:{mix}{suffix}", sides)


# --- the checks ------------------------------------------------------------------------------

class Verifier:
    def __init__(self, events: list[dict], campaign_id: int):
        self.events, self.campaign_id = events, campaign_id
        self.by_seq = {e["seq"]: e for e in events}
        self.problems: list[str] = []
        self.notes: list[str] = []
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
            for index, (sides, face) in enumerate(log):
                if scheme == SCHEME_V1:
                    mix = sha256_hex("\n".join(player_seeds).encode("utf-8"))
                    want = face_v1(seed, self.campaign_id, session, seq, index, sides, mix,
                                   payload.get("nonce", "") if hidden else "")
                else:
                    want = face_v2(seed, self.campaign_id, session, event["actor_id"], payload.get("command_id"),
                                   index, sides)
                count += 1
                if want != face:
                    self.bad(seq, f"die {index + 1} (d{sides}) shows {face}, the seed gives {want}")
                    break
            if scheme != SCHEME_V1 and hidden and payload.get("nonce_drawn") is not True and \
                    payload.get("nonce") != nonce_v2(seed, self.campaign_id, session, event["actor_id"],
                                                     payload.get("command_id")):
                self.bad(seq, "the hidden roll's nonce is not the one the seed gives")
        return count

    def receipts(self, receipts: list[dict], keys: list[tuple[bytes, str | None, str | None]] | None) -> None:
        """``keys``: ``(public key, valid_from, valid_until)``, a bound ``None`` when open."""
        last = self.events[-1]["seq"] if self.events else 0
        for receipt in receipts:
            seq = receipt.get("seq")
            if keys is None:
                self.notes.append(f"receipt at seq {seq}: signature not checked (no --key)")
            else:
                message = jcs({k: receipt.get(k) for k in ("campaign", "seq", "hash", "created_at")})
                try:
                    signature = base64.b64decode(receipt.get("signature", ""), validate=True)
                except (ValueError, TypeError):
                    signature = b""
                at = receipt.get("created_at")
                if not isinstance(at, str) or not any(
                        (start is None or start <= at) and (end is None or at < end)
                        and ed25519_verify(key, message, signature) for key, start, end in keys):
                    self.bad(seq, "the receipt's signature is not the server key's")
                    continue
            if not isinstance(seq, int) or seq == 0:
                continue
            event = self.by_seq.get(seq)
            if event is None:
                if seq > last:
                    self.bad(seq, f"the log ends at seq {last}, before the receipt's seq (it was truncated)")
                else:
                    self.notes.append(f"receipt at seq {seq} is outside this export")
            elif event["hash"] != receipt.get("hash"):
                self.bad(seq, "the event's hash differs from the receipt's: the log was rewritten up to here")


EVENT_KEYS = ("seq", "type", "version", "payload", "actor_id", "character", "session", "scene", "visibility",
              "created_at", "prev_hash", "hash")


class Malformed(Exception):
    pass


def read_export(path: str) -> tuple[dict | None, list[dict]]:
    header, events = None, []
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, start=1):
            if not line.strip():
                continue
            try:
                data = json.loads(line)
            except ValueError:
                raise Malformed(f"line {number} is not JSON")
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
    receipts = []
    for path in paths:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
        receipts.extend(data if isinstance(data, list) else [data])
    return receipts


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description="Verify a Talekeeper log export (chain, dice, reveals, receipts).")
    parser.add_argument("export", help="JSON Lines export, as a member downloaded it (header line optional)")
    parser.add_argument("--receipt", action="append", default=[], metavar="FILE", help="a checkpoint JSON file")
    parser.add_argument("--key", help="the server's Ed25519 public key, base64 (GET /api/key)")
    parser.add_argument("--key-file", help="a file holding GET /api/key's JSON (every key, with its validity)")
    parser.add_argument("--campaign-id", type=int, help="the campaign's id (needed when the export has no header)")
    args = parser.parse_args(argv)
    try:
        header, events = read_export(args.export)
    except (OSError, Malformed) as e:
        print(f"BAD export: {e}")
        return 2
    campaign_id = args.campaign_id if args.campaign_id is not None else (header or {}).get("campaign", {}).get("id")
    if campaign_id is None:
        parser.error("the export has no header line: pass --campaign-id")
    keys = [(base64.b64decode(args.key), None, None)] if args.key else None
    if args.key_file:
        with open(args.key_file, encoding="utf-8") as f:
            answer = json.load(f)
        listed = answer.get("keys") or [{"public_key": answer["public_key"], "valid_from": None, "valid_until": None}]
        keys = [(base64.b64decode(k["public_key"]), k.get("valid_from"), k.get("valid_until")) for k in listed]
    verifier = Verifier(events, campaign_id)  # in file order: a reordered file must fail, not be sorted back
    verifier.chain()
    verifier.reveals()
    sessions, dice = verifier.dice()
    verifier.command_ids()
    verifier.receipts(read_receipts(args.receipt), keys)
    for note in verifier.notes:
        print(f"note: {note}")
    if verifier.problems:
        for problem in verifier.problems:
            print(problem)
        return 1
    print(f"OK {len(events)} events, {dice} dice in {sessions} finished session(s), "
          f"{len(verifier.revealed)} reveal(s), {len(args.receipt)} receipt file(s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
