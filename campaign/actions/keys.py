"""Members' keys and the signature on every command of a campaign whose members sign
(docs/fair-dice.md, "Signed commands"; the reading side is ``campaign/member_keys.py``).

A command's signature is checked under the campaign's lock, before anything is decided, so a refusal
leaves the log untouched:

* ``unsigned`` (400): no ``signature`` in a campaign whose members sign;
* ``bad_signature`` (403): not a key the log holds live for the sender (never added, another member's,
  revoked), or the signature does not verify over this campaign, session, commitment, id and action;
* ``stale_session`` (409): signed for another session or commitment than the one running now; the
  answer names the current ones (``session``, ``commitment``) so the client signs again, under a new id.

``add_member_key`` is signed by the key it adds (the proof the sender holds it); ``revoke_member_key``
by any live key of hers; ``endorse_member_key`` by a live key of hers other than the one it vouches for
(rules/vouching.py). A member holds at most ``MAX_LIVE_KEYS`` live keys in a campaign.
"""

from __future__ import annotations

from rules.declare import Text

from .. import member_keys
from ..eventlog import Draft
from ..models import Campaign, Membership
from .checks import check_name
from .declared import platform_action
from ..errors import ActionError, Conflict, Forbidden, Refused


class Unsigned(ActionError):
    status = 400
    code = "unsigned"


class BadSignature(Forbidden):
    code = "bad_signature"


class StaleSession(Conflict):
    """Signed for another session than the running one: nothing was stored."""

    code = "stale_session"

    def __init__(self, message: str, session: int | None, commitment: str | None):
        super().__init__(message)
        self.session, self.commitment = session, commitment

    def as_json(self) -> dict:
        return {**super().as_json(), "session": self.session, "commitment": self.commitment}


def check_signature(campaign: Campaign, membership: Membership, client_id: str, action: dict, signature,
                    commitment: str | None, keys: dict[str, dict] | None = None) -> None:
    """Refuse the command unless ``signature`` is the sender's, over exactly this command, in the session
    running now (``commitment``: its dice commitment, None outside a session). ``keys``: the campaign's
    keys (``member_keys.key_records``) as the transaction read them already, else they are read."""
    if signature is None:
        raise Unsigned("This campaign's members sign every command: send 'signature' with it "
                       "(docs/fair-dice.md, \"Signed commands\"; tools/talekeeper_client.py signs for scripts).")
    problem = member_keys.shape_problem(signature)
    if problem:
        raise ActionError(problem, "bad_signature")
    session = campaign.current_session
    if (signature["session"], signature["commitment"]) != (session, commitment):
        where = f"session {session} (commitment {commitment})" if session is not None else "no session"
        raise StaleSession(f"Signed for {_where(signature)}, but {where} is running now: nothing was stored. "
                           "Sign it again for the running one, under a new id.", session, commitment)
    key = signature["key"]
    if action.get("type") == member_keys.ADD_KEY:
        if action.get("key") != key:
            raise BadSignature("A key is registered by itself: sign add_member_key with the key it adds.")
    else:
        mine = (member_keys.key_records(campaign.id) if keys is None else keys).get(key)
        if mine is None or mine["actor_id"] != membership.user_id:
            raise BadSignature("That key is not registered for you in this campaign: register it first "
                               "(add_member_key, signed by that key).")
        if mine["revoked_seq"] is not None:
            raise BadSignature(f"That key was revoked at #{mine['revoked_seq']}: sign with a live key of yours.")
        if action.get("type") == member_keys.ENDORSE_KEY and action.get("key") == key:
            raise BadSignature("A key does not vouch for itself: sign endorse_member_key with an older key of yours.")
    message = member_keys.command_message(campaign.id, session, commitment, client_id, action)
    if not member_keys.verifies(key, signature["sig"], message):
        raise BadSignature("The signature does not verify over this campaign, session, command id and action.")


def _where(signature: dict) -> str:
    if signature["session"] is None:
        return "no session" if signature["commitment"] is None else "no session with a commitment"
    return f"session {signature['session']} (commitment {signature['commitment']})"


@platform_action("add_member_key", title="Register a signing key", spectators=True,
                 emits=(member_keys.KEY_ADDED,), help="An Ed25519 public key, signed by itself.",
                 fields={"key": Text(64, label="Public key"), "label": Text(member_keys.MAX_LABEL, label="Label")})
def decide_add_member_key(campaign: Campaign, membership: Membership, action: dict, *_) -> Draft:
    if campaign.signed_from is None:
        raise Refused("This campaign's members do not sign their commands: there are no keys to register.",
                      "not_signed")
    key = action.get("key")
    if not member_keys.is_public_key(key):
        raise ActionError("'key' must be an Ed25519 public key: 32 bytes in base64url, without padding.")
    label = check_name(action.get("label"), "A key's label ('label')", member_keys.MAX_LABEL)
    if member_keys.any_holds(campaign.id, key):
        raise Refused("That key is already registered in this campaign (a key is registered once, ever): "
                      "make a new one.", "key_exists")
    live = [k for k in member_keys.keys_of(campaign.id, membership.user_id).values() if k["revoked_seq"] is None]
    if len(live) >= member_keys.MAX_LIVE_KEYS:
        raise Refused(f"You have {member_keys.MAX_LIVE_KEYS} live keys in this campaign, the most there may be: "
                      "revoke one first.", "too_many_keys")
    return Draft(member_keys.KEY_ADDED, {"key": key, "label": label})


def _live_key_of_hers(campaign: Campaign, membership: Membership, action: dict, what: str) -> str:
    """The key ``action`` names, once it is a live key of the sender's in a campaign whose members sign
    (``what``: the action's verb, for its refusals)."""
    if campaign.signed_from is None:
        raise Refused(f"This campaign's members do not sign their commands: there are no keys to {what}.",
                      "not_signed")
    key = action.get("key")
    if not member_keys.is_public_key(key):
        raise ActionError("'key' must be an Ed25519 public key: 32 bytes in base64url, without padding.")
    mine = member_keys.keys_of(campaign.id, membership.user_id).get(key)
    if mine is None:
        raise Refused("That is not one of your keys in this campaign.")
    if mine["revoked_seq"] is not None:
        raise Refused(f"That key was already revoked at #{mine['revoked_seq']}: there is nothing to {what}.")
    return key


@platform_action("revoke_member_key", title="Revoke a signing key", spectators=True,
                 emits=(member_keys.KEY_REVOKED,), fields={"key": Text(64, label="Public key")})
def decide_revoke_member_key(campaign: Campaign, membership: Membership, action: dict, *_) -> Draft:
    return Draft(member_keys.KEY_REVOKED, {"key": _live_key_of_hers(campaign, membership, action, "revoke")})


@platform_action("endorse_member_key", title="Vouch for a signing key", spectators=True,
                 emits=(member_keys.KEY_ENDORSED,),
                 help="One of your keys, added on another device, vouched for by this device's older key.",
                 fields={"key": Text(64, label="Public key")})
def decide_endorse_member_key(campaign: Campaign, membership: Membership, action: dict, *_) -> Draft:
    """An older key of hers vouches for a newer one (docs/fair-dice.md, "Vouching for a new key"): the
    signature (checked by ``check_signature``, by a live key of hers other than this one) is the
    endorsement. Whether the signing key is itself vouched for is the verifiers' to say, from the log, so a
    key may be vouched for again (by a key that is)."""
    return Draft(member_keys.KEY_ENDORSED, {"key": _live_key_of_hers(campaign, membership, action, "vouch for")})


@platform_action("require_signed_commands", title="Make every member sign", by="gm",
                 gm="make the members sign their commands", emits=(member_keys.SIGNING_REQUIRED,),
                 help="Every member signs their commands from this event on, for good; between sessions only.")
def decide_require_signed_commands(campaign: Campaign, membership: Membership, action: dict, *_) -> Draft:
    """The GM's switch: every member signs her commands from this event on (docs/fair-dice.md, "Which
    campaigns"). Between sessions only, so no session runs under two sets of rules (its dice scheme and
    its signatures), and for good: there is no action that switches it off, and a second one is refused.
    The event itself is not signed (nobody holds a key before it), like ``campaign_created``."""
    if campaign.signed_from is not None:
        raise Refused(f"This campaign's members sign their commands already (from #{campaign.signed_from}): "
                      "signing is never switched off, nor on a second time.", "already_signed")
    if set(action) - {"type"}:
        raise ActionError("'require_signed_commands' takes no fields: it switches signing on, for good.")
    if campaign.current_session is not None:
        raise Refused(f"Members start signing between sessions: end session {campaign.current_session} first.",
                      "in_session")
    # record sets signed_from to this event's seq, from the event (campaign.roster).
    return Draft(member_keys.SIGNING_REQUIRED, dict(member_keys.SIGNING_REQUIRED_PAYLOAD))

