"""Every platform action by type: the one dispatch table of ``campaign/actions/commands.py``, and
what ``campaign/openapi.py`` and ``GET /api/actions`` describe. Each is declared above its decide
function (``campaign/actions/declared.py``); a new one is its declaration, its function and one entry
here."""

from __future__ import annotations

from rules.declare import actions_by_type

from .adjustments import decide_adjust_sheet
from .campaign_options import decide_configure_campaign
from .campaigns import decide_rename_campaign
from .characters import decide_create_character
from .damage import decide_apply_damage
from .encounters import (
    decide_add_combatant, decide_advance_turn, decide_end_encounter, decide_set_turn_order, decide_start_encounter,
)
from .fights import decide_end_fight, decide_fight_choice, decide_start_fight
from .keys import (decide_add_member_key, decide_endorse_member_key, decide_require_signed_commands,
                   decide_revoke_member_key)
from .log_entries import decide_request_roll, decide_reveal, decide_void
from .members import decide_add_member, decide_change_role, decide_remove_member
from .messages import decide_post_message
from .npcs import decide_show_npc
from .rolls import decide_roll
from .sessions import decide_add_seed, decide_end_scene, decide_end_session, decide_start_scene, decide_start_session
from .witnesses import decide_witness_commit, decide_witness_roll

PLATFORM_ACTIONS = actions_by_type(
    # At the table: dice, characters, chat.
    decide_roll, decide_add_seed, decide_create_character, decide_post_message,
    # The frame: sessions and scenes.
    decide_start_session, decide_end_session, decide_start_scene, decide_end_scene,
    # The GM's tools on the log, the members, the campaign, sheets and NPCs.
    decide_void, decide_reveal, decide_request_roll, decide_add_member, decide_remove_member, decide_change_role,
    decide_rename_campaign, decide_configure_campaign, decide_adjust_sheet, decide_show_npc, decide_apply_damage,
    # Encounters and fights of several sides.
    decide_start_encounter, decide_add_combatant, decide_set_turn_order, decide_advance_turn, decide_end_encounter,
    decide_start_fight, decide_fight_choice, decide_end_fight,
    # Signing, and witnessing a roll (a commitment, then its reveal).
    decide_add_member_key, decide_revoke_member_key, decide_endorse_member_key, decide_require_signed_commands,
    decide_witness_commit, decide_witness_roll,
)


def form_limits() -> dict:
    """``{type: {field: its declared JSON}}``: the limits the pages' own forms write (``maxlength``)."""
    return {t: {name: field.as_json() for name, field in spec.fields.items()} for t, spec in PLATFORM_ACTIONS.items()}
