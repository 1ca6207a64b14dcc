"""Witnessed rolls (docs/fair-dice.md, "Witnessed rolls"): a GM's roll is stored pending with its signed
command; the other members' tables contribute entropy; the dice come from the seed, the command id and
the digest of the contributions; every verifier (verify_dice, verify_log, the standalone verifier, the
browser's chain check) names a decision that leaves a contribution out.

Who is online is scripted (``online``): the suite's own process has no sockets. The timer is off in
the suite (tests/conftest.py): a test resolves an overdue roll by calling the pipeline's resolver."""

from __future__ import annotations

import base64
import hashlib
import json
import shutil
import subprocess
from pathlib import Path

import pytest

from campaign.actions import ActionError, do_create_campaign
from campaign.actions import commands
from campaign.actions import witnesses as witnessing
from campaign.models import Event, WitnessedRoll
from rules.base import ScriptedDice
from rules.notation import roll_event
from tests.campaign import host
from tests.campaign.served import client_for
from tests.campaign.test_fairdice import independent_face
from tests.campaign.test_signed_commands import verify_dice, verify_log
from tests.conftest import Table

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def table(db):
    t = Table(signed=True)
    t.command(t.gm, {"type": "configure_campaign", "settings": {"witnessed_rolls": "gm"}})
    t.campaign.refresh_from_db()
    return t


@pytest.fixture
def online(monkeypatch):
    """``online("alice", "bob")``: the members whose tables are at the table now."""
    names: set[str] = set()
    monkeypatch.setattr(witnessing, "_presence", lambda campaign_id: set(names))

    def at_table(*who):
        names.clear()
        names.update(who)
    return at_table


def entropy(tag: str) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(tag.encode()).digest()).rstrip(b"=").decode()


def commitment_of(roll: int, member: int, text: str) -> str:
    """``SHA-256(JCS({"entropy", "member", "roll"}))``, as docs/fair-dice.md says."""
    return hashlib.sha256(json.dumps({"entropy": text, "member": member, "roll": roll}, separators=(",", ":"),
                                     sort_keys=True).encode()).hexdigest()


def commit(table, user, seq, tag=None):
    """``user``'s table commits to the entropy of ``tag`` (her name by default) for roll ``seq``."""
    return table.command(user, {"type": "witness_commit", "roll": seq,
                                "commitment": commitment_of(seq, user.pk, entropy(tag or user.username))})


def reveal(table, user, seq, tag=None):
    return table.command(user, {"type": "witness_roll", "roll": seq, "entropy": entropy(tag or user.username)})


def witness(table, seq, *users, tags=None) -> list[Event]:
    """Each of ``users`` commits to roll ``seq`` (the last closes it), then each reveals: their reveals."""
    tags = tags or [None] * len(users)
    for user, tag in zip(users, tags):
        commit(table, user, seq, tag)
    return [reveal(table, user, seq, tag).events[0] for user, tag in zip(users, tags)]


def contribute(table, user, seq, tag=None):
    """A roll's only witness commits (which closes it) and reveals: her reveal's result."""
    commit(table, user, seq, tag)
    return reveal(table, user, seq, tag)


def events_after(table, seq) -> list[Event]:
    return list(Event.objects.filter(campaign=table.campaign, seq__gt=seq).order_by("seq"))


def head(table) -> int:
    table.campaign.refresh_from_db()
    return table.campaign.last_seq


def face(seed, campaign_id, session, actor_id, dice_id, index, sides):
    """Section 2's derivation, written from docs/fair-dice.md, with "v4" and the witnessed id."""
    return independent_face(seed, campaign_id, session, actor_id, dice_id, index, sides, "v4")


def digest_of(contributions) -> str:
    """``SHA-256(JCS([[member id, entropy], ...]))`` by member id, as the page says, of ``(seq, member id,
    entropy)`` contributions."""
    rows = sorted([member, entropy] for _, member, entropy in contributions)
    return hashlib.sha256(json.dumps(rows, separators=(",", ":")).encode()).hexdigest()


def overdue(table) -> None:
    """Let the witnesses' time run out without waiting for it: every pending roll is due now."""
    from datetime import timedelta

    from django.utils import timezone

    from campaign.models import Campaign

    past = timezone.now() - timedelta(seconds=1)
    WitnessedRoll.objects.filter(campaign=table.campaign, resolved_seq__isnull=True).update(due_at=past)
    Campaign.objects.filter(pk=table.campaign.pk).update(witness_due=past)


def seed_of(table) -> str:
    from campaign.models import DiceSeed

    return DiceSeed.objects.get(campaign=table.campaign, session=table.campaign.current_session).seed


# --- the pipeline -----------------------------------------------------------------------------------

def test_a_gm_roll_is_stored_pending_then_decided_by_its_witnesses_entropy(table, online):
    table.command(table.gm, {"type": "start_session"})
    online("gm", "alice", "bob")
    result = table.command(table.gm, {"type": "roll", "notation": "3d6"})
    [pending] = result.events
    assert pending.type == "roll_pending" and "dice_log" not in pending.payload
    assert pending.payload["witnesses"] == sorted([table.alice.pk, table.bob.pk])
    assert pending.payload["command_id"] and pending.payload["signature"]["key"]
    ca = commit(table, table.alice, pending.seq).events[0]
    assert ca.type == "roll_committed" and events_after(table, ca.seq) == [], "one witness still to commit"
    cb = commit(table, table.bob, pending.seq).events[0]
    [closed] = events_after(table, cb.seq)
    assert closed.type == "commitments_closed" and closed.visibility == "public"
    assert closed.payload == {"command_of": pending.seq, "committed": [ca.seq, cb.seq]}
    assert closed.actor_id == table.gm.pk and closed.command_id == pending.command_id
    a = reveal(table, table.alice, pending.seq).events[0]
    assert a.type == "roll_witnessed" and events_after(table, a.seq) == [], "one witness still to reveal"
    b = reveal(table, table.bob, pending.seq).events[0]
    [decided] = events_after(table, b.seq)
    came = [(a.seq, table.alice.pk, entropy("alice")), (b.seq, table.bob.pk, entropy("bob"))]
    assert decided.type == "roll" and decided.payload["command_of"] == pending.seq
    assert decided.payload["witnessed_by"] == [a.seq, b.seq] and "unwitnessed" not in decided.payload
    assert decided.payload["witness_digest"] == digest_of(came)
    assert decided.payload["dice_scheme"] == "talekeeper-hmac-sha256-v4"
    dice_id = f"{pending.payload['command_id']}|{digest_of(came)}"
    assert decided.payload["dice_log"] == [
        [6, face(seed_of(table), table.campaign.id, 1, table.gm.pk, dice_id, i, 6)] for i in range(3)]
    assert WitnessedRoll.objects.get(campaign=table.campaign, pending_seq=pending.seq).resolved_seq == decided.seq


def test_with_nobody_else_online_a_gm_roll_is_decided_at_once_and_says_unwitnessed(table, online):
    table.command(table.gm, {"type": "start_session"})
    online("gm")
    pending, decided = table.command(table.gm, {"type": "roll", "notation": "1d20"}).events
    assert pending.payload["witnesses"] == [] and decided.payload["unwitnessed"] is True
    assert decided.payload["witnessed_by"] == [] and decided.payload["witness_digest"] == digest_of([])


def test_whose_rolls_wait_follows_the_setting(table, online):
    table.command(table.gm, {"type": "start_session"})
    online("gm", "alice", "bob")
    assert table.command(table.alice, {"type": "roll", "notation": "1d6"}).events[0].type == "roll"
    assert table.command(table.gm, {"type": "post_message", "text": "no dice"}).events[0].type != "roll_pending"
    for mode, sender, stored in (("everyone", table.alice, "roll_pending"), ("off", table.gm, "roll")):
        table.command(table.gm, {"type": "end_session"})
        table.command(table.gm, {"type": "configure_campaign", "settings": {"witnessed_rolls": mode}})
        table.command(table.gm, {"type": "start_session"})
        assert table.command(sender, {"type": "roll", "notation": "1d6"}).events[0].type == stored


def test_new_campaigns_witness_the_gms_rolls_from_their_first_event_and_only_where_members_sign(db):
    from django.contrib.auth import get_user_model

    gm = get_user_model().objects.create_user("keeper", password="pw-keeper-123456")
    made = do_create_campaign(gm, "New Table", "tote")  # as the home page and the demo make one
    created = Event.objects.get(campaign=made, seq=1).payload
    assert created["signed_commands"] is True and created["witnessed_rolls"] == "gm" and made.witnessed_rolls == "gm"
    old = do_create_campaign(gm, "Unsigned Table", "tote", signed=False)
    assert "witnessed_rolls" not in Event.objects.get(campaign=old, seq=1).payload and old.witnessed_rolls == "off"
    t = Table()
    with pytest.raises(ActionError) as caught:
        t.command(t.gm, {"type": "configure_campaign", "settings": {"witnessed_rolls": "gm"}})
    assert "sign" in caught.value.message


def test_the_setting_change_is_stored_as_campaign_configured(table):
    last = Event.objects.filter(campaign=table.campaign, type="campaign_configured").latest("seq").payload
    assert last["witnessed_rolls"] == "gm" and last["changed"] == {"witnessed_rolls": {"from": "off", "to": "gm"}}
    with pytest.raises(ActionError) as caught:
        table.command(table.gm, {"type": "configure_campaign", "settings": {"witnessed_rolls": "gm"}})
    assert caught.value.code == "unchanged"
    with pytest.raises(ActionError):
        table.command(table.gm, {"type": "configure_campaign", "settings": {"witnessed_rolls": "sometimes"}})


def test_on_timeout_the_roll_is_decided_with_the_contributions_that_came(table, online):
    table.command(table.gm, {"type": "start_session"})
    online("gm", "alice", "bob")
    [pending] = table.command(table.gm, {"type": "roll", "notation": "1d8"}).events
    ca = commit(table, table.alice, pending.seq).events[0]
    commands.resolve_overdue(table.campaign.id)
    assert head(table) == ca.seq, "not due yet: nothing closed"
    overdue(table)
    commands.resolve_overdue(table.campaign.id)
    [closed] = events_after(table, ca.seq)
    assert closed.payload["committed"] == [ca.seq], "closed with the commitments that came"
    with pytest.raises(ActionError) as late:
        commit(table, table.bob, pending.seq)
    assert late.value.code == "commitments_closed" and head(table) == closed.seq
    a = reveal(table, table.alice, pending.seq).events[0]
    [decided] = events_after(table, a.seq)
    assert decided.payload["witnessed_by"] == [a.seq]
    commands.resolve_overdue(table.campaign.id)
    assert head(table) == decided.seq, "decided exactly once"


def test_any_command_sweeps_an_overdue_roll_first(table, online):
    """A process that stored a pending roll and died leaves no roll pending: the campaign's next command
    decides it before its own."""
    table.command(table.gm, {"type": "start_session"})
    online("gm", "alice")
    [pending] = table.command(table.gm, {"type": "roll", "notation": "1d8"}).events
    online()
    overdue(table)
    roll = table.command(table.bob, {"type": "roll", "notation": "1d4"}).events[0]
    closed, decided = Event.objects.filter(campaign=table.campaign, seq__gt=pending.seq, seq__lt=roll.seq).order_by("seq")
    assert closed.type == "commitments_closed" and closed.payload == {"command_of": pending.seq, "committed": []}
    assert decided.payload["command_of"] == pending.seq and decided.payload["unwitnessed"] is True
    assert roll.seq == decided.seq + 1


def test_ending_the_session_decides_every_pending_roll_first(table, online):
    table.command(table.gm, {"type": "start_session"})
    online("gm", "alice")
    [pending] = table.command(table.gm, {"type": "roll", "notation": "1d8"}).events
    commit(table, table.alice, pending.seq)  # closed, and her reveal not come yet
    ended = table.command(table.gm, {"type": "end_session"}).events[0]
    decided = Event.objects.get(campaign=table.campaign, seq=pending.seq + 3)
    assert decided.payload["unwitnessed"] is True
    assert decided.payload["command_of"] == pending.seq and decided.session == 1 and ended.seq == decided.seq + 1


def test_removing_a_member_decides_her_pending_roll_first(table, online, tmp_path):
    """A roll is decided with its sender's rights: removed first, it could not be decided as sent, and
    no verifier could replay that."""
    table.command(table.gm, {"type": "configure_campaign", "settings": {"witnessed_rolls": "everyone"}})
    table.command(table.gm, {"type": "start_session"})
    online("gm", "alice", "bob")
    [pending] = table.command(table.alice, {"type": "roll", "notation": "1d8"}).events
    removed = table.command(table.gm, {"type": "remove_member", "username": "alice"}).events[0]
    assert Event.objects.get(campaign=table.campaign, seq=pending.seq + 1).type == "commitments_closed"
    decided = Event.objects.get(campaign=table.campaign, seq=pending.seq + 2)
    assert decided.type == "roll" and decided.payload["command_of"] == pending.seq
    assert removed.seq == decided.seq + 1
    table.command(table.gm, {"type": "end_session"})
    assert verify_dice(table, 1) == ""


@pytest.mark.parametrize("case", ["not_a_witness", "not_a_witness_after", "twice", "after", "unknown", "entropy",
                                  "before_the_close", "not_committed", "mismatch", "commit_twice", "commit_after_close",
                                  "commitment"])
def test_a_contribution_out_of_turn_is_refused_and_stores_nothing(table, online, case):
    table.command(table.gm, {"type": "start_session"})
    online("gm", "alice", "bob", "watcher")
    [pending] = table.command(table.gm, {"type": "roll", "notation": "1d8"}).events
    action = {"type": "witness_roll", "roll": pending.seq, "entropy": entropy("alice")}
    user, want = table.alice, None
    if case == "not_a_witness":
        user, want = table.gm, ("not_a_witness", 403)
    elif case == "twice":
        for witnessing_user in (table.alice, table.bob, table.watcher):
            commit(table, witnessing_user, pending.seq)
        reveal(table, table.alice, pending.seq)
        want = ("already_witnessed", 409)
    elif case in ("after", "not_a_witness_after"):
        witness(table, pending.seq, table.alice, table.bob, table.watcher)
        want = ("roll_resolved", 409)
        if case == "not_a_witness_after":  # access before state: whether it was decided is not hers to learn
            user, want = table.gm, ("not_a_witness", 403)
    elif case == "unknown":
        action["roll"], want = 1, ("not_pending", 404)
    elif case == "entropy":
        action["entropy"], want = entropy("x")[:20], ("invalid", 400)
    elif case == "before_the_close":  # a reveal a witness who has not committed yet could answer
        commit(table, table.alice, pending.seq)
        want = ("not_closed", 409)
    elif case in ("not_committed", "mismatch", "commit_after_close"):
        commit(table, table.alice, pending.seq)
        commit(table, table.bob, pending.seq)
        overdue(table)
        commands.resolve_overdue(table.campaign.id)  # closed without the watcher's commitment
        if case == "not_committed":
            user, action["entropy"], want = table.watcher, entropy("watcher"), ("not_committed", 409)
        elif case == "mismatch":  # ground after seeing the others' entropy: not what she committed to
            action["entropy"], want = entropy("ground"), ("reveal_mismatch", 400)
        else:
            user, want = table.watcher, ("commitments_closed", 409)
            action = {"type": "witness_commit", "roll": pending.seq,
                      "commitment": commitment_of(pending.seq, table.watcher.pk, entropy("watcher"))}
    elif case == "commit_twice":
        commit(table, table.alice, pending.seq)
        action = {"type": "witness_commit", "roll": pending.seq,
                  "commitment": commitment_of(pending.seq, table.alice.pk, entropy("again"))}
        want = ("already_committed", 409)
    else:
        action = {"type": "witness_commit", "roll": pending.seq, "commitment": "ab" * 31}
        want = ("invalid", 400)
    before = head(table)
    with pytest.raises(ActionError) as caught:
        table.command(user, action)
    assert (caught.value.code, caught.value.status) == want, caught.value.message
    assert head(table) == before


def test_a_hidden_gm_roll_is_sealed_and_calls_its_witnesses_in_public(table, online):
    from tests.campaign.served import seen

    table.command(table.gm, {"type": "start_session"})
    online("gm", "alice")
    pending, call = table.command(table.gm, {"type": "roll", "notation": "1d20", "visibility": "gm"}).events
    assert pending.visibility == "gm" and call.visibility == "public"
    assert call.type == "witness_call" and call.payload == {"witnesses": [table.alice.pk], "command_of": pending.seq}
    assert seen(table.alice, pending.seq)["hidden"] is True
    contribute(table, table.alice, pending.seq)
    decided = Event.objects.filter(campaign=table.campaign).latest("seq")
    assert decided.visibility == "gm" and decided.payload["command_of"] == pending.seq
    assert seen(table.alice, decided.seq)["hidden"] is True


def test_revealing_a_hidden_witnessed_roll_reveals_its_pending_event_and_every_verifier_checks_it(table, online,
                                                                                                  tmp_path):
    """Its dice derive from the command id on its pending event: revealed alone, the decision's dice could
    be checked by no member, and the standalone verifier would name it."""
    table.command(table.gm, {"type": "start_session"})
    online("gm", "alice")
    pending, _ = table.command(table.gm, {"type": "roll", "notation": "1d20", "visibility": "gm"}).events
    contribute(table, table.alice, pending.seq)
    decided = Event.objects.filter(campaign=table.campaign).latest("seq")
    reveals = table.command(table.gm, {"type": "reveal", "seq": decided.seq}).events
    assert [e.payload["seq"] for e in reveals] == [pending.seq, decided.seq]
    table.command(table.gm, {"type": "end_session"})
    assert verify_dice(table, 1) == "" and verify_log(table) == ""
    code, out = standalone(table, table.bob, tmp_path)
    assert code == 0, out
    assert chain_problems(table, table.bob) == []


def hidden_roll_decided(table, online):
    """In session, the GM's roll only she reads, witnessed by Alice: its pending event and its decision."""
    table.command(table.gm, {"type": "start_session"})
    online("gm", "alice")
    pending, _ = table.command(table.gm, {"type": "roll", "notation": "1d20", "visibility": "gm"}).events
    contribute(table, table.alice, pending.seq)
    return pending, Event.objects.get(campaign=table.campaign, type="roll", payload__command_of=pending.seq)


def page_checks(table, user) -> dict:
    """What the verification page (static/talekeeper/logchecks.js: the reveals, the dice of every finished
    session, the witnessed rolls) says of the log as ``user`` reads it from the events API:
    ``{"checks": [{name, ok, text}], "problems": [{seq, message}]}``. Written to the file
    ``TALEKEEPER_RECORD_LOG`` names, if set: how tests/js/logs/ were recorded."""
    import os

    events = client_for(user).get(f"/api/campaigns/{table.campaign.slug}/events?after=0&limit=500").json()["events"]
    if os.environ.get("TALEKEEPER_RECORD_LOG"):
        Path(os.environ["TALEKEEPER_RECORD_LOG"]).write_text(json.dumps(
            {"campaign": table.campaign.id, "reader": user.username, "events": events}, indent=1) + "\n")
    script = f"""
import {{ bodyDigests, checkDice, checkReveals, checkWitnessed, newReport }} from "./static/talekeeper/logchecks.js";
const events = JSON.parse(process.argv[1]);
const report = newReport();
await checkReveals(events, await bodyDigests(events, {table.campaign.id}), report);
await checkDice(events, report, {table.campaign.id});
await checkWitnessed(events, report);
console.log(JSON.stringify(report));
"""
    done = subprocess.run([shutil.which("node"), "--input-type=module", "-e", script, json.dumps(events)],
                          capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_a_revealed_hidden_witnessed_roll_is_checked_by_the_verification_page_like_any_other(table, online):
    """Once the GM reveals it, a player's page reads the roll whole (the events API serves a revealed event
    unsealed): its dice from the seed and the witness digest, its contributions and commitments."""
    pending, decided = hidden_roll_decided(table, online)
    table.command(table.gm, {"type": "reveal", "seq": decided.seq})
    table.command(table.gm, {"type": "end_session"})
    said = page_checks(table, table.bob)
    assert said["problems"] == []
    checks = {c["name"]: c["text"] for c in said["checks"]}
    assert checks["Dice"] == "1 die matches its session's revealed seed (session 1: 1 die)."
    assert checks["Witnessed rolls"] == "1 witnessed roll decided with every contribution stored before it."


def test_a_revealed_hidden_witnessed_roll_whose_dice_the_seed_did_not_give_is_named_by_every_verifier(
        table, online, tmp_path):
    """The host's server wrote a hidden roll's dice itself (the reveal, made from what it stored, matches its
    seal): once revealed, every verifier that reads it names the die, the verification page included."""
    pending, decided = hidden_roll_decided(table, online)
    seed = seed_of(table)
    honest = decided.payload["dice_log"][0][1]
    wrong = honest % 20 + 1
    outcome = roll_event(pending.payload["action"], ScriptedDice([wrong]))
    host.edit_payload(table.campaign, decided.seq, {**decided.payload, **json.loads(json.dumps(outcome.payload)),
                                                    "dice_log": [[20, wrong]]})
    table.command(table.gm, {"type": "reveal", "seq": decided.seq})
    table.command(table.gm, {"type": "end_session"})
    assert face(seed, table.campaign.id, 1, table.gm.pk, f"{pending.payload['command_id']}|"
                f"{decided.payload['witness_digest']}", 0, 20) == honest
    said = f"die 1 (d20) shows {wrong}, the seed gives {honest}"
    assert f"seq {decided.seq}: {said}" in verify_dice(table, 1)
    code, out = standalone(table, table.bob, tmp_path)
    assert code == 1 and f"BAD seq {decided.seq}: {said}" in out, out
    assert page_checks(table, table.bob)["problems"] == [
        {"seq": decided.seq, "message": f"#{decided.seq}: die 1 (d20) shows {wrong}; the seed gives {honest}."}]


def test_a_pending_event_revealed_alone_leaves_its_sealed_decision_to_the_gms_export(table, online, tmp_path):
    """The GM reveals a hidden roll's pending event and not its decision: a player reads the roll waiting,
    and its decision sealed. No verifier of hers takes it for a roll never decided (the event sealed from her
    after it may be its decision); the GM's, which reads it, checks it whole."""
    pending, decided = hidden_roll_decided(table, online)
    assert [e.payload["seq"] for e in table.command(table.gm, {"type": "reveal", "seq": pending.seq}).events] == [
        pending.seq]
    table.command(table.gm, {"type": "end_session"})
    assert verify_dice(table, 1) == "" and verify_log(table) == ""
    code, out = standalone(table, table.bob, tmp_path)
    assert code == 0, out
    assert chain_problems(table, table.bob) == []
    said = page_checks(table, table.bob)
    assert said["problems"] == [], said
    assert "1 event sealed from you" in {c["name"]: c["text"] for c in said["checks"]}["Dice"]


def test_a_roll_never_decided_is_named_unless_an_event_sealed_from_the_reader_may_be_its_decision():
    """A roll sealed from the reader is known by its public call, and its decision could be sealed from her
    only as some event after it: with none, she can tell it was never decided (rules/witness.py; the
    browser's witness.js alike, tests/test_js.py)."""
    from rules.witness import Seen, problems

    def log(*between):
        return [Seen(1, "session_started", {"session": 1, "witness_commits": True}, 1, "gm", 1),
                Seen(2, None, None, 1, "gm", 1),  # the sealed pending event
                Seen(3, "witness_call", {"witnesses": [2], "command_of": 2}, 1, "gm", 1),
                Seen(4, "roll_pending", {"witnesses": [2], "command_id": "c", "action": {"type": "roll"}}, 1, "gm", 1),
                *between, Seen(9, "session_ended", {"session": 1}, 1, "gm", 1)]

    assert problems(log()) == [(2, "a witnessed roll never decided before its session ended (#9)"),
                               (4, "a witnessed roll never decided before its session ended (#9)")]
    assert problems(log(Seen(5, None, None, 1, "gm", 1))) == []  # either may be decided there


def test_a_pending_roll_is_read_by_exactly_its_decisions_readers(table, online):
    """Alice's public test on top of her own secret one is hers and the GM's (docs/hidden-information.md):
    so is its pending event, which she reads (it is her own command) and Bob and the spectator receive
    sealed, like the decision. Before, the pending event took the visibility the action asked."""
    from tests.campaign.served import seen

    table.command(table.gm, {"type": "configure_campaign", "settings": {"witnessed_rolls": "everyone"}})
    hero = table.create_character(table.alice, "Hero", table.campaign.rules.example_sheet)
    table.command(table.gm, {"type": "start_session"})
    online("gm", "alice", "bob")
    secret = {"type": "skill_test", "character": hero.id, "skill": "Strike", "target": 9, "visibility": "secret"}
    pending = table.command(table.alice, secret).events[0]
    witness(table, pending.seq, table.gm, table.bob)
    public = {**secret, "visibility": "public"}
    pending, call = table.command(table.alice, public).events
    assert (pending.type, pending.visibility, call.type) == ("roll_pending", "gm", "witness_call")
    assert pending.payload["shared_with"] == [{"user_id": table.alice.pk, "username": "alice"}]
    witness(table, pending.seq, table.gm, table.bob)
    decided = Event.objects.filter(campaign=table.campaign).latest("seq")
    assert decided.payload["command_of"] == pending.seq
    assert (decided.visibility, decided.payload["shared_with"]) == (pending.visibility, pending.payload["shared_with"])
    for seq in (pending.seq, decided.seq):
        assert seen(table.alice, seq).get("hidden") is None and seen(table.gm, seq).get("hidden") is None
        assert seen(table.bob, seq)["hidden"] is True and seen(table.watcher, seq)["hidden"] is True


def test_scripted_dice_script_a_witnessed_rolls_faces(table, online, settings, tmp_path):
    script = tmp_path / "dice.json"
    script.write_text(json.dumps({"faces": [17]}))
    settings.TEST_DICE_FILE = str(script)
    table.command(table.gm, {"type": "start_session"})
    online("gm", "alice")
    [pending] = table.command(table.gm, {"type": "roll", "notation": "1d20"}).events
    assert json.loads(script.read_text())["faces"] == [17], "storing it pending drew no die"
    contribute(table, table.alice, pending.seq)
    decided = Event.objects.filter(campaign=table.campaign).latest("seq")
    assert decided.payload["dice_log"] == [[20, 17]] and decided.payload["total"] == 17


# --- every verifier -----------------------------------------------------------------------------------

def standalone(table, user, tmp_path) -> tuple[int, str]:
    from tests.campaign.test_standalone_verifier import download, run

    result = run(download(table, user, tmp_path, f"{user.username}.jsonl"))
    return result.returncode, result.stdout + result.stderr


def chain_problems(table, user, commands: bool = False) -> list[str]:
    """What the table's chain check (static/talekeeper/chain.js) says of the log as ``user`` reads it from
    #1; ``commands``: with its check of every member's command (static/talekeeper/signed.js), wired as
    static/talekeeper/logcheck.js wires it (the verification page runs the same classes)."""
    events = client_for(user).get(f"/api/campaigns/{table.campaign.slug}/events?after=0&limit=500").json()["events"]
    inspect = ", inspect: async (ev) => { for (const p of (await check.check(ev)).problems) problems.push(`#${ev.seq} ${p}`); }"
    script = f"""
import {{ Chain }} from "./static/talekeeper/chain.js";
import {{ CommandCheck }} from "./static/talekeeper/signed.js";
const problems = [];
const check = new CommandCheck({table.campaign.id});
const chain = new Chain({{ slug: "t", campaignId: {table.campaign.id}, fetchEvents: async () => [],
  onProblem: (p) => problems.push(`#${{p.seq}} ${{p.message}}`){inspect if commands else ""} }});
for (const ev of JSON.parse(process.argv[1])) await chain.event(ev);
console.log(JSON.stringify(problems));
"""
    done = subprocess.run([shutil.which("node"), "--input-type=module", "-e", script, json.dumps(events)],
                          capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def named_by_every_verifier(table, reader, tmp_path, seq: int, said: str, browser_said: str | None = None) -> None:
    """``verify_dice``, ``verify_log``, the standalone verifier on ``reader``'s export and the browser's
    chain check all name event ``seq`` with ``said`` (the browser in its own words, ``browser_said``)."""
    assert f"seq {seq}: {said}" in verify_dice(table, 1)
    assert f"BAD seq {seq}: {said}" in verify_log(table)
    code, out = standalone(table, reader, tmp_path)
    assert code == 1 and f"BAD seq {seq}: {said}" in out, out
    problems = chain_problems(table, reader)
    assert any(p.startswith(f"#{seq} #{seq} {browser_said or said}") for p in problems), problems


def witnessed_evening(table, online):
    """A session with a public and a GM-only witnessed roll, two witnesses each, and an unwitnessed one."""
    table.command(table.gm, {"type": "start_session"})
    online("gm", "alice", "bob")
    rolls = []
    for visibility in ("public", "gm"):
        pending = table.command(table.gm, {"type": "roll", "notation": "2d10", "visibility": visibility}).events[0]
        witness(table, pending.seq, table.alice, table.bob, tags=[f"a{visibility}", f"b{visibility}"])
        rolls.append(pending)
    online()
    table.command(table.gm, {"type": "roll", "notation": "1d6"})
    table.command(table.alice, {"type": "roll", "notation": "1d6"})
    table.command(table.gm, {"type": "end_session"})
    return rolls


def test_an_honest_witnessed_evening_verifies_everywhere(table, online, tmp_path):
    witnessed_evening(table, online)
    assert verify_dice(table, 1) == "" and verify_log(table) == ""
    for user in (table.gm, table.bob):
        code, out = standalone(table, user, tmp_path)
        assert code == 0, out
        assert chain_problems(table, user) == []


def forge_resolution(table, pending_seq, keep) -> int:
    """The host rewrites roll ``pending_seq``'s decision as if only the contributions at ``keep`` (seqs)
    had come: witnessed_by, the digest, the dice from the seed and the outcome from the rules, all
    consistent with each other, and every hash after it recomputed."""
    decided = Event.objects.get(campaign=table.campaign, type="roll", payload__command_of=pending_seq)
    pending = Event.objects.get(campaign=table.campaign, seq=pending_seq)
    kept = [(e.seq, e.actor_id, e.payload["action"]["entropy"]) for e in Event.objects.filter(
        campaign=table.campaign, seq__in=keep).order_by("seq")]
    digest = digest_of(kept)
    seed = Event.objects.get(campaign=table.campaign, type="session_ended").payload["dice_seed"]
    dice_id = f"{pending.payload['command_id']}|{digest}"

    class Dice:
        index = 0

        def roll(self, sides):
            value = face(seed, table.campaign.id, 1, table.gm.pk, dice_id, self.index, sides)
            self.index += 1
            log.append([sides, value])
            return value

    log: list = []
    outcome = roll_event(pending.payload["action"], Dice())
    payload = {**decided.payload, **json.loads(json.dumps(outcome.payload)), "dice_log": log,
               "witnessed_by": [seq for seq, _, _ in kept], "witness_digest": digest}
    host.edit_payload(table.campaign, decided.seq, payload)
    return decided.seq


def test_a_gm_roll_decided_with_a_contribution_left_out_is_named_by_every_verifier(table, online, tmp_path):
    """The host saw both contributions, computed the dice both ways and kept the one without Bob's: every
    verifier that reads the roll names the contribution left out, though the dice match the digest."""
    public, _ = witnessed_evening(table, online)
    alices, bobs = [e.seq for e in Event.objects.filter(campaign=table.campaign, type="roll_witnessed",
                                                         payload__roll=public.seq).order_by("seq")]
    forged = forge_resolution(table, public.seq, keep=[alices])
    named_by_every_verifier(table, table.alice, tmp_path, forged,
                            f"leaves out the contribution #{bobs} stored before it",
                            f"leaves out the contribution #{bobs}")


def test_where_the_host_stores_the_contributions_moves_no_die(table, online, tmp_path):
    """The host chooses each contribution's seq: it can store Bob's before Alice's, or its GM's own
    signed events (notes only she reads) ahead of either, as many as it likes. Were the seqs in the
    digest, each placement would give other dice, checked by every verifier: far more outcomes than the
    subsets of contributions it can leave out. The digest covers who contributed what, not where."""
    public, _ = witnessed_evening(table, online)
    honest = Event.objects.get(campaign=table.campaign, type="roll", payload__command_of=public.seq).payload
    alices, bobs = honest["witnessed_by"]
    host.swap(table.campaign, alices, bobs)
    forged = Event.objects.get(campaign=table.campaign, seq=forge_resolution(table, public.seq, keep=[alices, bobs]))
    assert forged.payload["witnessed_by"] == [alices, bobs] and forged.actor_id == table.gm.pk
    assert forged.payload["witness_digest"] == honest["witness_digest"]
    assert forged.payload["dice_log"] == honest["dice_log"]
    assert verify_dice(table, 1) == "" and verify_log(table) == ""
    assert standalone(table, table.bob, tmp_path)[0] == 0 and chain_problems(table, table.bob) == []


def test_a_gm_roll_whose_digest_is_not_its_contributions_is_named(table, online, tmp_path):
    public, _ = witnessed_evening(table, online)
    decided = Event.objects.get(campaign=table.campaign, type="roll", payload__command_of=public.seq)
    host.edit_payload(table.campaign, decided.seq, {**decided.payload, "witness_digest": "0" * 64})
    said = "its witness digest is not the digest of the contributions it names"
    assert f"seq {decided.seq}: {said}" in verify_dice(table, 1)
    code, out = standalone(table, table.bob, tmp_path)
    assert code == 1 and f"BAD seq {decided.seq}: {said}" in out, out
    assert any("witness digest" in p for p in chain_problems(table, table.bob))


@pytest.mark.parametrize("renamed", [False, True])
def test_a_gm_roll_stored_without_waiting_for_witnesses_is_named(table, online, tmp_path, monkeypatch, renamed):
    """The host's server skips the pending step for its GM's roll (it could then choose her dice). Renamed:
    it renames its GM's account too (a username is no part of the chain): whose rolls wait is read by
    member id, so the roll is still hers."""
    from django.contrib.auth import get_user_model

    table.command(table.gm, {"type": "start_session"})
    online("gm", "alice")
    with monkeypatch.context() as patched:
        patched.setattr(commands, "_witnessed", lambda *args: False)
        roll = table.command(table.gm, {"type": "roll", "notation": "1d20"}).events[0]
    table.command(table.gm, {"type": "end_session"})
    if renamed:
        get_user_model().objects.filter(pk=table.gm.pk).update(username="keeper")
    said = "stored without waiting for witnesses"
    assert said in verify_dice(table, 1) and f"BAD seq {roll.seq}: " in verify_log(table)
    code, out = standalone(table, table.bob, tmp_path)
    assert code == 1 and f"BAD seq {roll.seq}: " in out and said in out, out
    assert any(p.startswith(f"#{roll.seq} #{roll.seq} is a roll by a member") and said in p
               for p in chain_problems(table, table.bob)), chain_problems(table, table.bob)


def test_a_decision_whose_dice_do_not_follow_its_digest_is_named(table, online, tmp_path):
    public, _ = witnessed_evening(table, online)
    decided = Event.objects.get(campaign=table.campaign, type="roll", payload__command_of=public.seq)
    log = [[10, f % 10 + 1] for _, f in decided.payload["dice_log"]]
    host.edit_payload(table.campaign, decided.seq, {**decided.payload, "dice_log": log})
    assert f"seq {decided.seq}: die 1 (d10)" in verify_dice(table, 1)
    code, out = standalone(table, table.bob, tmp_path)
    assert code == 1 and f"BAD seq {decided.seq}: die 1 (d10)" in out, out


def test_exactly_one_resolution_per_pending_roll_is_kept_in_the_database(table, online):
    from django.db import IntegrityError, transaction

    table.command(table.gm, {"type": "start_session"})
    online("gm", "alice")
    [pending] = table.command(table.gm, {"type": "roll", "notation": "1d8"}).events
    contribute(table, table.alice, pending.seq)
    row = WitnessedRoll.objects.get(campaign=table.campaign, pending_seq=pending.seq)
    before = head(table)
    with transaction.atomic():
        assert commands._resolve(commands.lock_campaign(table.campaign.id), row) == []
    assert head(table) == before
    with pytest.raises(IntegrityError), transaction.atomic():
        WitnessedRoll.objects.create(campaign=table.campaign, pending_seq=pending.seq, due_at=row.due_at)


def test_the_dice_digest_in_python_and_javascript_agree():
    came = [[7, 2, entropy("a")], [5, 3, entropy("b")]]
    script = f"""
import {{ digestText }} from "./static/talekeeper/witness.js";
import {{ sha256Hex }} from "./static/talekeeper/chain.js";
console.log(await sha256Hex(digestText({json.dumps(came)})));
"""
    done = subprocess.run([shutil.which("node"), "--input-type=module", "-e", script], capture_output=True,
                          text=True, cwd=ROOT, timeout=60)
    from rules.witness import digest

    assert done.stdout.strip() == digest([tuple(c) for c in came]) == digest_of(sorted(map(tuple, came)))




@pytest.mark.postgres  # the timer's thread needs a database other connections share
@pytest.mark.django_db(transaction=True)
def test_the_timer_of_the_process_that_stored_it_decides_a_roll_nobody_completes(online, settings, monkeypatch,
                                                                                  require_postgres):
    """The timer runs the resolver on a thread of its own, with its own connection: joined here, not
    waited for by the clock."""
    started = []

    class Recorded(witnessing.threading.Timer):
        def start(self):
            started.append(self)
            super().start()

    monkeypatch.setattr(witnessing.threading, "Timer", Recorded)
    settings.WITNESS_TIMER, settings.WITNESS_COMMIT_SECONDS = True, 0.05
    table = Table(signed=True)
    table.command(table.gm, {"type": "configure_campaign", "settings": {"witnessed_rolls": "gm"}})
    table.command(table.gm, {"type": "start_session"})
    online("gm", "alice")
    [pending] = table.command(table.gm, {"type": "roll", "notation": "1d8"}).events
    [timer] = started  # no commitment came: closed empty, and decided at once
    timer.join(30)
    decided = Event.objects.get(campaign=table.campaign, seq=pending.seq + 2)
    assert decided.payload["command_of"] == pending.seq and decided.payload["unwitnessed"] is True
    assert WitnessedRoll.objects.get(campaign=table.campaign, pending_seq=pending.seq).resolved_seq == decided.seq


def test_whose_rolls_are_witnessed_changes_between_sessions_only(table, online, tmp_path, monkeypatch):
    """Switched off, a roll, switched on again inside one session, the GM-host's roll would escape its
    witnesses: the server refuses the switch there, and every verifier names one a host stored."""
    from campaign.actions import campaign_options

    table.command(table.gm, {"type": "start_session"})
    before = head(table)
    with pytest.raises(ActionError) as refused:
        table.command(table.gm, {"type": "configure_campaign", "settings": {"witnessed_rolls": "off"}})
    assert refused.value.code == "in_session" and head(table) == before
    online("gm", "alice")
    with monkeypatch.context() as patched:
        patched.setattr(campaign_options, "_witness_mode", lambda campaign, value: value)
        off = table.command(table.gm, {"type": "configure_campaign", "settings": {"witnessed_rolls": "off"}}).events[0]
        table.command(table.gm, {"type": "roll", "notation": "1d20"})
        table.command(table.gm, {"type": "configure_campaign", "settings": {"witnessed_rolls": "gm"}})
    table.command(table.gm, {"type": "end_session"})
    named_by_every_verifier(table, table.bob, tmp_path, off.seq, "changes whose rolls are witnessed inside a session")


@pytest.mark.parametrize("stored", ["off", "Gm"])
def test_a_setting_its_line_does_not_say_is_named(table, tmp_path, stored):
    """The log's line of a settings change reads its ``changed`` (\"witnessed_rolls off → gm\"), every
    check reads its ``witnessed_rolls``: the host stores "off" under a line that says "gm", or a value
    that is no setting (and so witnesses nobody), and the members believe their GM's rolls witnessed."""
    configured = Event.objects.filter(campaign=table.campaign, type="campaign_configured").latest("seq")
    changed = {"witnessed_rolls": {"from": "off", "to": "gm" if stored == "off" else stored}}
    host.edit_payload(table.campaign, configured.seq, {**configured.payload, "witnessed_rolls": stored,
                                                       "changed": changed})
    said = "sets whose rolls are witnessed otherwise than its line of the log says, or to no setting"
    assert f"BAD seq {configured.seq}: {said}" in verify_log(table)
    code, out = standalone(table, table.bob, tmp_path)
    assert code == 1 and f"BAD seq {configured.seq}: {said}" in out, out
    assert any(p.startswith(f"#{configured.seq} #{configured.seq} {said}") for p in chain_problems(table, table.bob))


def test_a_gm_steps_down_between_sessions_only_where_her_rolls_are_witnessed(table, online, tmp_path, monkeypatch):
    """Whose rolls wait follows the roles: the GM-host makes a member she holds (Bob, here) a GM, has him
    make her a player, rolls as a player (no witnesses) and is made GM again, inside one session. As with
    the setting switched off and on around a roll, her roll would escape its witnesses: the server
    refuses the step down there, and every verifier names one a host stored."""
    import rules.witness as witnessed_rules

    table.command(table.gm, {"type": "start_session"})
    online("gm", "alice", "bob")
    table.command(table.gm, {"type": "change_role", "username": "bob", "role": "gm"})
    before = head(table)
    with pytest.raises(ActionError) as refused:
        table.command(table.bob, {"type": "change_role", "username": "gm", "role": "player"})
    assert refused.value.code == "in_session" and head(table) == before
    with monkeypatch.context() as patched:
        patched.setattr(witnessed_rules, "steps_down", lambda *args: False)
        patched.setattr(commands, "_witnessed", lambda *args: False)  # else she stays witnessed to the end
        stepped = table.command(table.bob, {"type": "change_role", "username": "gm", "role": "player"}).events[0]
        assert table.command(table.gm, {"type": "roll", "notation": "1d20"}).events[0].type == "roll", "not witnessed"
    table.command(table.bob, {"type": "change_role", "username": "gm", "role": "gm"})
    table.command(table.gm, {"type": "end_session"})
    said = "changes who is a GM inside a session where the GM's rolls are witnessed"
    named_by_every_verifier(table, table.alice, tmp_path, stepped.seq, said)


def gm_removed_and_back_as_player(table, monkeypatch) -> Event:
    """Inside a session Bob, made a GM, removes the GM-host, who comes back as a player by a join the
    server makes (no command): the removal let through as a dishonest host's server would. Her join."""
    import rules.witness as witnessed_rules
    from campaign.actions import do_add_member

    with monkeypatch.context() as patched:
        patched.setattr(witnessed_rules, "steps_down", lambda *args: False)
        table.command(table.bob, {"type": "remove_member", "username": "gm"})
    do_add_member(table.campaign, table.gm, "player")
    return Event.objects.filter(campaign=table.campaign, type="member_joined").latest("seq")


def test_a_gm_leaves_the_table_between_sessions_only_and_stays_witnessed_to_its_end(table, online, monkeypatch):
    """Removed and added again as a player, the GM-host would step down with no role change: the server
    refuses the removal inside a session, and a GM who came back as a player anyway (a server that let
    the removal through) still has her rolls wait for witnesses to the session's end."""
    table.command(table.gm, {"type": "start_session"})
    online("gm", "alice", "bob")
    table.command(table.gm, {"type": "change_role", "username": "bob", "role": "gm"})
    before = head(table)
    with pytest.raises(ActionError) as refused:
        table.command(table.bob, {"type": "remove_member", "username": "gm"})
    assert refused.value.code == "in_session" and "between sessions only" in str(refused.value)
    assert head(table) == before
    gm_removed_and_back_as_player(table, monkeypatch)
    assert table.command(table.gm, {"type": "roll", "notation": "1d20"}).events[0].type == "roll_pending"


def test_a_gm_removed_and_joined_again_as_a_player_inside_a_session_is_named(table, online, tmp_path, monkeypatch):
    """The host's server lets Bob remove the GM-host inside a session, writes her join as a player
    itself, and stores her roll without its witnesses; Bob makes her GM again. Every verifier names the
    join, and the roll: she was a GM in that session, so her rolls wait to its end whatever her role."""
    table.command(table.gm, {"type": "start_session"})
    online("gm", "alice", "bob")
    table.command(table.gm, {"type": "change_role", "username": "bob", "role": "gm"})
    joined = gm_removed_and_back_as_player(table, monkeypatch)
    assert joined.payload["role"] == "player" and joined.command_id is None
    with monkeypatch.context() as patched:
        patched.setattr(commands, "_witnessed", lambda *args: False)
        roll = table.command(table.gm, {"type": "roll", "notation": "1d20"}).events[0]
    assert roll.type == "roll"
    table.command(table.bob, {"type": "change_role", "username": "gm", "role": "gm"})
    table.command(table.gm, {"type": "end_session"})
    said = "changes who is a GM inside a session where the GM's rolls are witnessed"
    named_by_every_verifier(table, table.alice, tmp_path, joined.seq, said)
    said = "a roll by a member whose rolls this campaign witnesses (gm), stored without waiting for witnesses"
    assert f"seq {roll.seq}: {said}" in verify_dice(table, 1)
    code, out = standalone(table, table.alice, tmp_path)
    assert code == 1 and f"BAD seq {roll.seq}: {said}" in out, out
    problems = chain_problems(table, table.alice)
    assert any(p.startswith(f"#{roll.seq} #{roll.seq} is {said}") for p in problems), problems


def test_a_pending_roll_whose_witness_list_is_no_list_is_named(table, online, tmp_path):
    """The host rewrites a pending roll's witnesses as something no contribution can be checked against
    (any member's would then pass as a witness's): every verifier names the pending event."""
    table.command(table.gm, {"type": "start_session"})
    online("gm", "alice")
    pending = table.command(table.gm, {"type": "roll", "notation": "1d20"}).events[0]
    contribute(table, table.alice, pending.seq)
    table.command(table.gm, {"type": "end_session"})
    host.edit_payload(table.campaign, pending.seq, {**pending.payload, "witnesses": "everyone"})
    said = "a witnessed roll whose witnesses are not member ids in ascending order"
    named_by_every_verifier(table, table.bob, tmp_path, pending.seq, said, f"is {said}")


# --- commit-then-reveal: the last word ----------------------------------------------------------------

def set_closed(table, pending_seq, closed_seq) -> None:
    """The host's own server thinks roll ``pending_seq``'s commitments closed at ``closed_seq`` (None: open)."""
    WitnessedRoll.objects.filter(campaign=table.campaign, pending_seq=pending_seq).update(closed_seq=closed_seq)


def test_a_witness_the_host_holds_cannot_reveal_ground_entropy_and_a_host_that_stores_it_is_named(
        table, online, tmp_path, monkeypatch):
    """Bob's table is the host's. It committed like Alice's; once her entropy is revealed it grinds its own
    offline and reveals that: it does not match Bob's commitment, so the server refuses it, and a host
    whose server stores it anyway (and decides with it) is named by every verifier."""
    from campaign.actions import witnesses as witness_actions

    table.command(table.gm, {"type": "start_session"})
    online("gm", "alice", "bob")
    [pending] = table.command(table.gm, {"type": "roll", "notation": "1d20"}).events
    commit(table, table.alice, pending.seq)
    commit(table, table.bob, pending.seq)
    reveal(table, table.alice, pending.seq)
    before = head(table)
    with pytest.raises(ActionError) as refused:
        reveal(table, table.bob, pending.seq, "ground")
    assert refused.value.code == "reveal_mismatch" and head(table) == before
    with monkeypatch.context() as patched:  # the host's own server: any reveal matches
        patched.setattr(witness_actions.witnessed, "commitment", lambda *args: commitment_of(
            pending.seq, table.bob.pk, entropy("bob")))
        ground = reveal(table, table.bob, pending.seq, "ground").events[0]
    decided = events_after(table, ground.seq)[0]
    assert ground.seq in decided.payload["witnessed_by"]
    table.command(table.gm, {"type": "end_session"})
    said = f"a reveal that does not match its commitment #{pending.seq + 2}"
    named_by_every_verifier(table, table.alice, tmp_path, ground.seq, said, f"is {said}")


def test_a_reveal_stored_before_the_close_is_named_by_every_verifier(table, online, tmp_path):
    """The host's witness reveals before the commitments are closed: had an honest table done so, a
    witness who had not committed yet could choose hers against it. The server refuses; a host's server
    that thinks the roll closed stores it, and every verifier names it."""
    table.command(table.gm, {"type": "start_session"})
    online("gm", "alice", "bob", "watcher")
    [pending] = table.command(table.gm, {"type": "roll", "notation": "1d20"}).events
    commit(table, table.bob, pending.seq)
    commit(table, table.alice, pending.seq)
    with pytest.raises(ActionError) as refused:
        reveal(table, table.bob, pending.seq)
    assert refused.value.code == "not_closed"
    set_closed(table, pending.seq, 10**9)
    early = reveal(table, table.bob, pending.seq).events[0]
    set_closed(table, pending.seq, None)
    commit(table, table.watcher, pending.seq)
    for user in (table.alice, table.watcher):
        reveal(table, user, pending.seq)
    assert "witness_digest" in Event.objects.filter(campaign=table.campaign).latest("seq").payload
    table.command(table.gm, {"type": "end_session"})
    said = f"reveals its entropy to roll #{pending.seq} before its commitments were closed"
    named_by_every_verifier(table, table.alice, tmp_path, early.seq, said)


def test_a_decision_with_a_reveal_committed_after_the_close_is_named_by_every_verifier(table, online, tmp_path):
    """The host's witness (Bob) commits only once the commitments are closed, so after seeing what the
    others committed to, and its reveal is used: the server refuses both; stored anyway, every verifier
    names the late commitment, the reveal and the decision that used it."""
    table.command(table.gm, {"type": "start_session"})
    online("gm", "alice", "bob")
    [pending] = table.command(table.gm, {"type": "roll", "notation": "1d20"}).events
    commit(table, table.alice, pending.seq)
    overdue(table)
    commands.resolve_overdue(table.campaign.id)
    closed = head(table)
    set_closed(table, pending.seq, None)
    late = commit(table, table.bob, pending.seq).events[0]
    set_closed(table, pending.seq, 10**9)
    bobs = reveal(table, table.bob, pending.seq).events[0]
    set_closed(table, pending.seq, closed)
    alices = reveal(table, table.alice, pending.seq).events[0]
    decided = events_after(table, alices.seq)[0]
    assert decided.payload["witnessed_by"] == [bobs.seq, alices.seq]
    table.command(table.gm, {"type": "end_session"})
    said = f"a commitment to roll #{pending.seq} after its commitments were closed in #{closed}"
    named_by_every_verifier(table, table.alice, tmp_path, late.seq, said, f"is {said}")
    # verify_log names the first problem only; the others name each.
    code, out = standalone(table, table.alice, tmp_path)
    problems = chain_problems(table, table.alice)
    for seq, said in ((bobs.seq, f"a reveal by a member with no commitment in roll #{pending.seq}'s closed set "
                                 f"(#{closed})"),
                      (decided.seq, f"names contributions to roll #{pending.seq} that the log does not hold before it")):
        assert f"seq {seq}: {said}" in verify_dice(table, 1)
        assert code == 1 and f"BAD seq {seq}: {said}" in out, out
        assert any(p.startswith(f"#{seq} #{seq} ") and said in p for p in problems), problems


def test_a_close_that_leaves_out_a_commitment_is_named_by_every_verifier(table, online, tmp_path):
    """The host drops an honest commitment from the close (so her entropy could never count, and the roll
    hangs on its own witness's alone): every verifier names the close."""
    witnessed_evening(table, online)
    close = Event.objects.filter(campaign=table.campaign, type="commitments_closed").order_by("seq").first()
    bobs = close.payload["committed"][1]
    host.edit_payload(table.campaign, close.seq, {**close.payload, "committed": close.payload["committed"][:1]})
    said = f"leaves out the commitment #{bobs} stored before it"
    named_by_every_verifier(table, table.alice, tmp_path, close.seq, said)


def test_a_later_session_that_stops_committing_is_named_by_every_verifier(table, online, tmp_path):
    """Every session the server starts says its witnessed rolls commit first; one that does not, after
    one that did, would let a host's last witness aim the dice again under the one-phase rules."""
    table.command(table.gm, {"type": "start_session"})
    table.command(table.gm, {"type": "end_session"})
    second = table.command(table.gm, {"type": "start_session"}).events[0]
    assert second.payload["witness_commits"] is True
    table.command(table.gm, {"type": "end_session"})
    host.edit_payload(table.campaign, second.seq, {k: v for k, v in second.payload.items() if k != "witness_commits"})
    said = "starts a session whose witnessed rolls reveal without committing first"
    assert f"BAD seq {second.seq}: {said}" in verify_log(table)
    code, out = standalone(table, table.bob, tmp_path)
    assert code == 1 and f"BAD seq {second.seq}: {said}" in out, out
    assert any(p.startswith(f"#{second.seq} #{second.seq} {said}") for p in chain_problems(table, table.bob))


def one_phase_log(marked: bool):
    """A roll witnessed in one phase (the reveal alone), in a session marked as committing or not."""
    from rules.witness import Seen, digest

    start = {"session": 1, "dice_scheme": "talekeeper-hmac-sha256-v3", **({"witness_commits": True} if marked else {})}
    came = [(3, 2, entropy("alice"))]
    return [Seen(1, "session_started", start, 1, "gm", 1),
            Seen(2, "roll_pending", {"witnesses": [2], "command_id": "c", "action": {"type": "roll"}}, 1, "gm", 1),
            Seen(3, "roll_witnessed", {"roll": 2, "action": {"type": "witness_roll", "roll": 2, "entropy": came[0][2]}},
                 2, "alice", 1),
            Seen(4, "roll", {"command_of": 2, "dice_scheme": "talekeeper-hmac-sha256-v4", "witnessed_by": [3],
                             "witness_digest": digest(came), "dice_log": [[6, 1]]}, 1, "gm", 1)]


def test_a_roll_witnessed_in_one_phase_verifies_only_in_a_session_from_before_commitments():
    """Logs decided before witnesses committed first still verify as they did; the same roll in a session
    that commits first is named at its reveal, and at its decision."""
    from rules.witness import problems

    assert problems(one_phase_log(marked=False)) == []
    assert problems(one_phase_log(marked=True)) == [
        (3, "reveals its entropy to roll #2 before its commitments were closed: a witness who saw it could choose "
            "hers after"),
        (4, "decides roll #2 before its commitments were closed")]
