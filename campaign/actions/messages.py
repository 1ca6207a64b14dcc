"""Chat at the table: in-character and out-of-character messages and whispers, as events.

``post_message`` appends one ``message_posted`` event, in the log, the exports and the audit
like every other. A whisper (``"to": [usernames]``) is stored with the visibility
``whisper``: the one filter (``campaign.visibility``) shows it whole to its sender, the members
it names and the GM, and sealed to everyone else (who sees that someone whispered, not to whom
nor what). Like a hidden roll, its body carries a nonce, so its commitment can't be matched
against a guessed text. docs/table.md#chat has the choices.
"""

from __future__ import annotations

from rules.declare import Choice, ListOf, Text, unsafe_text

from ..eventlog import Draft
from ..ratelimit import check_message_rate
from ..models import ROLE_SPECTATOR, SHOWN_HIDDEN, VISIBILITY_PUBLIC, VISIBILITY_WHISPER, Campaign, Membership
from .access import access_character
from .declared import character_id, platform_action
from ..errors import ActionError, Forbidden, Refused

MAX_MESSAGE = 2000  # characters: a long paragraph; a story goes in a handout, not the log
MAX_RECIPIENTS = 50
KINDS = {"ooc": "out of character", "ic": "in character"}
ALLOWED_CONTROL = "\n\t"


def check_text(value) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ActionError("Write something: 'text' is the message.")
    text = value.strip()
    if len(text) > MAX_MESSAGE:
        raise ActionError(f"A message is at most {MAX_MESSAGE} characters (this one has {len(text)}).", "too_long")
    # The one rule of names and reasons (rules/declare.py unsafe_text): a control character or a
    # text-direction mark could make the log read otherwise. Not str.isprintable, which also
    # refused an emoji's joiner, a variation selector and a no-break space (a French "Quoi ?").
    if unsafe_text(text, allowed=ALLOWED_CONTROL):
        raise ActionError("A message can't contain control characters or text-direction marks "
                          "(only line breaks and tabs).")
    return text


def check_recipients(campaign: Campaign, membership: Membership, to) -> list[dict]:
    """The members a whisper goes to, as ``[{"user_id", "username"}]`` sorted by name (the sender left out)."""
    if (not isinstance(to, list) or not to or len(to) > MAX_RECIPIENTS
            or not all(isinstance(name, str) and 0 < len(name) <= 150 for name in to)):
        raise ActionError("'to' must be a list of the usernames of the members to whisper to.")
    names = sorted(set(to) - {membership.user.username})
    if not names:
        raise ActionError("Whisper to someone other than yourself.")
    found = dict(Membership.objects.filter(campaign=campaign, user__username__in=names)
                 .values_list("user__username", "user_id"))
    missing = [name for name in names if name not in found]
    if missing:
        raise ActionError(f"'{missing[0][:40]}' is not a member of this campaign.")
    return [{"user_id": found[name], "username": name} for name in names]


@platform_action(
    "post_message", title="Talk at the table", spectators=True, emits=("message_posted",),
    help="Out of character, or in character as a character the sender may act for; `to`: a whisper.",
    fields={"text": Text(MAX_MESSAGE, lines=True, label="Message"),
            "kind": Choice(list(KINDS), default="ooc", label="Kind"),
            "character": character_id(optional=True, help="Who speaks, in character."),
            "to": ListOf(Text(150), MAX_RECIPIENTS, min_items=1, optional=True, label="Whisper to")},
)
def decide_post_message(campaign: Campaign, membership: Membership, action: dict, *_) -> Draft:
    """A message to the table, or a whisper. In character it speaks as a character the sender
    may act for (a player their own; the GM any); spectators talk out of character only."""
    text = check_text(action.get("text"))
    kind = action.get("kind", "ooc")
    if not isinstance(kind, str) or kind not in KINDS:
        raise ActionError("'kind' must be ooc (out of character, the default) or ic (in character).")
    if action.get("visibility", VISIBILITY_PUBLIC) != VISIBILITY_PUBLIC:
        raise ActionError("A message is for everyone or whispered: name who hears it in 'to', not 'visibility'.")
    payload = {"text": text, "kind": kind}
    if kind == "ic":
        if action.get("character") is None:
            raise ActionError("An in-character message needs 'character': the id of who speaks.")
        if membership.role == ROLE_SPECTATOR:
            # A player demoted to spectator still owns their characters, but no longer plays them.
            raise Forbidden("Spectators talk out of character: speaking as a character is for its player and the GM.")
        character = access_character(membership, action["character"])
        if character.npc and character.shown == SHOWN_HIDDEN and action.get("to") is None:
            # Its name and id in a message to the table would tell everyone it exists, while its rolls
            # are kept for the GM (docs/hidden-information.md): the GM shows it first, speaks out of
            # character, or whispers as it (those she names hear it: the GM's choice; the rest get the
            # whisper's stub, which names no one).
            raise Refused(f"The players don't know {character.name} is here: show its name (from its sheet) "
                          "before speaking as it to the table, whisper as it, or speak out of character.")
        payload.update(character=character.id, character_name=character.name)
    elif action.get("character") is not None:
        raise ActionError("Only an in-character message (kind ic) speaks as a 'character'.")
    visibility = VISIBILITY_PUBLIC
    if action.get("to") is not None:
        payload["to"] = check_recipients(campaign, membership, action["to"])
        visibility = VISIBILITY_WHISPER
    check_message_rate(membership.user_id)
    # No character on the event: a message changes no sheet, and a whisper must not make a
    # character's later events look hidden-shaped (campaign/visibility/hidden.py).
    return Draft("message_posted", payload, 1, None, visibility)
