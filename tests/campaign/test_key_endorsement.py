"""Vouching for a new key (docs/fair-dice.md, "Vouching for a new key"; rules/vouching.py): a member's
first key is taken on first use; a key added while she holds one is vouched for by an
``endorse_member_key`` her older key signs. A key nobody vouched for (a host's key in her name) is a
WARNING of ``verify_log``, ``verify_dice`` and the standalone verifier, never BAD; a forged endorsement is BAD in
``verify_log``, ``verify_dice`` and the standalone verifier."""

from __future__ import annotations

import io
import uuid

import pytest
from django.core.management import CommandError, call_command
from django.utils.html import escape

from campaign.actions import ActionError, do_command
from campaign.models import Event
from tests.campaign import host
from tests.campaign.test_standalone_verifier import download, run
from tests.conftest import Table
from tests.signing import public_key, signed

ROLL = {"type": "roll", "notation": "1d20"}
HOSTS = "the host's"


@pytest.fixture
def table(db):
    return Table(signed=True)


def send(table, user, action, device=None):
    """``action`` as ``user`` sends it from ``device`` (her first device when None), signed there."""
    body = signed(table.campaign, user.username, {"id": uuid.uuid4().hex, "action": action}, device)
    return do_command(table.membership(user), body)


def endorse(table, user, key, device=None):
    return send(table, user, {"type": "endorse_member_key", "key": key}, device)


def verify_log(table) -> tuple[str, str]:
    """``manage.py verify_log``: (its failure, '' when it passed; what it wrote to stderr)."""
    err = io.StringIO()
    try:
        call_command("verify_log", table.campaign.slug, stdout=io.StringIO(), stderr=err)
    except CommandError as e:
        return str(e), err.getvalue()
    return "", err.getvalue()


def verify_dice(table, session: int) -> tuple[str, str, str]:
    """``manage.py verify_dice``: (its failure, '' when it passed; its stdout; its stderr)."""
    out, err = io.StringIO(), io.StringIO()
    try:
        call_command("verify_dice", table.campaign.slug, "--session", str(session), stdout=out, stderr=err)
    except CommandError as e:
        return str(e), out.getvalue(), err.getvalue()
    return "", out.getvalue(), err.getvalue()


def standalone(table, tmp_path) -> tuple[int, str]:
    result = run(download(table, table.bob, tmp_path))
    return result.returncode, result.stdout


def forged(table, monkeypatch, user, action, device) -> Event:
    """The host's own server, its signature check taken out, stores ``action`` in ``user``'s name signed
    by ``device``'s key (tests/signing.py)."""
    from campaign.actions import commands

    with monkeypatch.context() as patched:
        patched.setattr(commands, "check_signature", lambda *args: None)
        return send(table, user, action, device).events[0]


def rewritten(table, event, action, name="alice", device=None) -> None:
    """The host rewrites a stored endorsement to ``action``, signed by ``name``'s key on ``device`` (an
    endorsement the server would have refused, as if she had signed it)."""
    sig = signed(table.campaign, name, {"id": event.payload["command_id"], "action": action}, device)["signature"]
    host.edit_payload(table.campaign, event.seq, {**event.payload, "action": action, "key": action["key"],
                                                  "signature": sig})


def warned(seq: int) -> str:
    return f"WARNING seq {seq}: alice's key"


def test_a_members_first_key_is_taken_on_first_use(table, tmp_path):
    table.command(table.alice, ROLL)
    failure, said = verify_log(table)
    assert failure == "" and "WARNING" not in said
    code, out = standalone(table, tmp_path)
    assert code == 0 and "WARNING" not in out, out


def test_an_honest_second_device_is_vouched_for_by_her_first(table, tmp_path):
    phone = table.register(table.alice, device="phone", label="phone").events[0]
    failure, said = verify_log(table)
    assert failure == "" and warned(phone.seq) in said, "until her laptop vouches for it, the phone's key is warned"
    endorsed = endorse(table, table.alice, public_key("alice", "phone")).events[0]
    assert endorsed.type == "member_key_endorsed" and endorsed.payload["key"] == public_key("alice", "phone")
    assert endorsed.payload["signature"]["key"] == public_key("alice")
    send(table, table.alice, ROLL, device="phone")
    failure, said = verify_log(table)
    assert failure == "" and "WARNING" not in said
    code, out = standalone(table, tmp_path)
    assert code == 0 and "WARNING" not in out, out


def test_a_key_added_once_every_earlier_one_is_revoked_is_taken_on_first_use(table, tmp_path):
    table.register(table.alice, device="phone", label="phone")
    endorse(table, table.alice, public_key("alice", "phone"))
    send(table, table.alice, {"type": "revoke_member_key", "key": public_key("alice")}, device="phone")
    send(table, table.alice, {"type": "revoke_member_key", "key": public_key("alice", "phone")}, device="phone")
    table.register(table.alice, device="tablet", label="tablet")
    assert "WARNING" not in verify_log(table)[1]
    assert "WARNING" not in standalone(table, tmp_path)[1]


def test_a_host_key_in_her_name_with_no_endorsement_is_warned_not_bad(table, tmp_path):
    rogue = table.register(table.alice, device=HOSTS, label="Firefox on Linux").events[0]
    send(table, table.alice, ROLL, device=HOSTS)
    failure, said = verify_log(table)
    assert failure == "" and warned(rogue.seq) in said and public_key("alice", HOSTS)[:12] in said
    code, out = standalone(table, tmp_path)
    assert code == 0 and warned(rogue.seq) in out and "not vouched for by her earlier keys" in out, out


def test_verify_dice_warns_of_a_key_nobody_vouched_for_and_passes(table):
    """verify_dice says what verify_log says of a key nobody vouched for, in its words, and still says OK."""
    table.command(table.gm, {"type": "start_session"})
    rogue = table.register(table.alice, device=HOSTS, label="Firefox on Linux").events[0]
    send(table, table.alice, ROLL, device=HOSTS)
    table.command(table.gm, {"type": "end_session"})
    failure, out, said = verify_dice(table, 1)
    assert failure == "" and out.startswith("OK session 1"), (failure, said)
    assert [line for line in said.splitlines() if line.startswith("WARNING")] == [
        line for line in verify_log(table)[1].splitlines() if line.startswith("WARNING")]
    assert warned(rogue.seq) in said and public_key("alice", HOSTS)[:12] in said
    endorse(table, table.alice, public_key("alice", HOSTS))
    failure, out, said = verify_dice(table, 1)
    assert failure == "" and "WARNING" not in said, said


def test_the_audit_pages_dice_check_shows_the_same_warnings(table):
    """The GM's "Verify dice" on the audit page says what verify_dice says of a key nobody vouched for."""
    from django.test import Client

    table.command(table.gm, {"type": "start_session"})
    table.register(table.alice, device=HOSTS, label="Firefox on Linux")
    send(table, table.alice, ROLL, device=HOSTS)
    table.command(table.gm, {"type": "end_session"})
    gm = Client()
    gm.force_login(table.gm)
    page = gm.get(f"/campaigns/{table.campaign.slug}/audit/?verify_dice=1").content.decode()
    said = [line for line in verify_dice(table, 1)[2].splitlines() if line.startswith("WARNING")]
    assert said and all(f'<p class="warn small">{escape(line)}</p>' in page for line in said), page
    endorse(table, table.alice, public_key("alice", HOSTS))
    page = gm.get(f"/campaigns/{table.campaign.slug}/audit/?verify_dice=1").content.decode()
    assert 'class="warn small"' not in page and 'id="dice-result-1"' in page


def test_host_keys_vouching_for_each_other_vouch_for_nothing(table, tmp_path):
    """Only a key that is vouched for itself vouches: two keys of the host's endorsing each other stay warned."""
    one = table.register(table.alice, device=HOSTS, label="one").events[0]
    two = table.register(table.alice, device="the host's other", label="two").events[0]
    endorse(table, table.alice, public_key("alice", "the host's other"), device=HOSTS)
    endorse(table, table.alice, public_key("alice", HOSTS), device="the host's other")
    failure, said = verify_log(table)
    assert failure == "" and warned(one.seq) in said and warned(two.seq) in said
    code, out = standalone(table, tmp_path)
    assert code == 0 and warned(one.seq) in out and warned(two.seq) in out, out


@pytest.mark.parametrize("forgery", ["self", "bobs_key", "revoked_signer", "someone_elses_target", "revoked_target",
                                     "other_key_stored", "bad_signature"])
def test_a_forged_endorsement_is_bad_everywhere(table, tmp_path, monkeypatch, forgery):
    rogue = public_key("alice", HOSTS)
    table.register(table.alice, device=HOSTS, label="Firefox on Linux")
    table.command(table.gm, {"type": "start_session"})
    action = {"type": "endorse_member_key", "key": rogue}
    if forgery == "self":  # the host's key vouches for itself
        event = forged(table, monkeypatch, table.alice, action, HOSTS)
        said = "a key vouching for itself"
    elif forgery == "bobs_key":  # bob's real key, stored as alice's endorsement
        event = forged(table, monkeypatch, table.alice, action, None)
        host.edit_payload(table.campaign, event.seq, {**event.payload, "signature": signed(
            table.campaign, "bob", {"id": event.payload["command_id"], "action": action})["signature"]})
        said = "signed by another member's key"
    elif forgery == "revoked_signer":
        table.register(table.alice, device="old phone", label="old phone")
        send(table, table.alice, {"type": "revoke_member_key", "key": public_key("alice", "old phone")})
        event = forged(table, monkeypatch, table.alice, action, "old phone")
        said = "signed by a key revoked at #"
    elif forgery == "someone_elses_target":  # alice's key "vouches" for bob's
        event = endorse(table, table.alice, rogue).events[0]
        rewritten(table, event, {**action, "key": public_key("bob")})
        said = "vouches for another member's key"
    elif forgery == "revoked_target":
        table.register(table.alice, device="old phone", label="old phone")
        send(table, table.alice, {"type": "revoke_member_key", "key": public_key("alice", "old phone")})
        event = endorse(table, table.alice, rogue).events[0]
        rewritten(table, event, {**action, "key": public_key("alice", "old phone")})
        said = "vouches for a key revoked at #"
    elif forgery == "other_key_stored":  # her endorsement of her phone, stored as naming the host's key
        table.register(table.alice, device="phone", label="phone")
        event = endorse(table, table.alice, public_key("alice", "phone")).events[0]
        host.edit_payload(table.campaign, event.seq, {**event.payload, "key": rogue})
        said = "stores another key than the one its signed action vouches for"
    else:  # the action changed to name the host's key under her signature for her phone
        table.register(table.alice, device="phone", label="phone")
        event = endorse(table, table.alice, public_key("alice", "phone")).events[0]
        host.edit_payload(table.campaign, event.seq, {**event.payload, "key": rogue, "action": action})
        said = "its signature does not verify"
    table.command(table.gm, {"type": "end_session"})
    failure, _ = verify_log(table)
    assert f"BAD seq {event.seq}: {said}" in failure
    dice = io.StringIO()
    with pytest.raises(CommandError):
        call_command("verify_dice", table.campaign.slug, "--session", "1", stdout=io.StringIO(), stderr=dice)
    assert f"seq {event.seq}: {said}" in dice.getvalue()
    code, out = standalone(table, tmp_path)
    assert code == 1 and f"BAD seq {event.seq}: {said}" in out, out


def refused(table, user, action, device=None) -> ActionError:
    before = Event.objects.filter(campaign=table.campaign).count()
    with pytest.raises(ActionError) as caught:
        send(table, user, action, device)
    assert Event.objects.filter(campaign=table.campaign).count() == before
    return caught.value


def test_the_server_refuses_an_endorsement_that_vouches_for_nothing(table):
    table.register(table.alice, device="phone", label="phone")
    phone = public_key("alice", "phone")
    mine = {"type": "endorse_member_key", "key": phone}
    assert refused(table, table.alice, mine, device="phone").code == "bad_signature"  # a key for itself
    assert "not one of your keys" in refused(table, table.bob, mine).message
    assert "not one of your keys" in refused(table, table.alice, {**mine, "key": public_key("bob")}).message
    send(table, table.alice, {"type": "revoke_member_key", "key": phone})
    assert "revoked" in refused(table, table.alice, mine).message
