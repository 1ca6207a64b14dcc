"""Members' signed commands on the server (docs/fair-dice.md, "Signed commands"): keys registered in
the log, every command's signature checked before anything is decided, the envelope kept verbatim on
its first event; refusals with clear codes that leave the log untouched; and a dishonest host's edits
of the database named by ``verify_dice`` and the standalone verifier."""

from __future__ import annotations

import json
import uuid

import pytest

from campaign.actions import ActionError, do_command
from campaign.member_keys import MAX_LIVE_KEYS
from campaign.models import Event
from tests.campaign.served import client_for
from tests.conftest import Table
from tests.signing import add_key_envelope, now, public_key, signature, signed


@pytest.fixture
def table(request, db):
    """A campaign whose members sign: from its creation, or (``switched``) one made unsigned that played
    unsigned, then switched on by its GM (``require_signed_commands``) before anyone registered a key."""
    if getattr(request, "param", "born") == "born":
        return Table(signed=True)
    table = Table()
    table.command(table.alice, {"type": "post_message", "text": "before we sign"})
    table.command(table.alice, ROLL)
    table.require_signing()
    return table


# The dishonest host's attacks, on a campaign signed from its creation and on one switched on later.
EITHER = pytest.mark.parametrize("table", ["born", "switched"], indirect=True)


def head(table) -> int:
    table.campaign.refresh_from_db()
    return table.campaign.last_seq


def send(table, user, envelope):
    return do_command(table.membership(user), envelope)


def refused(table, user, envelope) -> ActionError:
    before = head(table)
    with pytest.raises(ActionError) as caught:
        send(table, user, envelope)
    assert head(table) == before, "a refused command stored nothing"
    return caught.value


def envelope(action, command_id=None) -> dict:
    return {"id": command_id or uuid.uuid4().hex, "action": action}


ROLL = {"type": "roll", "notation": "1d20"}


# --- what is stored ------------------------------------------------------------------------------------

def test_a_signed_command_keeps_its_envelope_verbatim_on_its_first_event(table):
    table.command(table.gm, {"type": "start_session"})
    sent = signed(table.campaign, "alice", envelope({"type": "roll", "notation": "2d6", "reason": "climb"}))
    first = send(table, table.alice, sent).events[0]
    assert (first.payload["command_id"], first.payload["action"], first.payload["signature"]) == \
        (sent["id"], sent["action"], sent["signature"])
    assert first.payload["dice_scheme"] == "talekeeper-hmac-sha256-v3"
    assert sent["signature"]["session"] == 1 and sent["signature"]["commitment"] == now(table.campaign)[1]


def test_the_log_opens_saying_its_members_sign_and_registers_each_key_self_signed(table):
    created = Event.objects.get(campaign=table.campaign, seq=1)
    assert created.type == "campaign_created" and created.payload["signed_commands"] is True
    assert table.campaign.signed_from == 1
    added = Event.objects.get(campaign=table.campaign, type="member_key_added", actor=table.alice)
    assert added.payload["key"] == added.payload["action"]["key"] == added.payload["signature"]["key"] \
        == public_key("alice")
    assert added.payload["signature"]["session"] is None  # registered outside a session


def test_later_events_of_a_command_name_its_first(table):
    from rules import get_system

    sheet = get_system("tote").example_sheet
    hero, rival = table.create_character(table.alice, "Hero", sheet), table.create_character(table.bob, "Rival", sheet)
    table.command(table.gm, {"type": "start_session"})
    events = table.command(table.gm, {"type": "request_roll", "characters": "players",
                                      "action": {"type": "roll", "notation": "1d6"}}).events
    assert [e.character_id for e in events] == [hero.id, rival.id]
    first = events[0]
    assert first.payload["action"]["type"] == "request_roll"  # the GM's own action, as signed
    assert first.payload["asked"] == {"type": "roll", "notation": "1d6", "character": hero.id}
    assert all(e.payload["command_of"] == first.seq for e in events[1:])


def test_a_contests_opponent_numbers_are_stored_beside_the_signed_action(db):
    from rules import get_system

    table = Table("wyrm", signed=True)
    sheet = get_system("wyrm").example_sheet
    hero, rival = table.create_character(table.alice, "Hero", sheet), table.create_character(table.bob, "Rival", sheet)
    table.command(table.gm, {"type": "start_session"})
    action = {"type": "check", "character": hero.id, "attribute": "rogue", "vs_character": rival.id}
    first = table.command(table.alice, action).events[0]
    assert first.payload["action"] == action  # exactly as signed: nothing the server read mixed in
    assert set(first.payload["filled"]) == {"vs"}


# --- refusals ----------------------------------------------------------------------------------------

def test_an_unsigned_command_is_refused(table):
    error = refused(table, table.alice, envelope(ROLL))
    assert error.code == "unsigned" and error.status == 400 and "signature" in error.message


@pytest.mark.parametrize("how", ["unknown key", "another member's key", "wrong bytes", "another campaign",
                                 "malformed"])
def test_a_signature_that_is_not_hers_over_this_command_is_refused(table, how):
    sent = envelope(ROLL)
    if how == "unknown key":
        sent = signed(table.campaign, "alice", sent, device="a phone never registered")
    elif how == "another member's key":
        sent = signed(table.campaign, "bob", sent)
    elif how == "wrong bytes":
        sent = signed(table.campaign, "alice", sent)
        sent["action"] = {**ROLL, "modifier": 20}
    elif how == "another campaign":
        sent = {**sent, "signature": signature("alice", table.campaign.id + 1, sent["id"], ROLL)}
    else:
        sent = {**signed(table.campaign, "alice", sent)}
        sent["signature"] = {**sent["signature"], "sig": "not base64!"}
    error = refused(table, table.alice, sent)
    assert error.code == "bad_signature", (error.code, error.message)


def test_a_revoked_key_signs_nothing_more(table):
    table.register(table.alice, device="phone", label="phone")
    revoke = {"type": "revoke_member_key", "key": public_key("alice", "phone")}
    table.command(table.alice, revoke)  # signed by her laptop's key
    error = refused(table, table.alice, signed(table.campaign, "alice", envelope(ROLL), device="phone"))
    assert error.code == "bad_signature" and "revoked at #" in error.message
    keys = client_for(table.alice).get(f"/api/campaigns/{table.campaign.slug}/keys").json()
    phone = next(k for k in keys["keys"] if k["key"] == public_key("alice", "phone"))
    assert phone["member"] == "alice" and phone["label"] == "phone" and phone["revoked_seq"] is not None
    assert keys["signed_from"] == 1


def test_a_command_signed_for_another_session_is_refused_naming_the_current_one(table):
    table.command(table.gm, {"type": "start_session"})
    sent = signed(table.campaign, "alice", envelope(ROLL))
    table.command(table.gm, {"type": "end_session"})
    table.command(table.gm, {"type": "start_session"})
    error = refused(table, table.alice, sent)
    assert error.code == "stale_session" and error.status == 409
    session, commitment = now(table.campaign)
    assert error.as_json()["session"] == session == 2 and error.as_json()["commitment"] == commitment
    # Signed outside any session, sent inside one: refused too.
    stale = {**sent, "id": uuid.uuid4().hex}
    stale["signature"] = signature("alice", table.campaign.id, stale["id"], ROLL)
    assert refused(table, table.alice, stale).code == "stale_session"


def test_an_id_used_again_returns_the_first_events_or_is_refused_for_another_action(table):
    table.command(table.gm, {"type": "start_session"})
    sent = signed(table.campaign, "alice", envelope(ROLL))
    first = send(table, table.alice, sent)
    again = send(table, table.alice, sent)
    assert again.replayed and [e.seq for e in again.events] == [e.seq for e in first.events]
    other = signed(table.campaign, "alice", envelope({"type": "roll", "notation": "1d4"}, sent["id"]))
    assert refused(table, table.alice, other).code == "conflict"


# --- keys ----------------------------------------------------------------------------------------------

def test_a_key_is_registered_only_by_itself_and_only_once(table):
    action = {"type": "add_member_key", "key": public_key("alice", "tablet"), "label": "tablet"}
    by_another = signed(table.campaign, "alice", envelope(action))  # signed by her laptop's key
    assert refused(table, table.alice, by_another).code == "bad_signature"
    again = add_key_envelope(table.campaign, "alice")  # her laptop's key, registered when she joined
    assert refused(table, table.alice, again).code == "key_exists"
    bobs = add_key_envelope(table.campaign, "bob", device="tablet")  # bob's key, sent in alice's name
    bobs["signature"] = signature("bob", table.campaign.id, bobs["id"], bobs["action"], device="tablet")
    send(table, table.bob, bobs)
    assert refused(table, table.alice, add_key_envelope(table.campaign, "bob", device="tablet")).code == "key_exists"


def test_at_most_twenty_live_keys_per_member(table):
    for n in range(MAX_LIVE_KEYS - 1):  # she has one already
        table.register(table.alice, device=f"device {n}", label=f"device {n}")
    error = refused(table, table.alice, add_key_envelope(table.campaign, "alice", device="one more"))
    assert error.code == "too_many_keys"
    table.command(table.alice, {"type": "revoke_member_key", "key": public_key("alice", "device 0")})
    table.register(table.alice, device="one more")


def test_a_member_revokes_only_her_own_keys(table):
    error = refused(table, table.alice, signed(table.campaign, "alice", envelope(
        {"type": "revoke_member_key", "key": public_key("bob")})))
    assert error.code == "refused" and "not one of your keys" in error.message


def test_a_campaign_whose_members_do_not_sign_takes_no_keys(db):
    table = Table()
    with pytest.raises(ActionError) as caught:
        table.register(table.alice)
    assert caught.value.code == "not_signed"
    table.command(table.alice, ROLL)  # and unsigned commands, as ever
    keys = client_for(table.alice).get(f"/api/campaigns/{table.campaign.slug}/keys").json()
    assert keys == {"campaign": table.campaign.id, "signed_from": None, "session": None, "commitment": None,
                    "keys": []}


# --- transports ----------------------------------------------------------------------------------------

def test_over_http_the_envelope_carries_its_signature_and_a_refusal_names_its_code(table):
    client = client_for(table.alice)
    url = f"/api/campaigns/{table.campaign.slug}/commands"
    res = client.post(url, json.dumps(envelope(ROLL)), content_type="application/json")
    assert res.status_code == 400 and res.json()["error"]["code"] == "unsigned"
    res = client.post(url, json.dumps(signed(table.campaign, "alice", envelope(ROLL))), content_type="application/json")
    assert res.status_code == 201 and res.json()["payload"]["signature"]["key"] == public_key("alice")
    table.command(table.gm, {"type": "start_session"})
    stale = signed(table.campaign, "alice", envelope(ROLL))
    table.command(table.gm, {"type": "end_session"})
    res = client.post(url, json.dumps(stale), content_type="application/json")
    assert res.status_code == 409
    assert res.json()["error"] | {"message": ""} == {"code": "stale_session", "message": "", "session": None,
                                                     "commitment": None}


def test_a_socket_frame_passes_its_signature_on():
    from campaign.pipeline import command_of

    frame = {"type": "command", "id": "x", "action": ROLL, "signature": {"key": "k"}}
    assert command_of(frame) == {"id": "x", "action": ROLL, "signature": {"key": "k"}}
    assert command_of({"type": "command", "id": "x", "action": ROLL}) == {"id": "x", "action": ROLL}


# --- a dishonest host, writing its own database --------------------------------------------------------
# Each attack is what a host can do with the database and the server's code: store events its server
# never checked, or change stored ones with every hash recomputed (tests/campaign/host.py). The chain
# holds; the member's signature does not, and verify_dice, verify_log and the standalone verifier say so.

def verify_dice(table, session: int) -> str:
    """What ``manage.py verify_dice`` says of ``session``: '' when it is OK, else its problems."""
    import io

    from django.core.management import CommandError, call_command

    err = io.StringIO()
    try:
        call_command("verify_dice", table.campaign.slug, "--session", str(session), stdout=io.StringIO(), stderr=err)
    except CommandError:
        return err.getvalue()
    return ""


def verify_log(table) -> str:
    import io

    from django.core.management import CommandError, call_command

    try:
        call_command("verify_log", table.campaign.slug, stdout=io.StringIO(), stderr=io.StringIO())
    except CommandError as e:
        return str(e)
    return ""


def standalone(table, tmp_path) -> tuple[int, str]:
    from tests.campaign.test_standalone_verifier import download, run

    result = run(download(table, table.bob, tmp_path))
    return result.returncode, result.stdout


def forged(table, monkeypatch, user, action, device="the host's") -> Event:
    """The host's own server, its signature check taken out, stores ``action`` in ``user``'s name,
    signed by a key of the host's that the log never registered for her."""
    from campaign.actions import commands

    with monkeypatch.context() as patched:
        patched.setattr(commands, "check_signature", lambda *args: None)
        sent = signed(table.campaign, user.username, envelope(action), device=device)
        return send(table, user, sent).events[0]


def payload_of(table, seq) -> dict:
    return dict(Event.objects.get(campaign=table.campaign, seq=seq).payload)


@EITHER
def test_an_honest_evening_verifies_everywhere(table, tmp_path):
    table.command(table.gm, {"type": "start_session"})
    table.command(table.alice, ROLL)
    table.command(table.bob, {"type": "roll", "notation": "2d6", "visibility": "secret"})
    table.command(table.gm, {"type": "end_session"})
    assert verify_dice(table, 1) == "" and verify_log(table) == ""
    code, out = standalone(table, tmp_path)
    assert code == 0 and out.splitlines()[-1].endswith(f"signed from #{table.campaign.signed_from}"), out


@EITHER
def test_a_forged_command_in_a_members_name_is_named(table, tmp_path, monkeypatch):
    table.command(table.gm, {"type": "start_session"})
    fake = forged(table, monkeypatch, table.alice, {"type": "roll", "notation": "1d20+5"})
    table.command(table.gm, {"type": "end_session"})
    said = "signed by a key the log never registered for this member before it"
    assert f"seq {fake.seq}: {said}" in verify_dice(table, 1)
    assert f"BAD seq {fake.seq}: {said}" in verify_log(table)
    code, out = standalone(table, tmp_path)
    assert code == 1 and f"BAD seq {fake.seq}: {said}" in out, out


@EITHER
def test_a_forged_command_with_no_signature_at_all_is_named(table, tmp_path):
    from tests.campaign import host

    table.command(table.gm, {"type": "start_session"})
    roll = table.command(table.alice, ROLL).events[0]
    table.command(table.gm, {"type": "end_session"})
    payload = payload_of(table, roll.seq)
    del payload["signature"]
    host.edit_payload(table.campaign, roll.seq, payload)
    assert f"seq {roll.seq}: a command's first event without its command id" in verify_dice(table, 1)
    code, out = standalone(table, tmp_path)
    assert code == 1 and f"BAD seq {roll.seq}: " in out, out


def test_an_action_changed_under_a_valid_signature_is_named(db, tmp_path):
    """The issue's second attack: her id and dice kept, ``modifier: 20`` added (the table leaves it
    out when zero): another outcome, the same dice, every hash recomputed."""
    from rules import get_system
    from tests.campaign import host

    table = Table("wyrm", signed=True)
    hero = table.create_character(table.alice, "Hero", get_system("wyrm").example_sheet)
    table.command(table.gm, {"type": "start_session"})
    check = table.command(table.alice, {"type": "check", "character": hero.id, "attribute": "rogue", "dl": 12}).events[0]
    table.command(table.gm, {"type": "end_session"})
    payload = payload_of(table, check.seq)
    payload["action"] = {**payload["action"], "modifier": 20}
    host.edit_payload(table.campaign, check.seq, payload)
    said = "its signature does not verify over the action stored"
    assert f"seq {check.seq}: {said}" in verify_dice(table, 1)
    code, out = standalone(table, tmp_path)
    assert code == 1 and f"BAD seq {check.seq}: {said}" in out, out


@EITHER
def test_a_signature_replayed_into_another_session_is_named(table, tmp_path):
    """The issue's third attack: her command pending, the host ends the session, grinds the next one's
    seed for her id and stores her signed command there."""
    from tests.campaign import host

    table.command(table.gm, {"type": "start_session"})
    first = table.command(table.alice, ROLL).events[0]
    table.command(table.gm, {"type": "end_session"})
    table.command(table.gm, {"type": "start_session"})
    later = table.command(table.alice, ROLL).events[0]
    table.command(table.gm, {"type": "end_session"})
    moved = payload_of(table, later.seq)
    moved.update({k: payload_of(table, first.seq)[k] for k in ("command_id", "action", "signature")})
    host.edit_payload(table.campaign, later.seq, moved)
    problems = verify_dice(table, 2)
    assert f"seq {later.seq}: signed for session 1" in problems
    code, out = standalone(table, tmp_path)
    assert code == 1 and f"BAD seq {later.seq}: signed for session 1" in out, out


@EITHER
def test_a_signature_replayed_from_another_campaign_is_named(table, tmp_path):
    from tests.campaign import host

    table.command(table.gm, {"type": "start_session"})
    roll = table.command(table.alice, ROLL).events[0]
    table.command(table.gm, {"type": "end_session"})
    payload = payload_of(table, roll.seq)
    sig = payload["signature"]  # what she signed for the same id and action in another campaign
    payload["signature"] = signature("alice", table.campaign.id + 1, payload["command_id"], payload["action"],
                                     sig["session"], sig["commitment"])
    host.edit_payload(table.campaign, roll.seq, payload)
    said = "its signature does not verify over the action stored"
    assert f"seq {roll.seq}: {said}" in verify_dice(table, 1)
    code, out = standalone(table, tmp_path)
    assert code == 1 and f"BAD seq {roll.seq}: {said}" in out, out


@EITHER
def test_a_command_id_used_twice_is_named(table, tmp_path):
    """Her signed roll stored a second time (same id, action and signature, same session: the signature
    holds, and the dice match the seed for that id): only the id's second use shows it."""
    from tests.campaign import host

    table.command(table.gm, {"type": "start_session"})
    first = table.command(table.alice, ROLL).events[0]
    second = table.command(table.alice, ROLL).events[0]
    table.command(table.gm, {"type": "end_session"})
    host.edit_payload(table.campaign, second.seq, payload_of(table, first.seq))
    said = f"of this member was used before, in #{first.seq}"
    assert said in verify_dice(table, 1) and said in verify_log(table)
    code, out = standalone(table, tmp_path)
    assert code == 1 and f"BAD seq {second.seq}: " in out and said in out, out


@EITHER
def test_an_imported_signed_log_goes_on_signed(table, tmp_path):
    from campaign.models import Campaign
    from tests.campaign.test_import import export, run, wipe

    table.command(table.gm, {"type": "start_session"})
    table.command(table.alice, ROLL)
    table.command(table.gm, {"type": "end_session"})
    path, _ = export(table.campaign.slug, tmp_path)
    on = table.campaign.signed_from
    wipe()
    run("import_log", path)
    assert Campaign.objects.get(slug="torn-road").signed_from == on


def test_pages_sign_only_where_members_sign(db, settings, monkeypatch):
    from campaign import signed_forms

    monkeypatch.setattr(signed_forms, "PAGES_SIGN", True)
    signed_table = Table(signed=True)
    assert signed_forms.pages_sign(signed_table.campaign)
    signed_table.campaign.signed_from = None  # a campaign whose members do not sign: no key to register
    assert not signed_forms.pages_sign(signed_table.campaign)


def test_new_campaigns_sign_by_default_and_the_demo_sets_itself_up_signed(db):
    """The home page's campaigns sign; the demo's setup (the players' heroes, made by the GM) is signed
    by a key of the GM's made for it, registered, used and revoked, so her browser registers its own."""
    import io
    from types import SimpleNamespace

    from django.contrib.auth import get_user_model
    from django.core.management import call_command

    from campaign.member_keys import keys_json
    from campaign.models import Campaign, Character

    founder = get_user_model().objects.create_user("founder", password="pw-founder-123456")
    assert client_for(founder).post("/", {"name": "Night Watch", "system": "tote"}).status_code == 302
    assert Campaign.objects.get(name="Night Watch").signed_from == 1
    call_command("demo", stdout=io.StringIO())
    demo = Campaign.objects.get(slug="demo")
    assert demo.signed_from == 1 and Character.objects.filter(campaign=demo).count() == 3
    [setup] = keys_json(demo, None)["keys"]
    assert setup["member"] == "gm" and setup["revoked_seq"] is not None
    assert verify_log(SimpleNamespace(campaign=demo)) == ""


# --- an existing campaign switches signing on ------------------------------------------------------------

SWITCH = {"type": "require_signed_commands"}


def test_an_existing_campaign_switches_signing_on_between_sessions(db, tmp_path):
    """Played unsigned (its log verifies, saying it is not signed), switched on by the GM between
    sessions: from the switch on every command is signed, the next session uses dice scheme v3, and
    every verifier says where signing started."""
    table = Table()
    table.command(table.gm, {"type": "start_session"})
    table.command(table.alice, ROLL)
    table.command(table.gm, {"type": "end_session"})
    assert verify_log(table) == "" and verify_dice(table, 1) == ""
    assert "not signed (the log predates signed commands" in run_verify_log(table)
    code, out = standalone(table, tmp_path)
    assert code == 0 and "note: not signed: " in out and out.splitlines()[-1].endswith(", not signed"), out

    switch = table.command(table.gm, SWITCH).events[0]
    assert (switch.type, switch.payload, switch.actor_id) == ("signed_commands_required", {"signed_commands": True},
                                                              table.gm.id)
    table.campaign.refresh_from_db()
    assert table.campaign.signed_from == switch.seq
    assert refused(table, table.alice, envelope(ROLL)).code == "unsigned"  # from its seq on, nothing unsigned
    table.signed = True
    for user in (table.gm, table.alice, table.bob):
        table.register(user)
    table.command(table.gm, {"type": "start_session"})
    roll = table.command(table.alice, ROLL).events[0]
    table.command(table.gm, {"type": "end_session"})
    assert roll.payload["dice_scheme"] == "talekeeper-hmac-sha256-v3" and "signature" in roll.payload
    assert verify_dice(table, 1) == "" and verify_dice(table, 2) == "" and verify_log(table) == ""
    assert f"signed from #{switch.seq} (events #1..#{switch.seq - 1} predate" in run_verify_log(table)
    code, out = standalone(table, tmp_path)
    assert code == 0 and out.splitlines()[-1].endswith(f"signed from #{switch.seq}"), out
    assert f"events #1..#{switch.seq - 1} predate signed commands" in out


def test_the_switch_is_the_gm_s_between_sessions_once_and_for_good(db):
    table = Table()
    table.command(table.gm, {"type": "start_session"})
    error = refused(table, table.gm, envelope(SWITCH))
    assert error.code == "in_session" and "end session 1 first" in error.message
    table.command(table.gm, {"type": "end_session"})
    assert refused(table, table.alice, envelope(SWITCH)).code == "forbidden"
    off = refused(table, table.gm, envelope({**SWITCH, "signed_commands": False}))
    assert off.code == "invalid" and "takes no fields" in off.message
    table.require_signing()
    for action in (SWITCH, {**SWITCH, "signed_commands": False}):  # never again, never off
        error = refused(table, table.gm, signed(table.campaign, "gm", envelope(action)))
        assert error.code == "already_signed" and "never switched off" in error.message
    assert Event.objects.filter(campaign=table.campaign, type="signed_commands_required").count() == 1


def test_the_gm_s_settings_page_offers_the_switch_and_then_says_where_it_came_on(db):
    table = Table()
    gm = client_for(table.gm)
    page = gm.get("/campaigns/torn-road/settings/").content.decode()
    assert 'value="require_signed_commands"' in page and "It can't be undone" in page
    table.command(table.gm, {"type": "start_session"})
    gm.post("/campaigns/torn-road/settings/", {"do": "require_signed_commands"})
    assert "end session 1 first" in gm.get("/campaigns/torn-road/settings/").content.decode()
    table.command(table.gm, {"type": "end_session"})
    gm.post("/campaigns/torn-road/settings/", {"do": "require_signed_commands"})
    table.campaign.refresh_from_db()
    assert table.campaign.signed_from == table.campaign.last_seq
    page = gm.get("/campaigns/torn-road/settings/").content.decode()
    assert 'value="require_signed_commands"' not in page and f"from #{table.campaign.signed_from} on" in page


def test_rebuilding_from_the_log_restores_where_signing_starts(db):
    import io

    from django.core.management import CommandError, call_command

    from campaign.models import Campaign

    table = Table()
    table.command(table.alice, ROLL)
    table.require_signing()
    on = table.campaign.signed_from
    Campaign.objects.filter(pk=table.campaign.pk).update(signed_from=None)  # a row that lost it
    with pytest.raises(CommandError):
        call_command("rebuild_projections", "--check", stdout=io.StringIO(), stderr=io.StringIO())
    call_command("rebuild_projections", stdout=io.StringIO())
    assert Campaign.objects.get(pk=table.campaign.pk).signed_from == on
    call_command("rebuild_projections", "--check", stdout=io.StringIO())


@pytest.mark.parametrize("forgery", ["inside a session", "a second switch saying off", "unsigned after the switch"])
def test_a_forged_switch_or_signing_switched_off_is_named(db, tmp_path, monkeypatch, forgery):
    """The host's own server stores what the honest one refuses: a switch inside a session, a second
    switch saying signing is off, or a member's command with no signature after the switch."""
    from dataclasses import replace

    from campaign.actions import commands
    from campaign.actions.platform import PLATFORM_ACTIONS
    from campaign.eventlog import Draft

    def forged(decide):  # the switch's declaration, deciding as the host's own server does
        return replace(PLATFORM_ACTIONS["require_signed_commands"], decide=decide)

    table = Table()
    if forgery == "inside a session":
        table.command(table.gm, {"type": "start_session"})
        def switched(campaign, membership, action, *_):
            campaign.signed_from = campaign.last_seq + 1
            return Draft("signed_commands_required", {"signed_commands": True})
        monkeypatch.setitem(PLATFORM_ACTIONS, "require_signed_commands", forged(switched))
        said = "signed commands switched on inside a session"
        seq = table.command(table.gm, SWITCH).events[0].seq
    else:
        table.require_signing()
        table.command(table.gm, {"type": "start_session"})
        with monkeypatch.context() as patched:
            patched.setattr(commands, "check_signature", lambda *args: None)
            if forgery == "a second switch saying off":
                patched.setitem(PLATFORM_ACTIONS, "require_signed_commands", forged(
                    lambda *args: Draft("signed_commands_required", {"signed_commands": False})))
                said = "a second switch of signed commands"
                seq = table.command(table.gm, SWITCH, sign=False).events[0].seq
            else:
                said = "a command's first event without its command id, its action and its signature"
                seq = table.command(table.alice, ROLL, sign=False).events[0].seq
        table.command(table.gm, {"type": "end_session"})
        assert f"seq {seq}: {said}" in verify_dice(table, 1)
    assert f"BAD seq {seq}: {said}" in verify_log(table)
    code, out = standalone(table, tmp_path)
    assert code == 1 and f"BAD seq {seq}: {said}" in out, out


def run_verify_log(table) -> str:
    import io

    from django.core.management import call_command

    out = io.StringIO()
    call_command("verify_log", table.campaign.slug, stdout=out, stderr=io.StringIO())
    return out.getvalue()
