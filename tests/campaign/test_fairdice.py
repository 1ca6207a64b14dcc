"""Dice anyone can verify: committed seeds, dice no one can aim, sealed hidden rolls, replayed rules.

The attacks are those of docs/fair-dice.md, made as a dishonest host would make them
(tests/campaign/host.py), each shown to fail or to be named by seq.
"""

from __future__ import annotations

import hashlib
import hmac
import io
import json

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from hypothesis import given, settings, strategies as st

from campaign import fairdice
from campaign.canonical import jcs
from campaign.eventlog import Draft, append, lock_campaign
from campaign.fairdice import derive_face, verify_session
from campaign.models import DiceSeed, Event
from rules import get_system
from tests.campaign import host


def independent_face(seed_hex, campaign_id, session, actor_id, command_id, index, sides, version="v2"):
    """A second implementation of a v2 die (``version``: its prefix), written from docs/fair-dice.md alone."""
    limit = (2**64 // sides) * sides
    counter = 0
    while True:
        msg = f"talekeeper-dice-{version}|{campaign_id}|{session}|{actor_id}|{command_id}|{index}|{counter}".encode()
        value = int.from_bytes(hmac.new(bytes.fromhex(seed_hex), msg, hashlib.sha256).digest()[:8], "big")
        if value < limit:
            return value % sides + 1
        counter += 1


def play_a_session(table):
    table.command(table.gm, {"type": "start_session"})
    table.command(table.alice, {"type": "roll", "notation": "3d6+1"})
    table.command(table.bob, {"type": "add_seed", "seed": "bob's lucky socks"})
    table.command(table.alice, {"type": "roll", "notation": "4d10>=7", "visibility": "secret"})
    table.command(table.gm, {"type": "roll", "notation": "1d20", "visibility": "gm"})
    table.command(table.alice, {"type": "roll", "notation": "2d6!"})
    table.command(table.gm, {"type": "end_session"})


def seed_of(table, session=1) -> str:
    """What the host reads from its own database."""
    return DiceSeed.objects.get(campaign=table.campaign, session=session).seed


def test_a_session_verifies_and_an_independent_verifier_agrees(table):
    play_a_session(table)
    report = verify_session(table.campaign, 1)
    assert report.ok, report.problems
    assert report.events == 4 and report.dice >= 9
    events = list(Event.objects.filter(campaign=table.campaign, session=1).order_by("seq"))
    start, end = events[0], events[-1]
    seed = end.payload["dice_seed"]
    assert start.payload["dice_scheme"] == "talekeeper-hmac-sha256-v2"
    assert hashlib.sha256(bytes.fromhex(seed)).hexdigest() == start.payload["dice_commitment"]
    for event in events:
        for index, (sides, face) in enumerate(event.payload.get("dice_log", [])):
            assert face == independent_face(seed, table.campaign.id, 1, event.actor_id, event.payload["command_id"],
                                            index, sides)
        if event.type == "roll":
            assert event.payload["dice_scheme"] == fairdice.SCHEME
            assert event.payload["action"]["notation"] == event.payload["notation"]
            faces = [d["face"] for term in event.payload["terms"] for d in term.get("dice", [])]
            assert faces == [face for _, face in event.payload["dice_log"]]


def test_filler_events_and_seeds_do_not_move_a_players_dice(table):
    """#9: the host read S and moved the next die with scene ends/starts, roll requests and ground seeds.
    Now the host can compute alice's dice, but nothing it appends changes them."""
    hero = table.create_character(table.alice, "Hero", table.campaign.rules.example_sheet)
    table.command(table.gm, {"type": "start_session"})
    predicted = [derive_face(seed_of(table), table.campaign.id, 1, table.alice.pk, "alice-1", i, 20)
                 for i in range(5)]
    table.command(table.gm, {"type": "start_scene"})
    table.command(table.gm, {"type": "end_scene"})
    table.command(table.gm, {"type": "start_scene"})
    request = table.command(table.gm, {"type": "request_roll", "character": hero.id,
                                       "action": {"type": "roll", "notation": "5d20"}}).events[0]
    table.command(table.gm, {"type": "add_seed", "seed": "ground offline until alice rolls 1s"})
    table.command(table.bob, {"type": "add_seed", "seed": "bob"})
    table.command(table.gm, {"type": "roll", "notation": "3d20"})
    rolled = table.command(table.alice, {"type": "roll", "notation": "5d20", "character": hero.id,
                                         "request": request.seq}, client_id="alice-1").events[0]
    assert [face for _, face in rolled.payload["dice_log"]] == predicted


def test_a_retried_command_id_rolls_nothing_new(table):
    table.command(table.gm, {"type": "start_session"})
    first = table.command(table.alice, {"type": "roll", "notation": "4d6"}, client_id="same").events[0]
    again = table.command(table.alice, {"type": "roll", "notation": "4d6"}, client_id="same")
    assert again.replayed and again.events[0].seq == first.seq
    assert Event.objects.filter(campaign=table.campaign, type="roll").count() == 1


def test_the_seed_stays_secret_until_the_session_ends(table):
    table.command(table.gm, {"type": "start_session"})
    table.command(table.alice, {"type": "roll", "notation": "1d6"})
    table.command(table.gm, {"type": "roll", "notation": "1d6", "visibility": "gm"})
    seed = seed_of(table)
    out = io.StringIO()
    call_command("export_log", table.campaign.slug, "--header", stdout=out)
    assert seed not in out.getvalue()
    assert json.loads(out.getvalue().splitlines()[0])["dice_seeds"] == []
    assert not verify_session(table.campaign, 1).ok  # not ended: nothing to check against yet
    table.command(table.gm, {"type": "end_session"})
    out = io.StringIO()
    call_command("export_log", table.campaign.slug, "--header", stdout=out)
    assert [s["seed"] for s in json.loads(out.getvalue().splitlines()[0])["dice_seeds"]] == [seed]


def test_rolls_outside_a_session_say_they_are_not_verifiable(table):
    event = table.command(table.alice, {"type": "roll", "notation": "2d6"}).events[0]
    assert event.payload["verifiable"] is False and "dice_scheme" not in event.payload
    assert len(event.payload["dice_log"]) == 2
    table.command(table.gm, {"type": "start_session"})
    inside = table.command(table.alice, {"type": "roll", "notation": "2d6"}).events[0]
    assert "verifiable" not in inside.payload and inside.payload["dice_scheme"] == fairdice.SCHEME


def test_a_tampered_die_is_named_by_seq(table):
    play_a_session(table)
    target = Event.objects.filter(campaign=table.campaign, type="roll", visibility="public").order_by("seq").last()
    payload = dict(target.payload)
    sides, face = payload["dice_log"][0]
    payload["dice_log"] = [[sides, face % sides + 1], *payload["dice_log"][1:]]
    host.edit_payload(table.campaign, target.seq, payload)
    call_command("verify_log", table.campaign.slug, stdout=io.StringIO())  # rehashed: the chain alone is fooled
    report = verify_session(table.campaign, 1)
    assert not report.ok and report.problems[0][0] == target.seq
    err = io.StringIO()
    with pytest.raises(CommandError):
        call_command("verify_dice", table.campaign.slug, "--session", "1", stderr=err)
    assert f"seq {target.seq}" in err.getvalue()


def test_an_edited_outcome_with_its_dice_kept_is_caught_by_the_rules_replay(table):
    """#9: 'editing an outcome while keeping dice_log' passed verify_dice, which checked dice only."""
    rules = get_system("tote")
    hero = table.create_character(table.alice, "Hero", rules.example_sheet)
    table.command(table.gm, {"type": "start_session"})
    test = table.command(table.alice, {"type": "skill_test", "character": hero.id, "skill": "Strike",
                                       "target": 12}).events[0]
    table.command(table.alice, {"type": "roll", "notation": "2d6"})
    table.command(table.gm, {"type": "end_session"})
    assert verify_session(table.campaign, 1).ok
    forged = {**test.payload, "success": not test.payload["success"],
              "outcome": "failure" if test.payload["success"] else "success"}
    host.edit_payload(table.campaign, test.seq, forged)
    report = verify_session(table.campaign, 1)
    assert [seq for seq, _ in report.problems] == [test.seq]
    assert "rules" in report.problems[0][1]


def test_a_changed_total_of_a_plain_roll_is_caught(table):
    table.command(table.gm, {"type": "start_session"})
    roll = table.command(table.alice, {"type": "roll", "notation": "3d6+1"}).events[0]
    table.command(table.gm, {"type": "end_session"})
    host.edit_payload(table.campaign, roll.seq, {**roll.payload, "total": roll.payload["total"] + 5})
    assert [seq for seq, _ in verify_session(table.campaign, 1).problems] == [roll.seq]


def test_verify_dice_command_ok(table, capsys):
    play_a_session(table)
    call_command("verify_dice", table.campaign.slug, "--session", "1")
    assert capsys.readouterr().out.startswith("OK session 1")


def test_a_hidden_rolls_nonce_is_derived_and_its_reveal_checks_against_the_body_digest(table):
    table.command(table.gm, {"type": "start_session"})
    hidden = table.command(table.gm, {"type": "roll", "notation": "2d6", "visibility": "gm"},
                           client_id="hidden-1").events[0]
    assert hidden.payload["nonce"] == fairdice.derive_nonce(seed_of(table), table.campaign.id, 1, table.gm.pk,
                                                            "hidden-1")
    assert "nonce_drawn" not in hidden.payload
    reveal = table.command(table.gm, {"type": "reveal", "seq": hidden.seq}).events[0]
    body = reveal.payload["body"]
    assert set(reveal.payload) == {"seq", "body"} and body["payload"] == hidden.payload
    assert hashlib.sha256(jcs(body)).hexdigest() == hidden_digest(hidden)
    table.command(table.gm, {"type": "end_session"})
    assert verify_session(table.campaign, 1).ok


def test_a_blind_rolls_nonce_is_drawn_so_its_roller_cannot_derive_it(table):
    """Alice's roll only the GM sees: she knows her command id, so a nonce derived from it would be
    hers too once the seed is out. Drawn instead, and said so; the session still verifies."""
    table.command(table.gm, {"type": "start_session"})
    blind = table.command(table.alice, {"type": "roll", "notation": "2d6", "visibility": "gm"},
                          client_id="blind-1").events[0]
    assert blind.payload["nonce_drawn"] is True
    assert blind.payload["nonce"] != fairdice.derive_nonce(seed_of(table), table.campaign.id, 1, table.alice.pk,
                                                           "blind-1")
    secret = table.command(table.alice, {"type": "roll", "notation": "2d6", "visibility": "secret"},
                           client_id="secret-1").events[0]  # she sees her secret roll: derived, as before
    assert secret.payload["nonce"] == fairdice.derive_nonce(seed_of(table), table.campaign.id, 1, table.alice.pk,
                                                            "secret-1")
    table.command(table.gm, {"type": "end_session"})
    report = verify_session(table.campaign, 1)
    assert report.ok, report.problems


def hidden_digest(event) -> str:
    from campaign.eventlog import serialize_event

    return serialize_event(event)["body_digest"]


def test_a_forged_reveal_is_named_by_seq(table):
    """#9: a rewritten roll_revealed passed because it was checked only against itself."""
    table.command(table.gm, {"type": "start_session"})
    hidden = table.command(table.gm, {"type": "roll", "notation": "1d20", "visibility": "gm"}).events[0]
    better = hidden.payload["total"] % 20 + 1  # any other face than the one rolled
    forged_payload = {**hidden.payload, "total": better}
    forged_payload["terms"] = [{**hidden.payload["terms"][0], "value": better}]
    body = {"type": "roll", "version": 1, "character": None, "payload": forged_payload}
    from django.db import transaction

    with transaction.atomic():  # appended through the one append path: the chain is perfectly valid
        campaign = lock_campaign(table.campaign.id)
        reveal = append(campaign, [Draft("roll_revealed", {"seq": hidden.seq, "body": body})], actor=table.gm)[0]
    table.command(table.gm, {"type": "end_session"})
    call_command("verify_log", table.campaign.slug, stdout=io.StringIO())
    report = verify_session(table.campaign, 1)
    assert [seq for seq, _ in report.problems] == [reveal.seq]
    assert "body digest" in report.problems[0][1]


def test_an_unrevealed_hidden_roll_is_checked_once_the_session_ends(table):
    table.command(table.gm, {"type": "start_session"})
    hidden = table.command(table.gm, {"type": "roll", "notation": "10d20", "visibility": "gm"}).events[0]
    table.command(table.gm, {"type": "end_session"})
    assert verify_session(table.campaign, 1).ok
    payload = {**hidden.payload, "nonce": "0" * 32}  # a nonce the server chose instead of the derived one
    host.edit_payload(table.campaign, hidden.seq, payload)
    assert [seq for seq, _ in verify_session(table.campaign, 1).problems] == [hidden.seq]


def test_player_seeds_need_a_running_session(table):
    from campaign.actions import ActionError, Refused

    with pytest.raises(Refused):
        table.command(table.alice, {"type": "add_seed", "seed": "x"})
    table.command(table.gm, {"type": "start_session"})
    with pytest.raises(ActionError):
        table.command(table.alice, {"type": "add_seed", "seed": "x" * 65})


# Text a player may well type, that str.isprintable refused: a French no-break space, an emoji family
# (zero-width joiners), a heart with its variation selector, and 64 emoji (the limit counts characters).
TEXT_SEEDS = ["Quoi\u00a0?", "\U0001F468\u200d\U0001F469\u200d\U0001F467 \u2764\ufe0f", "\U0001F3B2" * 64]


def test_a_seed_follows_the_one_text_rule_of_names_reasons_and_chat(table):
    """A play-test's find, like chat's: seeds used str.isprintable, names, reasons and chat
    rules/declare.py's unsafe_text. Now one rule: text-direction marks and control characters are
    refused, and nothing is stored; the rest is stored as sent."""
    from campaign.actions import ActionError

    table.command(table.gm, {"type": "start_session"})
    stored = [table.command(table.bob, {"type": "add_seed", "seed": seed}).events[0].payload["seed"]
              for seed in TEXT_SEEDS]
    assert stored == TEXT_SEEDS
    before = table.campaign.events.count()
    for seed in ("Evil\u202eeman", "two\nlines", "a\tb", "bell\x07", "left\u2066isolate", "\x85", "", "x" * 65):
        with pytest.raises(ActionError) as refused:
            table.command(table.bob, {"type": "add_seed", "seed": seed})
        assert refused.value.status == 400 and refused.value.message.startswith("'seed' "), seed
    assert table.campaign.events.count() == before


@settings(max_examples=200, deadline=None)
@given(sides=st.integers(2, 10**6), index=st.integers(0, 500), command_id=st.from_regex(r"[A-Za-z0-9]{1,20}",
                                                                                        fullmatch=True))
def test_derived_faces_are_always_on_the_die_and_match_the_doc(sides, index, command_id):
    face = derive_face("ab" * 32, 1, 1, 7, command_id, index, sides)
    assert 1 <= face <= sides
    assert face == independent_face("ab" * 32, 1, 1, 7, command_id, index, sides)


def test_derived_d6_faces_are_fair():
    """3000 derived d6 rolls pass a chi-square test at the 0.1% level (fixed seed: deterministic)."""
    counts = [0] * 6
    for index in range(3000):
        counts[derive_face("cd" * 32, 7, 1, 3, "cmd", index, 6) - 1] += 1
    chi2 = sum((c - 500) ** 2 / 500 for c in counts)
    assert chi2 < 20.52, counts  # critical value for 5 degrees of freedom at p = 0.001


# --- logs written before #9 still verify (upcasting) --------------------------------------------

class V1Dice:
    """Scheme v1's dice for the command starting at ``seq`` (as the old server rolled them)."""

    def __init__(self, seed, campaign_id, seq, mix, nonce=""):
        self.args, self.index = (seed, campaign_id, 1, seq), 0
        self.mix, self.nonce = mix, nonce

    def roll(self, sides):
        face = fairdice.derive_face_v1(*self.args, self.index, sides, self.mix, self.nonce)
        self.index += 1
        return face


def write_v1_session(table, monkeypatch, player_seed: str = "bob's socks") -> dict:
    """Session 1 as the old server stored it: format-1 hashes, scheme-v1 dice, a sealed roll
    with its own commitment and a reveal carrying the sealed payload."""
    from django.db import transaction

    from campaign.eventlog import FORMAT_1, store
    from rules.notation import roll_event

    monkeypatch.setattr(store, "CURRENT_FORMAT", FORMAT_1)
    seed = "5e" * 32
    seqs = {}

    def put(draft, actor):
        with transaction.atomic():
            campaign = lock_campaign(table.campaign.id)
            return append(campaign, [draft], actor=actor)[0]

    put(Draft("session_started", {"session": 1, "dice_scheme": fairdice.SCHEME_V1,
                                  "dice_commitment": fairdice.seed_commitment(seed)}), table.gm)
    put(Draft("seed_added", {"seed": player_seed}), table.bob)
    mix = fairdice.player_mix([player_seed])
    for name, visibility, nonce in (("public", "public", ""), ("hidden", "gm", "ab" * 16)):
        table.campaign.refresh_from_db()
        seq = table.campaign.last_seq + 1
        dice = fairdice.RecordingDice(V1Dice(seed, table.campaign.id, seq, mix, nonce))
        payload = {**roll_event({"notation": "3d6"}, dice).payload, "dice_log": dice.log}
        if nonce:
            payload["nonce"] = nonce
            payload["commitment"] = fairdice.commitment_of(payload)
        seqs[name] = put(Draft("roll", payload, visibility=visibility), table.alice).seq
    hidden = Event.objects.get(campaign=table.campaign, seq=seqs["hidden"])
    seqs["reveal"] = put(Draft("roll_revealed", {"seq": hidden.seq, "type": "roll", "payload": hidden.payload}),
                         table.gm).seq
    put(Draft("session_ended", {"session": 1, "dice_seed": seed}), table.gm)
    monkeypatch.undo()
    table.campaign.refresh_from_db()
    return seqs


def test_a_format_1_log_with_a_v1_session_still_verifies_and_grows_in_format_2(table, monkeypatch):
    seqs = write_v1_session(table, monkeypatch)
    assert set(Event.objects.filter(campaign=table.campaign, session=1).values_list("format", flat=True)) == {1}
    assert verify_session(table.campaign, 1).ok, verify_session(table.campaign, 1).problems
    play_a_session(table)  # session 2, appended in format 2 on top of the old chain
    assert Event.objects.filter(campaign=table.campaign).order_by("seq").last().format == 2
    out = io.StringIO()
    call_command("verify_log", table.campaign.slug, stdout=out)
    assert out.getvalue().startswith("OK")
    assert verify_session(table.campaign, 2).ok
    # A v1 die changed (and rehashed in format 1) is still named by seq.
    old = Event.objects.get(campaign=table.campaign, seq=seqs["public"])
    sides, face = old.payload["dice_log"][0]
    host.edit_payload(table.campaign, old.seq, {**old.payload, "dice_log": [[sides, face % sides + 1],
                                                                             *old.payload["dice_log"][1:]]})
    assert [seq for seq, _ in verify_session(table.campaign, 1).problems] == [old.seq]


def test_a_format_1_event_changed_behind_the_servers_back_is_named_by_verify_log(table, monkeypatch):
    seqs = write_v1_session(table, monkeypatch)
    from django.db import connection

    from campaign import triggers

    old = Event.objects.get(campaign=table.campaign, seq=seqs["public"])
    triggers.uninstall(connection)
    try:
        with connection.cursor() as cursor:
            cursor.execute("UPDATE campaign_event SET payload = %s WHERE id = %s",
                           # Another total than it had: its 3d6 come from the campaign's id, and one in 216 came to 18.
                           [json.dumps({**old.payload, "total": old.payload["total"] + 1}), old.pk])
    finally:
        triggers.install(connection)
    err = io.StringIO()
    with pytest.raises(CommandError, match=f"BAD seq {old.seq}"):
        call_command("verify_log", table.campaign.slug, stderr=err)


def test_no_page_or_api_shows_a_running_sessions_seed(table):
    from django.test import Client

    table.command(table.gm, {"type": "start_session"})
    table.command(table.gm, {"type": "roll", "notation": "2d6", "visibility": "gm"})
    seed = seed_of(table)
    gm = Client()
    gm.force_login(table.gm)
    slug = table.campaign.slug
    for path in (f"/campaigns/{slug}/", f"/campaigns/{slug}/audit/", f"/api/campaigns/{slug}/events",
                 f"/api/campaigns/{slug}/export.jsonl?header=1", f"/api/campaigns/{slug}/export.csv",
                 f"/api/campaigns/{slug}/checkpoints", f"/campaigns/{slug}/sessions/1/dice/"):
        res = gm.get(path)
        body = b"".join(res.streaming_content) if res.streaming else res.content
        assert seed.encode() not in body, path


def test_the_audit_marks_dice_rolled_outside_a_session_as_not_verifiable(table):
    from django.test import Client

    outside = table.command(table.alice, {"type": "roll", "notation": "2d6"}).events[0]
    table.command(table.gm, {"type": "start_session"})
    inside = table.command(table.alice, {"type": "roll", "notation": "2d6"}).events[0]
    gm = Client()
    gm.force_login(table.gm)
    page = gm.get(f"/campaigns/{table.campaign.slug}/audit/").content.decode()
    row = {seq: page.split(f'id="seq-{seq}"')[1].split("</tr>")[0] for seq in (outside.seq, inside.seq)}
    assert "(not verifiable)" in row[outside.seq] and "(not verifiable)" not in row[inside.seq]


@pytest.mark.parametrize("system", ["tote", "wyrm", "tale", "mdt"])
def test_every_systems_evening_replays_exactly_and_an_edited_outcome_is_named(table_for, system):
    """The contract's evening of each system with the server's own dice: every rolling event
    re-decides to exactly what was stored; then one stored outcome is changed (dice kept)."""
    from campaign.actions import ActionError
    from tests.contract.test_systems import EVENINGS

    table = table_for(system)
    rules = get_system(system)
    hero = table.create_character(table.alice, "Hero", rules.example_sheet)
    for who, action in EVENINGS[system]:
        if action["type"] in rules.actions:
            action = {**action, "character": hero.id}
        try:
            table.command(getattr(table, who), action)
        except ActionError:
            pass  # the server's dice may make a later step impossible (no points to spend, ...)
    report = verify_session(table.campaign, 1)
    assert report.ok and report.events >= 2, report.problems
    rolled = [e for e in Event.objects.filter(campaign=table.campaign, session=1).order_by("seq")
              if e.payload.get("dice_log") and e.type != "roll"]
    target = rolled[0]
    key = next(k for k in ("total", "successes", "outcome", "result", "success") if k in target.payload)
    value = target.payload[key]
    edited = not value if isinstance(value, bool) else (value + 1 if isinstance(value, int) else f"{value}!")
    host.edit_payload(table.campaign, target.seq, {**target.payload, key: edited})
    # The first difference is the edited event (later ones may follow: they were decided on its state).
    assert verify_session(table.campaign, 1).problems[0][0] == target.seq


def aimed_outside_the_session(table, roll: Event, face: int) -> None:
    """A host's server answers a roll made while a session runs with dice of its choosing, stamped
    as rolled outside any session (``verifiable: false``, as the server's own rolls between sessions
    are): the chain links and hashes, and the seed the session committed to is never asked."""
    payload = {k: v for k, v in roll.payload.items() if k not in ("dice_scheme",)}
    sides = roll.payload["dice_log"][0][0]
    payload.update(dice_log=[[sides, face]], rolls=[face], total=face, verifiable=False)
    host.edit_row(table.campaign, roll.seq, payload, session=None, scene=None)


def test_a_roll_stamped_outside_the_session_it_was_rolled_in_is_named(table):
    """A host could aim any member's die while a session ran by stamping the roll 'outside a session':
    verify_dice read the session's events by their session column, so it never looked at it (OK)."""
    table.command(table.gm, {"type": "start_session"})
    table.command(table.alice, {"type": "roll", "notation": "1d20"})
    roll = table.command(table.alice, {"type": "roll", "notation": "1d20"}).events[0]
    table.command(table.bob, {"type": "roll", "notation": "1d20"})
    table.command(table.gm, {"type": "end_session"})
    assert verify_session(table.campaign, 1).ok
    aimed_outside_the_session(table, roll, 20)
    call_command("verify_log", table.campaign.slug, stdout=io.StringIO())  # the chain alone is fooled
    report = verify_session(table.campaign, 1)
    assert not report.ok
    assert [seq for seq, _ in report.problems] == [roll.seq]
    assert "session 1" in report.problems[0][1]


def test_a_session_started_twice_is_named(table):
    """A second start of the same session (a new commitment once the host has seen the players'
    command ids) must not pass for one session."""
    table.command(table.gm, {"type": "start_session"})
    table.command(table.alice, {"type": "roll", "notation": "1d20"})
    table.command(table.gm, {"type": "end_session"})
    table.command(table.gm, {"type": "start_session"})
    second = Event.objects.get(campaign=table.campaign, type="session_started", session=2)
    host.edit_row(table.campaign, second.seq, {**second.payload, "session": 1}, session=1, scene=None)
    report = verify_session(table.campaign, 1)
    assert not report.ok and second.seq in [seq for seq, _ in report.problems]
