"""The standalone verifier on signed logs the server wrote (tests/signing.py signs every member's
command), after a dishonest host edited its database with every hash recomputed: each edit is named
BAD, as docs/fair-dice.md ("Signed commands") says every verifier names it."""

from __future__ import annotations

import pytest

from campaign.models import Event
from tests.campaign import host
from tests.campaign.test_standalone_verifier import an_evening, download, run
from tests.conftest import Table

# Does not depend on the database engine (the verifier reads an export file, whichever database wrote it): the
# SQLite pass leaves it out.
pytestmark = pytest.mark.one_database


@pytest.fixture
def table(db):
    """A campaign whose members sign every command (tests/conftest.py ``Table(signed=True)``)."""
    return Table(signed=True)


@pytest.fixture
def table_for(db):
    return lambda system: Table(system, signed=True)


@pytest.fixture
def old_campaign(db):
    """A campaign whose members do not sign: its log verifies as before, and says what it lacks."""
    return Table()


def rolled(table, user, notation="1d20"):
    return table.command(user, {"type": "roll", "notation": notation}).events[0]


def payload_of(seq, table) -> dict:
    return dict(Event.objects.get(campaign=table.campaign, seq=seq).payload)


def test_a_signed_evening_verifies_for_every_member(table, tmp_path):
    an_evening(table)
    for user in (table.gm, table.alice, table.bob):
        result = run(download(table, user, tmp_path))
        assert result.returncode == 0, (user.username, result.stdout)
        assert result.stdout.splitlines()[-1].endswith("signed from #1")


def test_an_old_campaign_verifies_and_says_it_is_not_signed(old_campaign, tmp_path):
    an_evening(old_campaign)
    result = run(download(old_campaign, old_campaign.bob, tmp_path))
    assert result.returncode == 0, result.stdout
    assert "note: not signed: " in result.stdout and result.stdout.splitlines()[-1].endswith(", not signed")


def forge(table, attack: str) -> tuple[int, str]:
    """One host's edit of Alice's roll (or around it); returns (seq, what the verifier must say)."""
    from tests.signing import signature

    table.command(table.gm, {"type": "start_session"})
    roll = rolled(table, table.alice)
    table.command(table.gm, {"type": "end_session"})
    payload = payload_of(roll.seq, table)
    if attack == "forged unsigned command":
        for key in ("command_id", "action", "signature"):
            payload.pop(key)
        said = "not signed: a member's event with no signed command behind it"
    elif attack == "action changed under a valid signature":
        payload["action"] = {**payload["action"], "modifier": 20}
        said = "its signature does not verify over the action stored"
    elif attack == "ground id marked not verifiable":
        payload.update(command_id="f" * 32, verifiable=False)
        said = "its signature does not verify over the action stored"
    elif attack == "signature replayed into another campaign":
        sig = payload["signature"]
        payload["signature"] = signature("alice", table.campaign.id + 1, payload["command_id"], payload["action"],
                                         sig["session"], sig["commitment"])
        said = "its signature does not verify over the action stored"
    elif attack == "signed by another member's key":
        sig = payload["signature"]
        payload["signature"] = signature("bob", table.campaign.id, payload["command_id"], payload["action"],
                                         sig["session"], sig["commitment"])
        said = "signed by another member's key"
    else:
        raise AssertionError(attack)
    host.edit_payload(table.campaign, roll.seq, payload)
    return roll.seq, said


@pytest.mark.parametrize("attack", ["forged unsigned command", "action changed under a valid signature",
                                    "ground id marked not verifiable", "signature replayed into another campaign",
                                    "signed by another member's key"])
def test_a_hosts_edit_of_a_signed_command_is_named(table, tmp_path, attack):
    seq, said = forge(table, attack)
    result = run(download(table, table.bob, tmp_path))
    assert result.returncode == 1, result.stdout
    assert f"BAD seq {seq}: " in result.stdout and said in result.stdout, result.stdout


def test_a_retry_stored_in_the_next_session_is_named(table, tmp_path):
    """The host ends the session while Alice's command is pending, grinds the next session's seed for her
    id, starts it and stores her retry there: her signature names the session she sent it in."""
    table.command(table.gm, {"type": "start_session"})
    first = rolled(table, table.alice)
    table.command(table.gm, {"type": "end_session"})
    table.command(table.gm, {"type": "start_session"})
    retry = rolled(table, table.alice)
    table.command(table.gm, {"type": "end_session"})
    moved = payload_of(retry.seq, table)
    moved.update({k: payload_of(first.seq, table)[k] for k in ("command_id", "action", "signature")})
    host.edit_payload(table.campaign, retry.seq, moved)
    result = run(download(table, table.bob, tmp_path))
    assert result.returncode == 1
    assert f"BAD seq {retry.seq}: signed for session 1" in result.stdout, result.stdout


def test_a_key_added_without_its_own_signature_is_named(table, tmp_path):
    from tests.signing import public_key, signature

    added = Event.objects.filter(campaign=table.campaign, type="member_key_added", actor=table.alice).first()
    payload = dict(added.payload)
    rogue = public_key("alice", "the host's")
    payload.update(key=rogue, action={**payload["action"], "key": rogue})
    payload["signature"] = signature("gm", table.campaign.id, payload["command_id"], payload["action"])
    payload["signature"]["key"] = rogue  # claims to be by the key it registers; the gm's key signed it
    host.edit_payload(table.campaign, added.seq, payload)
    result = run(download(table, table.bob, tmp_path))
    assert result.returncode == 1
    assert f"BAD seq {added.seq}: " in result.stdout, result.stdout


def test_wyrm_a_modifier_the_table_leaves_out_when_zero_is_named(table_for, tmp_path):
    """Issue's second attack: keep her id, add ``modifier: 20`` the table omits when zero, same dice,
    another outcome: her signature covers the action she sent."""
    from rules import get_system

    table = table_for("wyrm")
    hero = table.create_character(table.alice, "Hero", get_system("wyrm").example_sheet)
    table.command(table.gm, {"type": "start_session"})
    check = table.command(table.alice, {"type": "check", "character": hero.id, "attribute": "rogue",
                                        "dl": 12}).events[0]
    table.command(table.gm, {"type": "end_session"})
    payload = payload_of(check.seq, table)
    payload["action"] = {**payload["action"], "modifier": 20}
    host.edit_payload(table.campaign, check.seq, payload)
    result = run(download(table, table.bob, tmp_path))
    assert result.returncode == 1
    assert f"BAD seq {check.seq}: its signature does not verify over the action stored" in result.stdout


def test_a_contests_filled_numbers_are_the_opponents_sheets(table_for, tmp_path):
    """The server reads an opponent's numbers from its sheet and stores them beside the signed action
    (``filled``); the member folds the same sheet, so numbers the host wrote in instead are named."""
    from rules import get_system

    table = table_for("wyrm")
    sheet = get_system("wyrm").example_sheet
    hero, rival = table.create_character(table.alice, "Hero", sheet), table.create_character(table.bob, "Rival", sheet)
    table.command(table.gm, {"type": "start_session"})
    first = table.command(table.alice, {"type": "check", "character": hero.id, "attribute": "rogue",
                                        "skills": ["Stealth"], "vs_character": rival.id}).events[0]
    table.command(table.gm, {"type": "end_session"})
    result = run(download(table, table.bob, tmp_path))
    assert result.returncode == 0, result.stdout
    payload = payload_of(first.seq, table)
    filled = payload["filled"]  # WYRM: {"vs": {"attribute", "skills", "static"}}, read from the rival's sheet
    payload["filled"] = {**filled, "vs": {**filled["vs"], "attribute": filled["vs"]["attribute"] - 2}}
    host.edit_payload(table.campaign, first.seq, payload)
    result = run(download(table, table.bob, tmp_path))
    assert result.returncode == 1
    assert f"BAD seq {first.seq}: its 'filled' numbers are not what the opponent's sheet says" in result.stdout


@pytest.mark.parametrize("system", ["tote", "wyrm", "tale", "mdt"])
def test_every_systems_evening_signed_verifies_everywhere(table_for, tmp_path, system):
    """Each system's contract evening (requests, contests, fights, hidden rolls) played in a campaign
    whose members sign: every member's export verifies, signatures and replay alike, and so do
    verify_dice and verify_log on the database."""
    import io

    from django.core.management import call_command

    from tests.campaign.test_standalone_verifier import play_the_evening

    table = play_the_evening(table_for, system)
    for user in (table.gm, table.alice, table.bob):
        result = run(download(table, user, tmp_path))
        assert result.returncode == 0, (user.username, result.stdout)
        assert result.stdout.splitlines()[-1].endswith("signed from #1")
    call_command("verify_dice", table.campaign.slug, "--session", "1", stdout=io.StringIO())
    call_command("verify_log", table.campaign.slug, stdout=io.StringIO())


def test_a_signed_fight_round_and_an_answered_request_verify_everywhere(table_for, tmp_path):
    """A round the GM's last choice resolves (its events read every side's sealed choice: ``filled``)
    and a roll request answered: one signature per command, ``command_of`` on the rest."""
    import io

    from django.core.management import call_command

    from tests.campaign.test_fights import tale_two_against_one

    table, ana, ben, bandit = tale_two_against_one(table_for)
    table.command(table.gm, {"type": "start_session"})
    asked = table.command(table.gm, {"type": "request_roll", "characters": [ana.id, ben.id],
                                     "action": {"type": "roll", "notation": "1d6"}}).events[0]
    table.command(table.alice, {"type": "roll", "notation": "1d6", "character": ana.id, "request": asked.seq})
    table.command(table.gm, {"type": "start_fight", "sides": [{"character": ana.id, "team": "heroes"},
                                                              {"character": ben.id, "team": "heroes"},
                                                              {"character": bandit.id, "team": "bandits"}]})
    table.command(table.gm, {"type": "choose_in_fight", "character": bandit.id, "attack": {str(ben.id): 2},
                             "defence": 2})
    table.command(table.alice, {"type": "choose_in_fight", "character": ana.id, "attack": {str(bandit.id): 2},
                                "defence": 1})
    table.command(table.bob, {"type": "choose_in_fight", "character": ben.id, "attack": {str(bandit.id): 2},
                              "defence": 2})
    table.command(table.gm, {"type": "end_session"})
    assert Event.objects.filter(campaign=table.campaign, payload__has_key="command_of").exists()
    for user in (table.gm, table.alice, table.bob):
        result = run(download(table, user, tmp_path))
        assert result.returncode == 0, (user.username, result.stdout)
    call_command("verify_dice", table.campaign.slug, "--session", "1", stdout=io.StringIO())
    call_command("verify_log", table.campaign.slug, stdout=io.StringIO())
