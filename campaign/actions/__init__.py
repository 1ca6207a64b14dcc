"""Every write, in one vocabulary.

* ``access_*`` fetches something and checks the user may use it;
* ``check_*`` validates input;
* ``do_*`` is the only code that records events (through ``campaign.eventlog.record``:
  append and project), inside one transaction, and then rings the table's doorbell
  (``campaign.publish.publish_on_commit``), which sends once the transaction commits.

Views and consumers parse, call one of these through ``campaign.pipeline``, and
respond. Errors are
:class:`ActionError` subclasses carrying an HTTP status, a code and a message
written for a person.

Errors live in ``campaign.errors`` (the layers below, the dice and the rate limits, raise
them too). One module per noun: ``access``, ``checks`` (names, reasons),
``commands`` (a client command from envelope to stored events), ``characters``,
``sessions`` (sessions, scenes, seeds), ``log_entries`` (void, reveal, roll
requests), ``members``, ``campaigns``, ``npcs`` (NPCs, shown as the GM chooses)
and ``kept`` (what the GM keeps of them from the players). Every platform action is declared above
its decide function (``declared``) and listed in ``platform.PLATFORM_ACTIONS``, the one dispatch
table; a rules action goes to ``rules_actions``. This package re-exports
what callers use, so ``from campaign.actions import do_command`` keeps working.
"""

from .access import (
    access_campaign, access_character, access_character_for_reading, access_membership_now, access_other_member,
    require_gm,
)
from .campaigns import do_checkpoint, do_create_campaign, do_rotate_invite
from .checks import MAX_REASON, check_name, check_reason
from .commands import (
    CLIENT_ID, MAX_ACTION_BYTES, MAX_ACTION_DEPTH, CommandResult, check_command, do_command, do_contributions, json_depth,
)
from .contests import opponent_of
from ..errors import INPUT_ERRORS, ActionError, Conflict, Forbidden, NotFound, Refused, Unauthenticated, rule_refusal
from .log_entries import UNVOIDABLE, check_seq
from .members import do_add_member
from .platform import PLATFORM_ACTIONS

__all__ = [
    "ActionError", "Unauthenticated", "NotFound", "Forbidden", "Conflict", "Refused", "INPUT_ERRORS", "rule_refusal",
    "access_campaign", "access_membership_now", "access_character", "access_character_for_reading",
    "access_other_member", "require_gm", "opponent_of",
    "CLIENT_ID", "MAX_ACTION_BYTES", "MAX_ACTION_DEPTH", "json_depth", "check_command", "check_name",
    "MAX_REASON", "check_reason", "check_seq",
    "CommandResult", "do_command", "do_contributions", "do_create_campaign", "do_add_member", "do_checkpoint", "do_rotate_invite",
    "PLATFORM_ACTIONS", "UNVOIDABLE",
]
