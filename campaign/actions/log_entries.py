"""The GM's tools on the log itself: void a mistaken event, reveal a hidden roll, ask for a roll."""

from __future__ import annotations

import rules.witness as witnessed
from rules.declare import Choice, Either, ListOf, Object

from ..eventlog import Draft, event_body, hashed_fields
from ..models import VISIBILITY_PUBLIC, Campaign, Character, Event, Membership
from .access import access_character
from .checks import check_reason
from .declared import character_id, platform_action, reason_field, seq_field
from ..errors import ActionError, Refused
from ..visibility import readers
from .kept import stored_readers, stored_visibility

# Events that can't be voided: the campaign's frame, not something that happened in play.
UNVOIDABLE = frozenset({"campaign_created", "member_joined", "character_created", "event_voided", "roll_revealed",
                        "session_started", "session_ended", "scene_started", "scene_ended",
                        "member_removed", "member_role_changed", "campaign_renamed", "signed_commands_required",
                        # Campaign-wide or of several characters: a new event corrects them
                        # (configure again, show the NPC again, the encounter's own commands).
                        "campaign_configured", "npc_shown", "encounter_started", "combatant_added",
                        "turn_order_set", "turn_advanced", "encounter_ended",
                        # A fight's rounds read its own earlier events: the GM ends it instead.
                        "fight_started", "fight_choice_made", "fight_round_rolled", "fight_ended"})


def check_seq(campaign: Campaign, action: dict) -> Event:
    seq = action.get("seq")
    if isinstance(seq, bool) or not isinstance(seq, int) or not 1 <= seq <= campaign.last_seq:
        raise ActionError(f"'seq' must be the number of an event in this log (1 to {campaign.last_seq}).")
    return Event.objects.get(campaign=campaign, seq=seq)


@platform_action("void", title="Void an event", by="gm", gm="void events", emits=("event_voided",),
                 help="A mistaken event stays in the log; its void says why, and every fold skips it.",
                 fields={"seq": seq_field("Event (its seq)"), "reason": reason_field(required=True)})
def decide_void(campaign: Campaign, membership: Membership, action: dict, *_) -> Draft:
    """Void a mistaken event: a new event with a reason; the original stays, projections skip it."""
    target = check_seq(campaign, action)
    reason = check_reason(action, required=True)
    if target.type in UNVOIDABLE:
        raise Refused(f"A '{target.type}' event can't be voided.")
    if (target.payload or {}).get("sides"):
        # Several characters' states read it: a void would have to replay them all. The GM
        # ends the contest and adjusts the sheets instead (adjust_sheet).
        raise Refused(f"Event {target.seq} is a round of a contest between characters: it can't be voided; "
                      "end the contest and adjust the sheets instead.")
    if Event.objects.filter(campaign=campaign, type="event_voided", payload__seq=target.seq).exists():
        raise Refused(f"Event {target.seq} is already voided.")
    # Read by exactly those who may read its target (it names the target's character, and that
    # character's sheet comes with it); a void of an NPC the players may not see is the GM's.
    visibility, shared = stored_readers(target.character, *readers.readers_of(target))
    payload = {"seq": target.seq, "type": readers.shown_type(target), "reason": reason}
    return Draft("event_voided", readers.naming_readers(payload, shared), 1, target.character, visibility)


@platform_action("reveal", title="Reveal a hidden roll", by="gm", gm="reveal hidden rolls",
                 emits=("roll_revealed",), help="Makes a hidden event public, with its whole body (and its voids).",
                 fields={"seq": seq_field("Event (its seq)")})
def decide_reveal(campaign: Campaign, membership: Membership, action: dict, *_) -> list[Draft]:
    """Make a hidden roll public. The reveal carries the sealed event's whole body, so
    every reader checks it against the body digest the chain already holds.

    Its voids come out with it: a void is read by its target's readers (decide_void), and a
    revealed roll that its sealed void kept out of every sheet would have the table read a roll
    that counts on the log and nowhere else. So does a witnessed roll's pending event (its command
    id). One reveal each, in this command."""
    target = check_seq(campaign, action)
    if target.visibility == VISIBILITY_PUBLIC:
        raise Refused(f"Event {target.seq} is already public.")
    if target.type == "message_posted":
        raise Refused("A whisper is not a hidden roll: it stays between the people it was for.")
    if readers.revealed(target):
        raise Refused(f"Event {target.seq} has already been revealed.")
    sealed_voids = [void for void in Event.objects.filter(campaign=campaign, type="event_voided", payload__seq=target.seq)
                    .exclude(visibility=VISIBILITY_PUBLIC).order_by("seq") if not readers.revealed(void)]
    return [_reveal(event) for event in (*_pending_of(campaign, target), target, *sealed_voids)]


def _pending_of(campaign: Campaign, decision: Event) -> list[Event]:
    """A witnessed roll's decision comes out with its sealed pending event: the command id its dice
    derive from is there (docs/fair-dice.md, "Witnessed rolls"), and no reader could check them without it."""
    named = decision.payload.get("command_of")
    if not witnessed.resolution_of(decision.payload) or type(named) is not int:
        return []
    pending = Event.objects.filter(campaign=campaign, seq=named, type=witnessed.PENDING).exclude(
        visibility=VISIBILITY_PUBLIC).first()
    return [pending] if pending is not None and not readers.revealed(pending) else []


def _reveal(event: Event) -> Draft:
    return Draft("roll_revealed", {"seq": event.seq, "body": event_body(hashed_fields(event))}, 1, event.character)


MAX_ASKED = 30


@platform_action(
    "request_roll", title="Ask for a roll", by="gm", gm="ask for rolls", emits=("roll_requested",),
    help="The suggested action appears on the players' pages, one click away: for one character, several, "
         "or every player's (\"players\").",
    fields={"action": Object(label="The action asked for", help="Such as {\"type\": \"skill_test\", ...}."),
            "character": character_id(optional=True),
            "characters": Either(ListOf(character_id(), MAX_ASKED, min_items=1), Choice(["players"]),
                                 optional=True, label="Characters"),
            "note": reason_field(label="Note")},
    one_of=[(("character", "characters"),
             "Name the 'character' to ask or the 'characters' (a list, or \"players\"): one, not both.")],
)
def decide_request_roll(campaign: Campaign, membership: Membership, action: dict, *_) -> list[Draft]:
    """Ask players for a roll: the suggested action appears on their pages, one click away. One
    character (``character``), or several at once (``characters``: a list of ids, or ``"players"``:
    every player's character) asked the same: one request each, which each player answers alone."""
    wanted = action.get("action")
    if not isinstance(wanted, dict) or not isinstance(wanted.get("type"), str):
        raise ActionError("'action' must be the action to ask for, such as {\"type\": \"skill_test\", ...}.")
    if wanted["type"] not in campaign.rules.actions and wanted["type"] != "roll":
        raise ActionError(f"{campaign.rules.title} has no action '{wanted['type'][:40]}'.", "unknown_action")
    note = check_reason({"reason": action.get("note")})
    # A signed command's first event keeps the GM's own action as "action" (campaign/actions/commands.py):
    # in a campaign whose members sign, the action asked for is "asked".
    key = "asked" if campaign.signed_from is not None else "action"
    return [_request(character, wanted, note, key) for character in _asked(campaign, membership, action)]


def _asked(campaign: Campaign, membership: Membership, action: dict) -> list[Character]:
    named = action.get("characters")
    if named is None:
        return [access_character(membership, action.get("character"))]
    if action.get("character") is not None:
        raise ActionError("Give 'character' or 'characters', not both.")
    if named == "players":
        # In the order they were made; the GM's own characters are hers to roll, not to ask for.
        asked = list(Character.objects.filter(campaign=campaign, npc=False).exclude(owner_id=membership.user_id))
        if not asked:
            raise Refused("No player has a character to ask yet.")
        return asked[:MAX_ASKED]
    if not isinstance(named, list) or not 1 <= len(named) <= MAX_ASKED or len(set(map(repr, named))) != len(named):
        raise ActionError(f"'characters' must list 1 to {MAX_ASKED} character ids, each once, or be \"players\".")
    return [access_character(membership, character) for character in named]


def _request(character: Character, wanted: dict, note: str | None, key: str = "action") -> Draft:
    wanted = {**wanted, "character": character.id}
    return Draft("roll_requested", {key: wanted, "note": note},
                 1, character, stored_visibility(character, VISIBILITY_PUBLIC))
