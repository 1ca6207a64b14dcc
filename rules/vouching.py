"""Which of a member's signing keys her earlier keys vouch for (docs/fair-dice.md, "Signed commands",
*Vouching for a new key*), as every Python verifier reads it: ``campaign.member_keys.signature_problems``
(``manage.py verify_log`` and ``verify_dice``) and the standalone verifier. static/talekeeper/signed.js
reads the same rules in the browser.

A key registers itself (``member_key_added``, signed by the key it adds), so a host can register one in
a member's name. A key added while she holds no live key is taken on first use; one added while she
holds one is *vouched for* once ``endorse_member_key`` ``{"key"}`` (stored as ``member_key_endorsed``),
signed by a live key of hers that is itself vouched for, names it. A later key nobody vouched for is a
warning, not a failure: a member who lost her only device adds one legitimately. An endorsement that
names another member's key, a key the log does not hold, a revoked key or the key that signs it is BAD.

The verifiers' key records are dicts ``{"actor", "added", "revoked", ...}`` keyed by the public key;
this module adds ``"vouched"`` to them. The signature itself (over the campaign, the session, the
command id and the action, which names the key) is checked as every command's is, by the caller.
"""

from __future__ import annotations

ENDORSE = "endorse_member_key"
ENDORSED = "member_key_endorsed"


def on_first_use(keys: dict, actor) -> bool:
    """Whether a key ``actor`` adds now is taken on first use: she holds no live key to vouch for it."""
    return not any(k["actor"] == actor and k["revoked"] is None for k in keys.values())


def endorsement_problem(keys: dict, actor, signer: str, action: dict, payload: dict) -> str:
    """Why an ``endorse_member_key`` command, signed by ``signer`` (a live key of ``actor``'s, checked by
    the caller), vouches for nothing ('' when it is a valid endorsement)."""
    target = action.get("key")
    if payload.get("key") != target:
        return "stores another key than the one its signed action vouches for"
    record = keys.get(target) if isinstance(target, str) else None
    if record is None or record["actor"] != actor:
        return ("vouches for a key the log never registered" if record is None
                else "vouches for another member's key")
    if target == signer:
        return "a key vouching for itself"
    if record["revoked"] is not None:
        return f"vouches for a key revoked at #{record['revoked']}"
    return ""


def endorse(keys: dict, signer: str, target: str) -> None:
    """Record a valid endorsement: it vouches for ``target`` if ``signer`` is vouched for itself."""
    if keys[signer].get("vouched", True):
        keys[target]["vouched"] = True


def unvouched(keys: dict) -> list[tuple[int, str]]:
    """``(added seq, key)`` of every key no earlier key of its member vouched for, in the order added."""
    return sorted((k["added"], key) for key, k in keys.items() if k.get("vouched") is False)


def warning(member, key: str, added: int) -> str:
    return (f"WARNING seq {added}: {member or 'a former member'}'s key {key[:12]}… is not vouched for by her earlier "
            "keys: added while she held a live key, and none of them endorsed it (a device she lost, or a key "
            "someone else added in her name)")
