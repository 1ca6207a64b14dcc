"""Who could send a member's command (docs/fair-dice.md, "Who may send a command"): every verifier
(``verify_dice``, ``verify_log``, the standalone verifier run on a member's export, from a checkout and as
the built .pyz, and the table's checks in Node: its chain, its witness book and its command check, the
classes the verification page runs too) names a command whose sender was no member at that point of the
log, or acted for a character she may not act for; and where the GM's rolls are witnessed, a roll for a
GM's character stored without waiting for witnesses, whoever sent it.

The dishonest host here holds a sock-puppet player (Bob: it has his key) and runs a modified server, or
writes its database directly with every hash recomputed (tests/campaign/host.py)."""

from __future__ import annotations

import io
import subprocess
import sys

import pytest
from django.core.management import CommandError, call_command

from campaign.actions import ActionError
from campaign.actions import commands, rolls
from campaign.models import Character, Event
from tests.campaign import host
from tests.campaign.test_signed_commands import verify_dice
from tests.campaign.test_standalone_verifier import VERIFIER, build, download
from tests.campaign.test_witnessed_rolls import chain_problems, contribute, online, table  # noqa: F401 (fixtures)

NOT_A_MEMBER = "a command by someone who is not a member of the campaign at this point of the log"
UNWAITED = ("a roll for a character of a GM's (an NPC, or one a GM owns), whose rolls this campaign witnesses "
            "(gm), stored without waiting for witnesses")


@pytest.fixture(scope="module")
def pyz(tmp_path_factory):
    """The standalone verifier as members keep it: the .pyz built from these sources."""
    return build(tmp_path_factory.mktemp("pyz"))


def may_not_act(character) -> str:
    return f"a command for character {character}, which its sender may not act for"


# --- every verifier -----------------------------------------------------------------------------------

def verify_log(table) -> str:
    """What ``manage.py verify_log`` says, every problem (it writes each, then fails naming the first)."""
    err = io.StringIO()
    try:
        call_command("verify_log", table.campaign.slug, stdout=io.StringIO(), stderr=err)
    except CommandError as e:
        return err.getvalue() + str(e)
    return ""


def standalone(table, reader, tmp_path, pyz) -> list[tuple[int, str]]:
    """The standalone verifier on ``reader``'s export, as a member runs it: from a checkout and as the .pyz."""
    export = download(table, reader, tmp_path, f"{reader.username}.jsonl")
    out = []
    for program in (VERIFIER, pyz):
        done = subprocess.run([sys.executable, "-I", "-S", str(program), export], capture_output=True, text=True,
                              timeout=120, cwd=tmp_path)
        out.append((done.returncode, done.stdout + done.stderr))
    return out


def table_problems(table, reader) -> list[str]:
    """What the table's checks say of the log as ``reader`` reads it from #1: its chain (with the witness
    book, static/talekeeper/witness.js) and its check of members' commands (static/talekeeper/signed.js)."""
    return chain_problems(table, reader, commands=True)


def named_everywhere(table, reader, tmp_path, pyz, seq: int, said: str) -> None:
    assert f"seq {seq}: {said}" in verify_dice(table, 1)
    assert f"BAD seq {seq}: {said}" in verify_log(table)
    for code, out in standalone(table, reader, tmp_path, pyz):
        assert code == 1 and f"BAD seq {seq}: {said}" in out, out
    problems = table_problems(table, reader)
    assert any(p.startswith(f"#{seq} #{seq} is {said}") for p in problems), problems


def clean_everywhere(table, reader, tmp_path, pyz) -> None:
    assert verify_dice(table, 1) == "" and verify_log(table) == ""
    for code, out in standalone(table, reader, tmp_path, pyz):
        assert code == 0, out
    assert table_problems(table, reader) == []


# --- (a) and (c): a sock puppet's roll for the GM's character ------------------------------------------

def gms_character(table, whose: str) -> Character:
    """The GM's NPC (shown to the table) or her own player character."""
    action = {"type": "create_character", "name": "Ogre" if whose == "npc" else "Keeper's Hero",
              "sheet": table.campaign.rules.example_sheet}
    if whose == "npc":
        action.update(npc=True, shown="full")
    return Character.objects.get(pk=table.command(table.gm, action).events[0].character_id)


def acted_for_by_any(membership, character_id, read=None):
    """The host's ``access_character``: anyone acts for any character."""
    return read if read is not None and read.pk == character_id else Character.objects.get(pk=character_id)


@pytest.mark.parametrize("whose", ["npc", "gm's own"])
@pytest.mark.parametrize("waited", [False, True], ids=["unwitnessed", "witnessed"])
def test_a_sock_puppets_roll_for_the_gms_character_is_named_by_every_verifier(table, online, tmp_path, pyz,
                                                                                monkeypatch, whose, waited):
    """Bob is the host's sock puppet. Its modified server lets him roll for the GM's NPC (or her own
    character) and, unwitnessed, stores the roll at once: a player's rolls wait for nobody under "gm", so
    the host could grind its command id offline. Every verifier names the roll's command: Bob may not act
    for that character; and unwitnessed, a roll for a GM's character that did not wait. Witnessed, its
    pending event is the command named."""
    character = gms_character(table, whose)
    table.command(table.gm, {"type": "start_session"})
    online("alice", "bob")
    with monkeypatch.context() as patched:
        patched.setattr(rolls, "access_character", acted_for_by_any)
        if not waited:
            patched.setattr(commands, "_witnessed", lambda *args: False)
        first = table.command(table.bob, {"type": "roll", "notation": "1d20", "character": character.id}).events[0]
        if waited:
            assert first.type == "roll_pending", "the server witnesses a roll for a GM's character, whoever sends it"
            contribute(table, table.alice, first.seq)
    assert first.type == ("roll_pending" if waited else "roll")
    table.command(table.gm, {"type": "end_session"})
    named_everywhere(table, table.alice, tmp_path, pyz, first.seq, may_not_act(character.id))
    if not waited:
        named_everywhere(table, table.alice, tmp_path, pyz, first.seq, UNWAITED)


def test_a_character_the_host_gives_the_gm_after_its_player_made_it_is_named(table, tmp_path, pyz):
    """The host writes its database: Bob's hero's creation is rewritten to make it the GM's (its owner is
    the payload's, no part of what he signed), so that his rolls for it would be a player's for a GM's
    character. A signed command's character is what the command says: the creation is named, and his roll
    stays his own for his own hero."""
    table.command(table.gm, {"type": "start_session"})
    hero = table.create_character(table.bob, "Rook", table.campaign.rules.example_sheet)
    created = Event.objects.get(campaign=table.campaign, type="character_created", character=hero)
    table.command(table.bob, {"type": "roll", "notation": "1d20", "character": hero.id})
    table.command(table.gm, {"type": "end_session"})
    clean_everywhere(table, table.alice, tmp_path, pyz)
    host.edit_payload(table.campaign, created.seq, {**created.payload, "owner": "gm", "owner_id": table.gm.pk})
    named_everywhere(table, table.alice, tmp_path, pyz, created.seq,
                     "a character whose owner or NPC mark is not what the signed command that made it says")


# --- (b): a command by a member removed, or never joined ---------------------------------------------

def test_a_roll_by_a_member_after_her_removal_is_named_by_every_verifier(table, tmp_path, pyz):
    """The host writes its database: Bob's roll is moved after the GM's removal of him (each event keeps
    its signature; the dice hang on his id and command id, not on seqs). A removed member sends nothing."""
    table.command(table.gm, {"type": "start_session"})
    roll = table.command(table.bob, {"type": "roll", "notation": "1d20"}).events[0]
    removed = table.command(table.gm, {"type": "remove_member", "username": "bob"}).events[0]
    assert removed.seq == roll.seq + 1
    table.command(table.gm, {"type": "end_session"})
    clean_everywhere(table, table.alice, tmp_path, pyz)
    host.swap(table.campaign, roll.seq, removed.seq)
    named_everywhere(table, table.alice, tmp_path, pyz, removed.seq, NOT_A_MEMBER)


def test_a_command_by_someone_who_never_joined_is_named_by_every_verifier(table, tmp_path, pyz):
    """The host writes its database: the join that seated Bob is rewritten as someone else's, so the
    log never seats him; his key and his roll, each signed by his key, are commands of no member."""
    joined = Event.objects.get(campaign=table.campaign, type="member_joined", payload__user_id=table.bob.pk)
    table.command(table.gm, {"type": "start_session"})
    roll = table.command(table.bob, {"type": "roll", "notation": "1d20"}).events[0]
    table.command(table.gm, {"type": "end_session"})
    host.edit_payload(table.campaign, joined.seq, {**joined.payload, "username": "outsider",
                                                   "user_id": table.outsider.pk})
    key = Event.objects.get(campaign=table.campaign, type="member_key_added", actor=table.bob)
    named_everywhere(table, table.alice, tmp_path, pyz, roll.seq, NOT_A_MEMBER)
    assert f"BAD seq {key.seq}: {NOT_A_MEMBER}" in verify_log(table)


def test_a_spectators_message_in_a_characters_voice_is_named(table, tmp_path, pyz, monkeypatch):
    """Spectators act for nobody: Alice played Rook and was made a spectator; the host's server lets her
    speak as him. Every verifier names it."""
    from campaign.actions import messages

    hero = table.create_character(table.alice, "Rook", table.campaign.rules.example_sheet)
    table.command(table.gm, {"type": "change_role", "username": "alice", "role": "spectator"})
    table.command(table.gm, {"type": "start_session"})
    with monkeypatch.context() as patched:
        patched.setattr(messages, "ROLE_SPECTATOR", "no such role")
        patched.setattr(messages, "access_character", acted_for_by_any)
        said = table.command(table.alice, {"type": "post_message", "text": "Onward!", "kind": "ic", "character": hero.id}).events[0]
    table.command(table.gm, {"type": "end_session"})
    named_everywhere(table, table.bob, tmp_path, pyz, said.seq, may_not_act(hero.id))


# --- the server -----------------------------------------------------------------------------------------

def test_an_npc_is_the_gms_even_once_its_maker_is_no_gm(table):
    """Bob, a GM for an evening, made an NPC; made a player again he may not act for it (an NPC is the GM's,
    as every verifier reads the log), though he is its owner."""
    table.command(table.gm, {"type": "change_role", "username": "bob", "role": "gm"})
    made = table.command(table.bob, {"type": "create_character", "name": "Ogre", "npc": True, "shown": "full",
                                     "sheet": table.campaign.rules.example_sheet}).events[0]
    table.command(table.gm, {"type": "change_role", "username": "bob", "role": "player"})
    assert Character.objects.get(pk=made.character_id).owner_id == table.bob.pk
    with pytest.raises(ActionError) as refused:
        table.command(table.bob, {"type": "roll", "notation": "1d20", "character": made.character_id})
    assert refused.value.status == 403
    table.command(table.gm, {"type": "roll", "notation": "1d20", "character": made.character_id})
