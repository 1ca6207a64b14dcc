"""The platform's events, declared as a rule system's are (``rules.declare.EventSpec``): their names,
the one sentence the table's log, the audit page and the exports say for each (``description``; the
audit adds its ``tail``), and the keys and types each payload carries (``payload``). ``campaign/audit.py``
``LINES`` is read from here and reaches the table page as ``lines``; ``tests/campaign/test_declared.py``
checks that every event any code can record is declared, and every event a played session stores
against its declaration; ``tests/test_js.py`` that the table says each sentence as the audit does.

A few sentences name a value that is not in the payload, which each reader works out the same way
from the log: the voided event's own line (``voided``), the revealed one's (``revealed``), the action a
roll request asks for in the system's words (``wanted``).

A payload may carry, besides its own keys, what the platform records beside a decision
(``rules.replay.RECORD_KEYS``: its dice, its command, its readers)."""

from __future__ import annotations

from rules import witness
from rules.declare import EventBook, EventSpec

PLATFORM_EVENTS = EventBook([
    EventSpec("campaign_created", "created the campaign “{name}” ({system})",
              payload={"name": "str", "system": "str", "gm": "str", "signed_commands": "bool?",
                       "witnessed_rolls": "str?"}),
    EventSpec("campaign_renamed", "renamed the campaign “{name}” (was “{from}”)", payload={"from": "str", "name": "str"}),
    EventSpec("signed_commands_required", "made every member sign their commands from here on",
              payload={"signed_commands": "bool"}),
    # Every member's table says each key added or revoked in a member's name (docs/fair-dice.md, "Keys").
    EventSpec("member_key_added", "added a key: {label}", payload={"key": "str", "label": "str"}),
    EventSpec("member_key_revoked", "revoked a key", payload={"key": "str"}),
    # An older key of the member's vouches for a newer one (rules/vouching.py).
    EventSpec("member_key_endorsed", "vouched for a key of theirs", payload={"key": "str"}),
    EventSpec("member_joined", "{username} joined the table as {role}",
              payload={"username": "str", "user_id": "int", "role": "str"}),
    EventSpec("member_removed", "removed {username} from the table",
              payload={"username": "str", "user_id": "int", "role": "str"}),
    EventSpec("member_role_changed", "made {username} {role} (was {from})",
              payload={"username": "str", "user_id": "int", "from": "str", "role": "str"}),
    EventSpec("session_started", "started session {session}", payload={"session": "int", "dice_commitment": "str",
                                                                       witness.COMMITS_MARK: "bool?"}),
    EventSpec("session_ended", "ended session {session}", payload={"session": "int", "dice_seed": "str?"}),
    # Named if the GM gave it a name.
    EventSpec("scene_started", "started scene {scene}[: “{name}”]", payload={"scene": "int", "name": "str?"}),
    EventSpec("scene_ended", "ended scene {scene}", payload={"scene": "int"}),
    EventSpec("seed_added", "added a dice seed “{seed}”", payload={"seed": "str"}),
    EventSpec("npc_shown", "now shows {name} to the players as: {shown} (was {from})",
              payload={"name": "str", "from": "str", "shown": "str"}),
    EventSpec("encounter_started", "started the encounter “{name}”", payload={"name": "str"}),
    EventSpec("combatant_added", "added {name} to the encounter", payload={"character": "int", "name": "str"}),
    # Said by whoever gave the turn (the GM's "Next turn", or a player ending her own): the line is what
    # they did ("round 1: Borin's turn" after "alice" read as if alice had chosen Borin).
    EventSpec("turn_advanced", "gave the turn to {name} (round {round})",
              payload={"round": "int", "turn": "int", "acting": "int", "name": "str"}),
    EventSpec("turn_order_set", "set the turn order ({order:count|combatant|combatants})", payload={"order": "list"}),
    # {rounds} is the round the encounter had reached: 0 when it ended before its first turn.
    EventSpec("encounter_ended", "ended the encounter “{name}” after {rounds|round|rounds}",
              payload={"name": "str", "rounds": "int"}),
    # A witnessed command (rules/witness.py, docs/fair-dice.md): a sealed one's public call to its witnesses
    # (``command_of``: the pending event), each witness's commitment and contribution to the pending roll
    # (``roll``, its seq; the commitment and the entropy are in the signed action). A "#{seq}" in a sentence is a link on the table.
    EventSpec(witness.CALL, "asked the table to witness #{command_of}", payload={"command_of": "int", "witnesses": "list"}),
    EventSpec(witness.COMMITTED, "committed to witness #{roll}", payload={"roll": "int"}),
    # The server's close of a roll's commitments (``committed``: their seqs), said as a later event of the
    # roll's command: the witnesses reveal after it.
    EventSpec(witness.CLOSED, "rolling #{command_of}: the witnesses' commitments are closed, revealing…",
              payload={"command_of": "int", "committed": "list"}),
    EventSpec(witness.CONTRIBUTION, "witnessed #{roll}", payload={"roll": "int"}),
    # The generic dice roll (rules/notation.py), any system: its terms as rolled and their total.
    EventSpec("roll", "rolled {notation}[ · {label}]", tail=" = {total}",
              payload={"counts_successes": "bool", "label": "str?", "notation": "str", "terms": "list",
                               "total": "num"}),
    # Chat: ``kind`` ooc or ic; in character it names who speaks; ``to``, a whisper's recipients
    # (``{"user_id", "username"}`` each). The table shows the message itself, as chat (chat.js); the
    # audit and the exports say this sentence.
    EventSpec("message_posted", "[whispered to {to.username:join}|said][ as {character_name}] ({kind}): “{text}”",
              payload={"character": "int?", "character_name": "str?", "kind": "str", "text": "str",
                                         "to": "list?"}),
    # A decision the rules refused where it is stored anyway: a hidden command's (campaign/visibility/
    # hidden.py), or a witnessed one's when its witnesses had answered (campaign/actions/commands.py).
    # ``action``: the action's type, or the whole action where the command's dice are recorded on it
    # (RECORD_KEYS).
    EventSpec("refused", "[{action.type:words}|{action:words}|an action] refused, hidden from the player",
              tail="[: {message}]", payload={"action": "any?", "code": "str", "message": "str"}),
    # A witnessed command's signed envelope, waiting for the members named (``witnesses``, their ids). The
    # table's line names the action as the system's module words it; the audit lists its keys.
    EventSpec(witness.PENDING, payload={"witnesses": "list"}),
    EventSpec("character_created", "created [{npc:if}the NPC|the character] {name} for {owner}"
              "[ (past the creation limits, by the GM){limits_overridden:if}]",
              payload={"name": "str", "owner": "str", "owner_id": "int", "sheet": "dict",
                                            "npc": "bool?", "shown": "str?", "limits_overridden": "bool?"}),
    EventSpec("event_voided", "voided #{seq}[ ({voided})]", tail="[, reason: {reason}]",
              payload={"seq": "int", "type": "str", "reason": "str"}),
    EventSpec("roll_requested", "GM asks for {wanted}", tail="[: “{note}”]",
              payload={"action": "dict?", "asked": "dict?", "note": "str?"}),
    EventSpec("roll_revealed", "revealed #{seq}[: {revealed}]", payload={"seq": "int", "body": "dict"}),
    # A hidden command's events sealed as one (campaign/visibility/hidden.py): its line is theirs, one
    # after the other, as each reader says them.
    EventSpec("bundle", payload={"events": "list"}),
])
