"""Who could send a member's command, as every verifier reads it from the log (docs/fair-dice.md, "Who
may send a command").

Pure, like the rest of ``rules/``: the server's checks of its own database (campaign/member_keys.py, for
``verify_dice`` and ``verify_log``) and the members' standalone verifier (tools/talekeeper_verify.py,
shipped with ``rules/``) read a log through :func:`problems`, so the two can't drift apart. The browser's
copy is static/talekeeper/senders.js. :class:`Seats` is the fold they read, and rules/witness.py reads
it too (whose rolls wait for witnesses follows the members' roles and the characters' owners).

A member's command in the log is a signed command's first event (``command_id``, ``action`` and
``signature`` in its payload, no ``command_of``). Its sender could send it when

- she is a member of the campaign at that point of the log: the GM who created it (``campaign_created``'s
  actor), or one who joined (``member_joined``) and was not removed since (``member_removed``), in the role
  the last of those or a ``member_role_changed`` gave her;
- she may act for every character its action names (``character``; a GM's request names several,
  ``characters``), as the server's ``access_character`` lets her: a GM for any; a player for her own
  player character, never for an NPC (NPCs are the GM's); a spectator for none.

A character's owner and whether it is an NPC are what its ``character_created`` says. When a signed
command made it, they are what that command says (the payload beside it is the server's to write, the
action is the sender's): its sender owns it unless her action names an ``owner`` (a GM giving it to a
player: the member the log calls so), and it is an NPC if her action says ``npc``; a payload saying
otherwise is named.

A member is named by her id (``user_id``, a character's ``owner_id``): a username is no part of the
chain. An event stored before events carried the id names her by username. :class:`Seats` is the one
reading of which member such a membership event names, for every verifier and for the server's rebuild
of its rows from the log (campaign/roster.py folds the log through it): a join by someone not yet a
member is its actor's (the invite link); else the name an earlier event, or an earlier event's actor,
gave her; else a verifier waits for the first later event whose actor is called so, where the host asks
its accounts for the one called so now (``Seats(account=...)``): the same member, as an event's actor is
named as she is called now. What a verifier
can't read it leaves alone: an event sealed from its reader; a log read from later than its first event
(the table's window starts where it starts); a character whose owner the log names only by a username it
never ties to an id; and, in a log whose membership events from before members signed name someone it
never ties to an id, a sender who is no member it knows of (who the members were can't be said).
"""

from __future__ import annotations

from typing import Callable, NamedTuple

GM, SPECTATOR = "gm", "spectator"
MEMBERSHIP = frozenset({"member_joined", "member_role_changed", "member_removed"})
SIGNING_REQUIRED = "signed_commands_required"
SCHEME_V3 = "talekeeper-hmac-sha256-v3"  # a session of it signs from the event after its start
NOT_A_MEMBER = ("a command by someone who is not a member of the campaign at this point of the log (never joined, "
                "or removed since): only a member's commands are taken")
MAY_NOT_ACT = "a command for character {character}, which its sender may not act for: {why}"
NOT_AS_SIGNED = ("a character whose owner or NPC mark is not what the signed command that made it says: the "
                 "sender owns what she makes, unless her action gives it to another, and it is an NPC if it says so")


class Character(NamedTuple):
    owner: int | None  # None: named by a username the log never ties to an id
    npc: bool


class Change(NamedTuple):
    """A membership event's effect: ``who`` (None: a username the log ties to no id yet), her role
    before (``"gm"`` inside a session where she was one at any point), and after (None: removed)."""

    who: int | None
    was: str | None
    role: str | None


class Read(NamedTuple):
    problem: str  # why the event is no command its sender could send ('' when it is, or is no command)
    change: Change | None  # what it changed of the members, if it is a membership event


class Seats:
    """The members and the characters' owners as the log says, event by event (:meth:`see`, in seq order).

    ``account``, if given, names the id of the account called so now (None: no account is), asked by
    :meth:`named` only where the log ties a username to no id yet: the host's reading (campaign/roster.py,
    for a membership event, and for a character's owner its rebuild reads by name). A verifier has none:
    it waits for a later event's actor called so instead."""

    def __init__(self, account: Callable[[str], int | None] | None = None):
        self.account = account
        self.roles: dict[int, str] = {}  # member id -> role
        self.names: dict[str, int | None] = {}  # a username as the log or an event's actor named her -> her id
        # A username a membership event named without an id the log ties to her yet -> (the role it left
        # her, None if removed; whether it came before members signed).
        self.unnamed: dict[str, tuple[str | None, bool]] = {}
        self.characters: dict[int, Character] = {}
        # Who was a GM at any point of the session now read (GM at its start, or made one in it).
        self.session, self.gm_this = None, set()
        self.from_start = False  # the log's first event was read: who is a member can be said
        self.signing = False  # members sign from here on

    def see(self, e) -> Read:
        """Read one event (a ``rules.witness.Seen``): whether its sender could send it, then fold it."""
        if e.actor is not None and e.actor not in self.names:
            self.names[e.actor] = e.actor_id
            if e.actor in self.unnamed and e.actor_id is not None:  # an older event named her so: it was she
                self._seat(e.actor_id, self.unnamed.pop(e.actor)[0])
        if e.session is not None and e.session != self.session:
            self.session, self.gm_this = e.session, {member for member, role in self.roles.items() if role == GM}
        if e.payload is None:
            return Read("", None)
        problem = self._problem(e)
        return Read(problem, self._fold(e))

    def gms(self, character) -> bool:
        """Whether ``character`` (an id) is a GM's: an NPC, or owned by a member who is a GM, or was one at
        any point of the session now read. A character the log does not show here is not known to be."""
        known = self.characters.get(character) if type(character) is int else None
        if known is None:
            return False
        return known.npc or known.owner is not None and (self.roles.get(known.owner) == GM
                                                          or known.owner in self.gm_this)

    # --- what the log says ------------------------------------------------------------------------------

    def _fold(self, e) -> Change | None:
        p, kind = e.payload, e.type
        if kind == "campaign_created":  # its actor is the GM
            self.from_start = True
            self.signing = self.signing or p.get("signed_commands") is True
            if e.actor_id is not None:
                self.roles[e.actor_id] = GM
            if isinstance(p.get("gm"), str):
                self.names[p["gm"]] = e.actor_id
        elif kind == SIGNING_REQUIRED or kind == "session_started" and p.get("dice_scheme") == SCHEME_V3:
            self.signing = True
        elif kind in MEMBERSHIP:
            role = None if kind == "member_removed" else p.get("role")
            who = self._member(e)
            if who is None:
                if isinstance(p.get("username"), str):
                    self.unnamed[p["username"]] = (role, not self.signing)
                return Change(None, None, role)
            was = GM if e.session is not None and who in self.gm_this else self.roles.get(who)
            self._seat(who, role)
            # A GM who leaves stays in gm_this: a GM who leaves and rejoins is one still, to the session's end.
            if e.session is not None and role == GM:
                self.gm_this.add(who)
            return Change(who, was, role)
        elif kind == "character_created" and type(e.character) is int:
            self.characters[e.character] = self._made(e, p)
        return None

    def _seat(self, who: int, role: str | None) -> None:
        if role is None:
            self.roles.pop(who, None)
        else:
            self.roles[who] = role

    def named(self, username) -> int | None:
        """The id the log ties ``username`` to, else the ``account`` called so (None: neither says)."""
        if not isinstance(username, str):
            return None
        who = self.names.get(username)
        if who is None and self.account is not None:
            who = self.account(username)
        return who

    def _member(self, e) -> int | None:
        """The member a membership event names (see the module)."""
        p = e.payload
        if type(p.get("user_id")) is int:
            if isinstance(p.get("username"), str):
                self.names[p["username"]] = p["user_id"]
            return p["user_id"]
        if e.type == "member_joined" and e.actor_id is not None and e.actor_id not in self.roles:
            who = e.actor_id  # only a member adds another: an outsider joining joined by the invite link
        else:
            who = self.named(p.get("username"))
        if who is not None and isinstance(p.get("username"), str):
            self.names[p["username"]] = who
            self.unnamed.pop(p["username"], None)
        return who

    def _made(self, e, p: dict) -> Character:
        """The owner and NPC mark of the character a ``character_created`` makes."""
        action = p.get("action") if "signature" in p else None
        if isinstance(action, dict) and action.get("owner") is None:
            return Character(e.actor_id, action.get("npc") is True)  # her own, as she signed it
        # Given to a member: the one the log calls so (the name her sender signed), else the payload's.
        given = self.names.get(action["owner"]) if isinstance(action, dict) and isinstance(action["owner"], str) \
            else None
        if given is not None:
            owner = given
        elif type(p.get("owner_id")) is int:
            owner = p["owner_id"]
        else:
            owner = self.names.get(p.get("owner")) if isinstance(p.get("owner"), str) else None
        npc = action.get("npc") is True if isinstance(action, dict) else p.get("npc") is True
        return Character(owner, npc)

    # --- what a sender could send -------------------------------------------------------------------------

    def _problem(self, e) -> str:
        p = e.payload
        action = p.get("action")
        if not self.from_start or "signature" not in p or "command_of" in p or not isinstance(action, dict) \
                or e.actor_id is None:
            return ""  # no member's command (or no first event: campaign/member_keys.py names that), or unread
        role = self.roles.get(e.actor_id)
        if role is None:
            return "" if any(before for _, before in self.unnamed.values()) else NOT_A_MEMBER
        for character in named_characters(action):
            why = self._may_not_act(e.actor_id, role, character)
            if why:
                return MAY_NOT_ACT.format(character=character, why=why)
        if e.type == "character_created" and type(e.character) is int:
            made = self._made(e, p)
            if p.get("owner_id", made.owner) != made.owner or (p.get("npc") is True) != made.npc:
                return NOT_AS_SIGNED
        return ""

    def _may_not_act(self, actor: int, role: str, character: int) -> str:
        """Why a member of ``role`` may not act for ``character`` ('' when she may): as ``access_character``."""
        if role == GM:
            return ""
        if role == SPECTATOR:
            return "a spectator acts for nobody"
        known = self.characters.get(character)
        if known is None:
            return "the log shows no character of hers by that id"
        if known.npc:
            return "an NPC is the GM's"
        if known.owner is not None and known.owner != actor:
            return "it is another member's"
        return ""


def named_characters(action: dict) -> list[int]:
    """The characters an action names to act for: ``character``, and each of a GM's ``characters``."""
    named = [action["character"]] if type(action.get("character")) is int else []
    if isinstance(action.get("characters"), list):
        named += [c for c in action["characters"] if type(c) is int]
    return named


def character_of(payload: dict) -> int | None:
    """The character a command's first event acts for (its action's ``character``), if any."""
    action = payload.get("action")
    return action.get("character") if isinstance(action, dict) and type(action.get("character")) is int else None


def problems(events) -> list[tuple[int, str]]:
    """``(seq, why)`` for each member's command the log holds that its sender could not send (see the module)."""
    seats = Seats()
    return [(e.seq, read.problem) for e in events if (read := seats.see(e)).problem]
