"""Hidden information: what a member may not see never shapes what they receive.

A hidden event (``gm`` or ``secret``) changes a character's state, and the
rules read that state for every later decision, preview and refusal message.
This module decides, before the rules do, who may see a decision's result
(docs/hidden-information.md has the reasoning and the examples):

* The **readers** of a decision are the acting member plus everyone who will
  see the stored event: all members for a ``public`` action, the actor (and
  the GM) for a ``secret`` or ``gm`` one.
* The character is **hidden-shaped** for a reader when an event about it that
  can change its state (anything but a generic ``roll``, a void or ``npc_shown``:
  projections.NO_HIDDEN_CHANGE) is neither visible
  to that reader, nor revealed, nor voided. That test looks only at who
  rolled what kind of event and how it was shown, never at dice: so two
  tables that differ only in hidden dice always take the same branch below.
  (Comparing the decision on the full state with the one on the visible
  state would be finer, but whether the two differ depends on the hidden
  dice, and that one bit is a leak.)
* Nothing hidden-shaped for any reader: the rules decide as usual.
* Hidden-shaped only for others (the GM acting, or a player on top of her own
  secret rolls): the actor sees everything the decision read, so she gets the
  result (and any refusal) as usual, but the event is stored ``gm``, naming in
  its payload's ``shared_with`` the acting player, or, the GM acting, the
  members who may see every hidden change it read: they read it too. (Stored
  ``secret``, a player's told the table that no change the GM keeps from her
  shaped it. Read
  by the GM alone, the GM's answer to Bob's Fate request on top of Bob's secret
  roll hid Bob's own character from Bob from then on.) The readers are named in
  the payload, not in the visibility: the payload is inside the body digest, so
  a member who may not read the event can't tell it from any GM-only event (a
  visibility ``shared`` in the sealed envelope told the table that a GM's
  decision touched some player's secret). Events stored ``shared`` before keep
  reading as they did (campaign.visibility.filter.may_see).
* Hidden-shaped for the actor: the decision is stored ``gm`` whatever the rules
  said, as exactly one event (a refusal becomes a ``refused`` event the GM
  reads), so the actor learns nothing but "it went to the GM". The only error
  she sees is malformed input, computed from the state she may see.

The stored decision is always ``rules.decide(full state, action, dice)``
(what ``verify_dice`` replays). A hidden command appends exactly one event: a
decision of several rule events is stored as one ``bundle`` event whose
payload lists them (:func:`one_event`); projections apply them in order.
"""

from __future__ import annotations

from rules import Event as RulesEvent
from rules import RuleError

from ..eventlog import Draft, marks_after
from ..models import ROLE_SPECTATOR, VISIBILITY_GM, VISIBILITY_PUBLIC, Character
from ..projections import BUNDLE, hidden_changes
from .filter import HIDDEN_ROW, Viewer, may_see
from .folds import visible_state
from .readers import kept_from_the_table, named

# The least any member may see: public events and revealed ones. The readers of
# a public event, whoever joins the table later.
EVERYONE = Viewer(user_id=0, role=ROLE_SPECTATOR)

# A hidden decision the rules refused: stored so the one event per hidden command
# exists whatever the rules said; it changes no state.
REFUSED = "refused"


def hidden_shaped(character: Character, viewers: list[Viewer], read: tuple[list[dict], set[int]] | None = None
                  ) -> list[bool]:
    """For each viewer: whether an event of ``character`` that may change its state is hidden from them.

    A command's lock already asked whether there is any such event at all (``any_hidden_changes``,
    campaign.eventlog.lock_stream): when there is none, that answer is every viewer's, with no query.
    ``read``: :func:`live_hidden_changes` of the character, when the caller has it already."""
    live, revealed = read or live_hidden_changes(character)
    return [any(not may_see(r, viewer, revealed) for r in live) for viewer in viewers]


def live_hidden_changes(character: Character) -> tuple[list[dict], set[int]]:
    """``(rows, revealed)``: the character's hidden changes not voided, as rows the visibility filter
    reads (seq, visibility, actor, the readers a ``gm`` one names), and the seqs revealed since."""
    if getattr(character, "any_hidden_changes", None) is False:
        return [], set()
    rows = list(hidden_changes(character).values("seq", "visibility", "actor_id", **HIDDEN_ROW))
    if not rows:
        return [], set()
    voided, revealed = marks_after(character.campaign_id, min(r["seq"] for r in rows) - 1)
    return [r for r in rows if r["seq"] not in voided], revealed


class ReplayDice:
    """The dice a command already drew, again and in order, then the same source's next ones.

    A second decision for the same command must see the same dice (derived
    dice are a function of their index, scripted dice a queue), and must not
    add to the command's recorded ``dice_log``."""

    def __init__(self, recorder):
        self.recorded = [face for _, face in recorder.log]
        self.source = recorder.source
        self.index = 0

    def roll(self, sides: int) -> int:
        i, self.index = self.index, self.index + 1
        if i < len(self.recorded) and 1 <= self.recorded[i] <= sides:
            return self.recorded[i]
        return self.source.roll(sides)


def decision_readers(character: Character, actor: Viewer, visibility: str) -> tuple[str, list[dict], bool]:
    """Who reads ``actor``'s decision on ``character`` asked with ``visibility``: the visibility it is
    stored with, for a ``gm`` one the members besides the GM who read it (``[{"user_id", "username"}]``,
    else empty), and whether it is sealed from its actor (the character is hidden-shaped for her). Only
    who did what and how it was shown counts, never dice: it is known before any die is drawn."""
    readers = EVERYONE if visibility == VISIBILITY_PUBLIC else actor
    live, revealed = read = live_hidden_changes(character)
    hidden_from_readers, hidden_from_actor = hidden_shaped(character, [readers, actor], read)
    if not hidden_from_readers:
        return visibility, [], False
    if hidden_from_actor:
        return VISIBILITY_GM, [], True
    if not actor.is_gm:
        # Hers to read, and stored ``gm`` naming her, not ``secret``: the sealed envelope would
        # tell the table which of the two it was, i.e. whether the GM keeps a change of this
        # character from her.
        return VISIBILITY_GM, named(character.campaign_id, [actor.user_id]), False
    return (*kept_from_the_table(character, actor, live, revealed), False)


def decide(rules, character: Character, actor: Viewer, action: dict, dice, input_errors: frozenset[str],
           unseen: bool) -> list[RulesEvent]:
    """The rules' decision for ``actor``, stored as :func:`decision_readers` says (``unseen``: sealed from her).

    Raises :class:`RuleError` only when the actor may see why."""
    if unseen:
        return _decide_unseen(rules, character, actor, action, dice, input_errors)
    return list(rules.decide(character.projection.state, action, dice))


def _decide_unseen(rules, character: Character, actor: Viewer, action: dict, dice,
                   input_errors: frozenset[str]) -> list[RulesEvent]:
    """Decide on the full state; tell the actor only what her own view of the character says."""
    full = character.projection.state
    try:
        decided, refusal = list(rules.decide(full, action, dice)), None
    except RuleError as e:
        decided, refusal = [], e
    try:
        rules.decide(visible_state(character, actor), action, ReplayDice(dice))
    except RuleError as e:
        if e.code in input_errors:
            raise  # malformed as she sees it: nothing hidden in saying so
    if refusal is None and decided:
        return decided
    code, message = (refusal.code, refusal.message) if refusal else ("refused", "That action changes nothing.")
    return [RulesEvent(REFUSED, {"action": action.get("type"), "code": code, "message": message})]


def one_event(drafts: list[Draft]) -> list[Draft]:
    """A hidden command appends exactly one event: several rule events become one ``bundle``.

    How many events the rules decided can depend on the dice (a Tale ``hide``
    starts a contest only when it succeeds), and a member who may not see the
    command must not be able to count them."""
    if len(drafts) < 2 or all(d.visibility == VISIBILITY_PUBLIC for d in drafts):
        return drafts
    first = drafts[0]  # the rules' events of one command share its character and visibility
    # Whom a decision names as its readers is the bundle's to say (the visibility filter reads it there).
    events = [{"type": d.type, "version": d.version,
               "payload": {k: v for k, v in d.payload.items() if k != "shared_with"}} for d in drafts]
    payload = {"events": events}
    if "shared_with" in first.payload:
        payload["shared_with"] = first.payload["shared_with"]
    # The other characters its events concern (a contest's sides), findable without opening them.
    sides = {side: True for e in events for side in (e["payload"].get("sides") or {})}
    if sides:
        payload["sides"] = sides
    return [Draft(BUNDLE, payload, 1, first.character, first.visibility)]
