#!/usr/bin/env python3
"""A small Talekeeper client for scripts and bots that sends signed commands (docs/fair-dice.md,
"Signed commands"). Python's standard library, ``cryptography`` and the standalone verifier beside it (which defines the
signed bytes), nothing of Talekeeper's server.

    talekeeper_client.py --server URL --token TOKEN --campaign SLUG --key-file FILE register [--label TEXT]
    talekeeper_client.py ... send '{"type": "roll", "notation": "1d20"}'
    talekeeper_client.py ... keys
    talekeeper_client.py ... revoke KEY
    talekeeper_client.py ... endorse KEY

``--token`` is an API token (``manage.py create_token`` or /profile/), or ``TALEKEEPER_TOKEN``.
``--key-file`` holds this script's Ed25519 key (made by ``register`` when missing, mode 0600): keep it
as you would a password, one per machine. ``register`` adds its public key to the campaign's log,
signed by itself; ``send`` signs each command with it for the session running now (after a
``stale_session`` refusal it signs again for the running one, under a new id, as a browser does) and
checks that the server stored exactly what was signed: the command id, the action and the signature.
``endorse`` vouches for another key of yours with this one (docs/fair-dice.md, "Vouching for a new
key"): run it from the machine that holds your earlier key, naming the new one. It prints the stored
events as JSON.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import secrets
import sys
import urllib.error
import urllib.parse
import urllib.request

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

# What a member signs is defined once, by the verifier every member runs (tools/ beside this file).
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from talekeeper_verify import command_message  # noqa: E402


def b64url(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


class Refused(Exception):
    def __init__(self, status: int, error: dict):
        super().__init__(f"{status} {error.get('code')}: {error.get('message')}")
        self.status, self.error = status, error


class Client:
    def __init__(self, server: str, token: str, campaign: str, key: Ed25519PrivateKey):
        self.server, self.token, self.slug, self.key = server.rstrip("/"), token, campaign, key
        raw = key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
        self.public_key = b64url(raw)

    def _call(self, method: str, path: str, body: dict | None = None) -> dict:
        request = urllib.request.Request(
            self.server + path, method=method, data=None if body is None else json.dumps(body).encode("utf-8"),
            headers={"Authorization": f"Bearer {self.token}", "Content-Type": "application/json",
                     "Accept": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                return json.loads(response.read().decode("utf-8"))
        except urllib.error.HTTPError as e:
            try:
                error = json.loads(e.read().decode("utf-8")).get("error") or {}
            except ValueError:
                error = {}
            raise Refused(e.code, {"code": error.get("code", "http_error"), "message": error.get("message", e.reason),
                                   **error}) from None

    def keys(self) -> dict:
        """``GET .../keys``: the campaign's id, the session running and its commitment, every member key."""
        return self._call("GET", f"/api/campaigns/{urllib.parse.quote(self.slug)}/keys")

    def signature(self, campaign: int, session, commitment, command_id: str, action: dict) -> dict:
        message = command_message(campaign, session, commitment, command_id, action)
        return {"key": self.public_key, "session": session, "commitment": commitment,
                "sig": b64url(self.key.sign(message))}

    def send(self, action: dict, tries: int = 3) -> dict:
        """Sign ``action`` for the session running now and send it; the server's answer (the first event
        and ``events``), after checking it stored exactly the envelope signed."""
        where = self.keys()
        for attempt in range(tries):
            command_id = secrets.token_hex(16)  # drawn after the commitment it is signed under is known
            envelope = {"id": command_id, "action": action,
                        "signature": self.signature(where["campaign"], where["session"], where["commitment"],
                                                    command_id, action)}
            try:
                answer = self._call("POST", f"/api/campaigns/{urllib.parse.quote(self.slug)}/commands", envelope)
            except Refused as e:
                if e.error.get("code") != "stale_session" or attempt == tries - 1:
                    raise
                where = {**where, "session": e.error.get("session"), "commitment": e.error.get("commitment")}
                continue
            _check_stored(answer, envelope)
            return answer
        raise AssertionError("unreachable")

    def register(self, label: str) -> dict:
        """Add this key to the campaign's log, signed by itself (nothing to do if it is live already)."""
        listed = [k for k in self.keys()["keys"] if k["key"] == self.public_key]
        if listed and listed[0]["revoked_seq"] is None:
            return listed[0]
        if listed:
            raise SystemExit("This key was revoked in this campaign: make a new key file.")
        return self.send({"type": "add_member_key", "key": self.public_key, "label": label})

    def revoke(self, key: str) -> dict:
        return self.send({"type": "revoke_member_key", "key": key})

    def endorse(self, key: str) -> dict:
        return self.send({"type": "endorse_member_key", "key": key})


def _check_stored(answer: dict, envelope: dict) -> None:
    """The first event holds the envelope as signed (a stored event sealed from its sender can't be
    read here: the verifiers check it once it is revealed)."""
    first = (answer.get("events") or [answer])[0]
    payload = first.get("payload") or {}
    if first.get("hidden"):
        return
    stored = (payload.get("command_id"), payload.get("action"), payload.get("signature"))
    if stored != (envelope["id"], envelope["action"], envelope["signature"]):
        raise SystemExit(f"The server stored #{first.get('seq')} other than it was signed "
                         f"(command id, action or signature): it may have chosen your dice.")


def load_key(path: str, create: bool) -> Ed25519PrivateKey:
    if os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            raw = base64.urlsafe_b64decode(json.load(f)["private_key"] + "==")
        return Ed25519PrivateKey.from_private_bytes(raw)
    if not create:
        raise SystemExit(f"No key file at {path}: run 'register' first.")
    key = Ed25519PrivateKey.generate()
    raw = key.private_bytes(serialization.Encoding.Raw, serialization.PrivateFormat.Raw, serialization.NoEncryption())
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        json.dump({"algorithm": "ed25519", "private_key": b64url(raw)}, f)
    return key


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description="Send signed commands to a Talekeeper campaign.")
    parser.add_argument("--server", required=True, help="the server's address, such as https://table.example")
    parser.add_argument("--token", default=os.environ.get("TALEKEEPER_TOKEN"), help="an API token")
    parser.add_argument("--campaign", required=True, metavar="SLUG")
    parser.add_argument("--key-file", required=True, metavar="FILE")
    sub = parser.add_subparsers(dest="verb", required=True)
    register = sub.add_parser("register", help="add this key to the campaign (signed by itself)")
    register.add_argument("--label", default="a script", help="how the log names this key (1-60 characters)")
    send = sub.add_parser("send", help="sign and send one action (JSON)")
    send.add_argument("action")
    sub.add_parser("keys", help="list the campaign's member keys")
    revoke = sub.add_parser("revoke", help="revoke one of your keys")
    revoke.add_argument("key")
    endorse = sub.add_parser("endorse", help="vouch for another key of yours, added on another device")
    endorse.add_argument("key")
    args = parser.parse_args(argv)
    if not args.token:
        parser.error("--token (or TALEKEEPER_TOKEN) is required")
    client = Client(args.server, args.token, args.campaign, load_key(args.key_file, create=args.verb == "register"))
    try:
        if args.verb == "register":
            result = client.register(args.label)
        elif args.verb == "send":
            try:
                action = json.loads(args.action)
            except ValueError:
                parser.error("the action must be JSON, such as '{\"type\": \"roll\", \"notation\": \"1d20\"}'")
            result = client.send(action)
        elif args.verb == "keys":
            result = client.keys()
        elif args.verb == "endorse":
            result = client.endorse(args.key)
        else:
            result = client.revoke(args.key)
    except Refused as e:
        print(f"refused: {e}", file=sys.stderr)
        return 1
    print(json.dumps(result, indent=2, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
