"""Members' signed commands, the server's side (docs/fair-dice.md, "Signed commands").

In a campaign whose members sign (``Campaign.signed_from``), every command a member sends carries
``signature``: ``{"key", "session", "commitment", "sig"}``, an Ed25519 signature (base64url, no
padding) by one of her keys over :func:`command_message`: the JCS of the campaign's id, the session
she sent it in and that session's dice commitment (both null outside a session), the command id and
the action exactly as sent. Her keys are in the log itself: ``member_key_added`` (signed by the key
it adds) and ``member_key_revoked`` events, so every verifier knows them from her export.

The server checks each signature before it decides anything (:func:`check`), and the command's
first event keeps the envelope verbatim (``command_id``, ``action``, ``signature``): the host can't
act in her name, change what she sent, or store it in another session, without every member's
tools seeing it. This module only reads; the events are recorded by ``campaign.actions``.
"""

from __future__ import annotations

import base64
import binascii
import re

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

import rules.senders as senders
import rules.vouching as vouching
import rules.witness as witness

from .canonical import jcs
from .models import Campaign, Event

COMMAND_SCHEME = "talekeeper-command-v1"
KEY_ADDED, KEY_REVOKED = "member_key_added", "member_key_revoked"
ADD_KEY, REVOKE_KEY = "add_member_key", "revoke_member_key"
# An older key of hers vouches for a newer one (rules/vouching.py; docs/fair-dice.md, "Vouching for a new key").
ENDORSE_KEY, KEY_ENDORSED = vouching.ENDORSE, vouching.ENDORSED
# The GM's switch that makes an existing campaign's members sign from here on, and its event: once,
# between sessions, never off (docs/fair-dice.md, "Which campaigns").
REQUIRE_SIGNING, SIGNING_REQUIRED = "require_signed_commands", "signed_commands_required"
SIGNING_REQUIRED_PAYLOAD = {"signed_commands": True}
MAX_LIVE_KEYS = 20  # per member and campaign: devices, scripts and a spare or two
MAX_LABEL = 60
SIGNATURE_FIELDS = frozenset({"key", "session", "commitment", "sig"})
_B64URL = re.compile(r"^[A-Za-z0-9_-]+$")


def unb64url(text) -> bytes | None:
    """The bytes of unpadded base64url ``text``; None if it is not that."""
    if not isinstance(text, str) or not _B64URL.match(text) or len(text) % 4 == 1 or len(text) > 200:
        return None
    try:
        return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except (ValueError, binascii.Error):
        return None


def is_public_key(text) -> bool:
    raw = unb64url(text)
    return raw is not None and len(raw) == 32


def command_message(campaign_id: int, session, commitment, command_id: str, action: dict) -> bytes:
    """The bytes a member signs for one command."""
    return jcs({"scheme": COMMAND_SCHEME, "campaign": campaign_id, "session": session, "commitment": commitment,
                "id": command_id, "action": action})


def verifies(key: str, sig: str, message: bytes) -> bool:
    raw, signature = unb64url(key), unb64url(sig)
    if raw is None or len(raw) != 32 or signature is None or len(signature) != 64:
        return False
    try:
        Ed25519PublicKey.from_public_bytes(raw).verify(signature, message)
    except (InvalidSignature, ValueError):
        return False
    return True


def shape_problem(signature) -> str:
    """Why ``signature`` is not a signature object ('' when it is one)."""
    if not isinstance(signature, dict) or set(signature) != SIGNATURE_FIELDS:
        return "'signature' must be an object {\"key\", \"session\", \"commitment\", \"sig\"}."
    if not is_public_key(signature["key"]):
        return "'signature.key' must be an Ed25519 public key: 32 bytes in base64url."
    raw = unb64url(signature["sig"])
    if raw is None or len(raw) != 64:
        return "'signature.sig' must be an Ed25519 signature: 64 bytes in base64url."
    session = signature["session"]
    if session is not None and (isinstance(session, bool) or not isinstance(session, int)):
        return "'signature.session' must be the session's number, or null outside a session."
    commitment = signature["commitment"]
    if commitment is not None and (not isinstance(commitment, str) or len(commitment) != 64):
        return "'signature.commitment' must be the session's dice commitment, or null outside a session."
    return ""


# --- the keys the log holds ------------------------------------------------------------------------

def key_events(campaign_id: int, actor_id: int | None = None):
    rows = Event.objects.filter(campaign_id=campaign_id, type__in=(KEY_ADDED, KEY_REVOKED))
    if actor_id is not None:
        rows = rows.filter(actor_id=actor_id)
    return rows.order_by("seq")


def keys_of(campaign_id: int, actor_id: int | None = None) -> dict[str, dict]:
    """Every key the log registered (for ``actor_id``, or anyone), in the order added:
    ``{key: {"actor_id", "member", "label", "added_seq", "revoked_seq"}}``."""
    keys: dict[str, dict] = {}
    for event in key_events(campaign_id, actor_id).select_related("actor"):
        key = event.payload.get("key")
        if event.type == KEY_ADDED and isinstance(key, str) and key not in keys:
            keys[key] = {"actor_id": event.actor_id, "member": event.actor.username if event.actor else None,
                         "label": event.payload.get("label"), "added_seq": event.seq, "revoked_seq": None}
        elif event.type == KEY_REVOKED and key in keys and keys[key]["actor_id"] == event.actor_id \
                and keys[key]["revoked_seq"] is None:
            keys[key]["revoked_seq"] = event.seq
    return keys


def key_records(campaign_id: int) -> dict[str, dict]:
    """What the log says of each key it registered (as :func:`keys_of` would, without names and labels):
    ``{key: {"actor_id", "added_seq", "revoked_seq"}}``. The command pipeline's check reads it once per
    transaction: by the keys' own events only (the campaign's key events, by the (campaign, type, seq)
    index), never by the sender's, whose count grows with her history."""
    records: dict[str, dict] = {}
    # The campaign's key events (a few per member), matched here: sorted by the query, PostgreSQL may walk
    # the whole log by its (campaign, seq) index, and a JSON lookup costs more to build than to filter.
    rows = Event.objects.filter(campaign_id=campaign_id, type__in=(KEY_ADDED, KEY_REVOKED)).order_by()
    for seq, kind, actor_id, payload in sorted(rows.values_list("seq", "type", "actor_id", "payload")):
        key = payload.get("key") if isinstance(payload, dict) else None
        if not isinstance(key, str):
            continue
        record = records.get(key)
        if kind == KEY_ADDED and record is None:
            records[key] = {"actor_id": actor_id, "added_seq": seq, "revoked_seq": None}
        elif kind == KEY_REVOKED and record is not None and record["actor_id"] == actor_id \
                and record["revoked_seq"] is None:
            record["revoked_seq"] = seq
    return records


def any_holds(campaign_id: int, key: str) -> bool:
    """Whether the log ever registered ``key``, for anyone (a key is registered once, ever)."""
    return Event.objects.filter(campaign_id=campaign_id, type=KEY_ADDED, payload__key=key).exists()


def keys_json(campaign: Campaign, commitment: str | None) -> dict:
    """``GET /api/campaigns/<slug>/keys``: what static/talekeeper/keys.js reads, and what a script signs
    its next command with (the campaign's id, the session running and its dice commitment)."""
    return {"campaign": campaign.id, "signed_from": campaign.signed_from, "session": campaign.current_session,
            "commitment": commitment,
            "keys": [{"member": k["member"], "key": key, "label": k["label"], "added_seq": k["added_seq"],
                      "revoked_seq": k["revoked_seq"]} for key, k in keys_of(campaign.id).items()]}


# --- checking a stored log (manage.py verify_dice and verify_log) ------------------------------------

# Events the server makes by itself, with no member's command: the only ones without a signature.
SERVER_MADE = frozenset({"campaign_created", "member_joined"})
SCHEME_V3 = "talekeeper-hmac-sha256-v3"


def signing_from(events) -> int | None:
    """The seq from which every member's command must be signed, read from the log as every member's
    tools read it: ``campaign_created`` with ``signed_commands``, the first ``signed_commands_required``,
    or the event after the first ``session_started`` of dice scheme v3."""
    for event in events:
        on = signs_from(event)
        if on is not None:
            return on
    return None


def signs_from(event) -> int | None:
    """The seq from which members sign, if ``event`` is the one that turns signing on (see
    :func:`signing_from`); None otherwise."""
    if event.type == "campaign_created" and event.payload.get("signed_commands") is True:
        return event.seq
    if event.type == SIGNING_REQUIRED:
        return event.seq
    if event.type == "session_started" and event.payload.get("dice_scheme") == SCHEME_V3:
        return event.seq + 1
    return None


def signed_from_in_log(campaign_id: int) -> int | None:
    """:func:`signing_from` of the stored log: what ``Campaign.signed_from`` holds (campaign.roster folds
    it as the events are recorded)."""
    return signing_from(Event.objects.filter(campaign_id=campaign_id,
                                             type__in=("campaign_created", SIGNING_REQUIRED, "session_started"))
                        .order_by("seq").only("seq", "type", "payload"))


def switch_problem(seq: int, on: int, payload, session, running) -> str:
    """Why a ``signed_commands_required`` event at ``seq`` is not the one switch that turned signing on
    at ``on`` ('' when it is): there is one, stored between sessions, that only ever says "on"."""
    if seq != on:
        return (f"a second switch of signed commands, which came on at #{on}: they are required once, "
                "and never switched off or on again")
    if session is not None or running is not None:
        return "signed commands switched on inside a session: they come on between sessions only"
    if payload != SIGNING_REQUIRED_PAYLOAD:
        return "a switch of signed commands that does not say they are required: signing is never switched off"
    return ""


SEEN_FIELDS = ("seq", "type", "payload", "actor_id", "session", "character_id", "actor__username")


def as_seen(event: Event) -> witness.Seen:
    """A stored event as the verifiers read it (loaded with ``select_related("actor")`` and
    :data:`SEEN_FIELDS`): its actor named as she is called now, as in a member's export."""
    return witness.Seen(event.seq, event.type, event.payload, event.actor_id,
                        event.actor.username if event.actor else None, event.session, event.character_id)


def signature_problems(campaign: Campaign, warnings: list[str] | None = None) -> list[tuple[int, str]]:
    """``(seq, why)`` for every event of the stored log that breaks the rules of signed commands, the
    standalone verifier's (docs/fair-dice.md, section 5 items 6 and 7), on the host's own database:
    from where signing is on, every event is server-made, a command's first event signed by a key
    the log registered live for its actor over the action stored in the session it was stored in,
    or a later event naming its command's first; no member's command id is stored twice; every member's
    command is a member's, for characters she may act for (rules/senders.py); and witnessed rolls are
    witnessed (rules/witness.py). ``warnings``, if given, gains a line for each key no earlier key of its
    member vouched for (rules/vouching.py)."""
    events = list(Event.objects.filter(campaign=campaign).order_by("seq").select_related("actor")
                  .only(*SEEN_FIELDS))
    seen = [as_seen(e) for e in events]
    # Witnessed rolls (docs/fair-dice.md, "Witnessed rolls"): every contribution included, by its witnesses;
    # and every member's command sent by a member who may act for its characters ("Who may send a command").
    problems: list[tuple[int, str]] = witness.problems(seen) + senders.problems(seen)
    seen_ids: dict = {}
    for event in events:
        command_id = event.payload.get("command_id")
        if command_id is not None:
            key = (event.actor_id, repr(command_id))
            if key in seen_ids:
                problems.append((event.seq, f"command id {str(command_id)[:40]} of this member was used before, "
                                            f"in #{seen_ids[key]}"))
            else:
                seen_ids[key] = event.seq
    on = signing_from(events)
    if on is None:
        return sorted(problems, key=lambda p: p[0])
    keys: dict[str, dict] = {}
    firsts: dict[int, object] = {}
    commitments: dict[int, str] = {}
    running = None
    for event in events:
        payload = event.payload
        sent_in = running
        if event.type == "session_started" and isinstance(payload.get("session"), int):
            commitments.setdefault(payload["session"], payload.get("dice_commitment"))
            running = (event.session, commitments.get(event.session))
        elif event.type == "session_ended":
            running = None
        if event.seq < on:
            continue
        if event.type == SIGNING_REQUIRED:
            problem = switch_problem(event.seq, on, payload, event.session, sent_in)
            if problem:
                problems.append((event.seq, problem))
            continue
        if event.type == "session_started" and payload.get("dice_scheme") != SCHEME_V3:
            problems.append((event.seq, f"session {payload.get('session')} starts under another dice scheme than v3 "
                                        f"after signed commands came on at #{on}"))
        if event.session is not None and payload.get("verifiable") is False:
            problems.append((event.seq, "stored \"verifiable\": false inside a session of a signed log"))
        if event.type in SERVER_MADE and not any(k in payload for k in ("command_id", "signature", "command_of")):
            continue
        if "command_of" in payload:
            first = firsts.get(payload["command_of"]) if type(payload["command_of"]) is int else None
            if first is None or first.seq >= event.seq:
                problems.append((event.seq, f"names #{str(payload['command_of'])[:20]} as its command's first event, "
                                            "which is not an earlier signed command"))
            elif (first.actor_id, first.session) != (event.actor_id, event.session):
                problems.append((event.seq, f"a later event of #{first.seq}'s command, by another member or in "
                                            "another session"))
            continue
        problem = _command_problem(campaign.id, event, keys, sent_in)
        if problem:
            problems.append((event.seq, problem))
        else:
            firsts[event.seq] = event
            problems.extend(_keep_key(event, keys))
    if warnings is not None:
        warnings.extend(vouching.warning(keys[key]["member"], key, added) for added, key in vouching.unvouched(keys))
    return sorted(problems, key=lambda p: p[0])


def _command_problem(campaign_id: int, event, keys: dict, sent_in) -> str:
    payload = event.payload
    command_id, action, signature = payload.get("command_id"), payload.get("action"), payload.get("signature")
    if command_id is None and action is None and signature is None:
        return "not signed: a member's event with no signed command behind it"
    if not isinstance(command_id, str) or not isinstance(action, dict) or shape_problem(signature):
        return "a command's first event without its command id, its action and its signature"
    if not verifies(signature["key"], signature["sig"],
                    command_message(campaign_id, signature["session"], signature["commitment"], command_id, action)):
        return "its signature does not verify over the action stored (changed, or never signed by this key)"
    filled = payload.get("filled", {})
    if not isinstance(filled, dict) or set(filled) & set(action):
        return "its 'filled' numbers overwrite keys of the signed action"
    if action.get("type") == ADD_KEY:
        if action.get("key") != signature["key"] or payload.get("key") != signature["key"]:
            return "a key registered without its own signature (signed by another key)"
        if signature["key"] in keys:
            return "registers a key the log already holds"
    else:
        holder = keys.get(signature["key"])
        if holder is None or holder["actor"] != event.actor_id:
            return ("signed by a key the log never registered for this member before it" if holder is None
                    else f"signed by another member's key (#{holder['added']})")
        if holder["revoked"] is not None:
            return f"signed by a key revoked at #{holder['revoked']}"
    number, commitment = sent_in if sent_in is not None else (None, None)
    if (signature["session"], signature["commitment"]) != (number, commitment):
        where = f"session {number}" if number is not None else "no session"
        return (f"signed for session {signature['session']} (commitment {str(signature['commitment'])[:12]}), "
                f"but stored in {where}: a signature replayed from elsewhere")
    return ""


def _keep_key(event, keys: dict) -> list[tuple[int, str]]:
    action = event.payload["action"]
    if action.get("type") == ADD_KEY:
        live = sum(1 for k in keys.values() if k["actor"] == event.actor_id and k["revoked"] is None)
        keys[action["key"]] = {"actor": event.actor_id, "added": event.seq, "revoked": None, "vouched": live == 0,
                               "member": event.actor.username if event.actor else None}
        if live >= MAX_LIVE_KEYS:
            return [(event.seq, f"a {MAX_LIVE_KEYS + 1}st live key of this member")]
    elif action.get("type") == REVOKE_KEY:
        target = keys.get(action.get("key"))
        if target is None or target["actor"] != event.actor_id:
            return [(event.seq, "revokes a key that is not one of this member's")]
        if target["revoked"] is None:
            target["revoked"] = event.seq
    elif action.get("type") == ENDORSE_KEY:
        signer = event.payload["signature"]["key"]
        problem = vouching.endorsement_problem(keys, event.actor_id, signer, action, event.payload)
        if problem:
            return [(event.seq, problem)]
        vouching.endorse(keys, signer, action["key"])
    return []
