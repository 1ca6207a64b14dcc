"""Platform actions, declared as rules actions are: one declaration above the function that decides.

A platform action is the same in every rule system (sessions, scenes, void, reveal, members, chat,
NPCs, encounters, fights, signing keys). Its declaration is a :class:`PlatformAction`: the
vocabulary of ``rules/declare.py`` (fields with their kinds and ranges, ``by="gm"``, ``emits``) and
what only the platform has (``gm``: what the GM alone may do, in the words of the refusal;
``spectators``: whether spectators may send it too). From it come, as for a rules action, the
server's validation (the dispatch in ``campaign/actions/commands.py`` checks who may send it and
its fields before ``decide`` runs), the JSON the forms read (``GET /api/actions``) and the OpenAPI
component ``Action.platform.<type>`` (``campaign/openapi.py``).

``decide(campaign, membership, action, dice, character)`` returns the ``Draft`` (or drafts) to
record; ``action`` holds every key sent, each declared one normalised (text stripped, a choice as
declared), ``dice`` the command's dice and ``character`` the character the command names as its
lock read it (pass it to ``access_character``). The function checks what depends on the campaign
("no session is running", "that member is not at this table").
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

from rules import RuleError
from rules.declare import ActionSpec, Field, Integer, Text

from ..errors import ActionError, Forbidden
from ..models import ROLE_SPECTATOR
from .access import require_gm

# A character's id: drawn below 2**53, so every JSON reader holds it exactly (campaign/models.py).
CHARACTER_ID_MAX = 2**53 - 1


def character_id(label: str = "Character", **kw: Any) -> Integer:
    """A field naming a character of the campaign by its id (the platform looks it up)."""
    return Integer(1, CHARACTER_ID_MAX, label=label, **kw)


@dataclass(frozen=True)
class PlatformAction(ActionSpec):
    """The declaration of one platform action (an :class:`ActionSpec` with the platform's own keys)."""

    gm: str = ""  # what only the GM may do, as the refusal says it: "Only the GM can {gm}."
    spectators: bool = False  # spectators may send it too (they watch and talk; their keys sign)
    # Who reads its events, ``readers(campaign, membership, action, character) -> kept.Readers``: the one
    # answer its decision and a witnessed command's pending step store (campaign/actions/commands.py
    # ``command_readers``). Every action that may draw a die declares it.
    readers: Callable | None = None

    def __post_init__(self):
        super().__post_init__()
        if self.gm_only and not self.gm:
            raise ValueError(f"{self.type}: a GM-only platform action says what the GM does ('gm')")
        if self.rolls and self.readers is None:
            raise ValueError(f"{self.type}: a platform action that rolls says who reads it ('readers')")

    def __call__(self, campaign, membership, action: dict, dice, character) -> list:
        """Check who may send it and its declared fields, then decide; the drafts to record."""
        if membership.role == ROLE_SPECTATOR and not self.spectators:
            raise Forbidden("Spectators watch the table; they can't act at it.")
        if self.gm_only:
            require_gm(membership, self.gm)
        try:
            cleaned = self.validate(action)
        except RuleError as e:
            raise ActionError(e.message, e.code)
        # What was sent, each declared field as the declaration reads it; keys it does not declare
        # (``visibility``, ``request``) stay for the pipeline.
        action = {**action, **{name: value for name, value in cleaned.items() if name in action}}
        drafts = self.decide(campaign, membership, action, dice, character)
        return drafts if isinstance(drafts, list) else [drafts]


def platform_action(type: str, *, title: str, help: str = "", fields: Mapping[str, Field] | None = None,
                    by: str = "player", gm: str = "", spectators: bool = False, rolls: bool = False,
                    emits: Sequence[str] = (), one_of: Sequence[tuple[Sequence[str], str]] = (),
                    readers: Callable | None = None) -> Callable[[Callable], PlatformAction]:
    """Declare the platform action decided by the decorated function."""
    def declare(fn: Callable) -> PlatformAction:
        return PlatformAction(type, fn, title, help, dict(fields or {}), by, rolls, tuple(emits),
                              tuple((tuple(names), message) for names, message in one_of), gm, spectators, readers)
    return declare


def reason_field(required: bool = False, label: str = "Reason") -> Text:
    """A GM's reason, as the log and the audit show it (line breaks allowed)."""
    from .checks import MAX_REASON

    return Text(MAX_REASON, lines=True, optional=not required, label=label)


def seq_field(label: str) -> Integer:
    """A field naming an event of the log by its seq (the decision checks it is one)."""
    return Integer(1, 2**63 - 1, label=label)
