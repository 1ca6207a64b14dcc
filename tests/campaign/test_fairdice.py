"""Dice anyone can verify: committed seeds, derived dice, sealed hidden rolls."""

from __future__ import annotations

import hashlib
import hmac
import io
import json

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection
from hypothesis import given, settings, strategies as st

from campaign import triggers
from campaign.fairdice import commitment_of, derive_face, verify_session
from campaign.models import Event


def independent_face(seed_hex, campaign_id, session, seq, index, sides, player_seeds, nonce=None):
    """A second implementation written from docs/fair-dice.md alone."""
    mix = hashlib.sha256("\n".join(player_seeds).encode()).hexdigest()
    limit = (2**64 // sides) * sides
    counter = 0
    while True:
        msg = f"{campaign_id}:{session}:{seq}:{index}:{counter}:{mix}".encode()
        if nonce:
            msg += f":{nonce}".encode()
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


def test_a_session_verifies_and_an_independent_verifier_agrees(table):
    play_a_session(table)
    report = verify_session(table.campaign, 1)
    assert report.ok, report.problems
    assert report.events == 4 and report.dice >= 9
    events = list(Event.objects.filter(campaign=table.campaign, session=1).order_by("seq"))
    start, end = events[0], events[-1]
    seed = end.payload["dice_seed"]
    assert hashlib.sha256(bytes.fromhex(seed)).hexdigest() == start.payload["dice_commitment"]
    player_seeds = []
    for event in events:
        if event.type == "seed_added":
            player_seeds.append(event.payload["seed"])
        nonce = event.payload.get("nonce") if event.visibility != "public" else None
        for index, (sides, face) in enumerate(event.payload.get("dice_log", [])):
            assert face == independent_face(seed, table.campaign.id, 1, event.seq, index, sides, player_seeds, nonce)
        if event.type == "roll":
            faces = [d["face"] for term in event.payload["terms"] for d in term.get("dice", [])]
            assert faces == [face for _, face in event.payload["dice_log"]]


def test_the_seed_stays_secret_until_the_session_ends(table):
    table.command(table.gm, {"type": "start_session"})
    table.command(table.alice, {"type": "roll", "notation": "1d6"})
    body = json.dumps([e.payload for e in Event.objects.filter(campaign=table.campaign)])
    from campaign.models import DiceSeed

    assert DiceSeed.objects.get(campaign=table.campaign, session=1).seed not in body
    assert not verify_session(table.campaign, 1).ok  # not ended: nothing to check against yet


def test_a_tampered_die_is_named_by_seq(table):
    play_a_session(table)
    target = Event.objects.filter(campaign=table.campaign, type="roll", visibility="public").order_by("seq").last()
    payload = dict(target.payload)
    sides, face = payload["dice_log"][0]
    payload["dice_log"] = [[sides, face % sides + 1], *payload["dice_log"][1:]]
    triggers.uninstall(connection)
    try:
        with connection.cursor() as cursor:
            cursor.execute("UPDATE campaign_event SET payload = %s WHERE id = %s", [json.dumps(payload), target.id])
    finally:
        triggers.install(connection)
    report = verify_session(table.campaign, 1)
    assert not report.ok and report.problems[0][0] == target.seq
    err = io.StringIO()
    with pytest.raises(CommandError):
        call_command("verify_dice", table.campaign.slug, "--session", "1", stderr=err)
    assert f"seq {target.seq}" in err.getvalue()


def test_verify_dice_command_ok(table, capsys):
    play_a_session(table)
    call_command("verify_dice", table.campaign.slug, "--session", "1")
    assert capsys.readouterr().out.startswith("OK session 1")


def test_hidden_roll_is_sealed_and_its_reveal_checks_out(table):
    table.command(table.gm, {"type": "start_session"})
    hidden = table.command(table.alice, {"type": "roll", "notation": "2d6", "visibility": "gm"}).events[0]
    assert hidden.payload["commitment"] == commitment_of(hidden.payload)
    assert len(hidden.payload["nonce"]) == 32  # so the commitment can't be brute-forced from 36 outcomes
    reveal = table.command(table.gm, {"type": "reveal", "seq": hidden.seq}).events[0]
    assert commitment_of(reveal.payload["payload"]) == hidden.payload["commitment"]
    table.command(table.gm, {"type": "end_session"})
    assert verify_session(table.campaign, 1).ok


def test_player_seeds_need_a_running_session(table):
    from campaign.actions import ActionError, Refused

    with pytest.raises(Refused):
        table.command(table.alice, {"type": "add_seed", "seed": "x"})
    table.command(table.gm, {"type": "start_session"})
    with pytest.raises(ActionError):
        table.command(table.alice, {"type": "add_seed", "seed": "x" * 65})


@settings(max_examples=200, deadline=None)
@given(sides=st.integers(2, 10**6), seq=st.integers(1, 10**9), index=st.integers(0, 500))
def test_derived_faces_are_always_on_the_die(sides, seq, index):
    face = derive_face("ab" * 32, 1, 1, seq, index, sides, "00")
    assert 1 <= face <= sides


def test_derived_d6_faces_are_fair():
    """3000 derived d6 rolls pass a chi-square test at the 0.1% level (fixed seed: deterministic)."""
    counts = [0] * 6
    for index in range(3000):
        counts[derive_face("cd" * 32, 7, 1, 1, index, 6, "00") - 1] += 1
    chi2 = sum((c - 500) ** 2 / 500 for c in counts)
    assert chi2 < 20.52, counts  # critical value for 5 degrees of freedom at p = 0.001


def test_a_hidden_rolls_dice_stay_secret_after_the_seed_is_revealed(table):
    """Without the nonce (revealed only with the roll) the seed gives other dice."""
    table.command(table.gm, {"type": "start_session"})
    hidden = table.command(table.gm, {"type": "roll", "notation": "10d20", "visibility": "gm"}).events[0]
    table.command(table.gm, {"type": "end_session"})
    seed = Event.objects.get(campaign=table.campaign, type="session_ended").payload["dice_seed"]
    faces = [face for _, face in hidden.payload["dice_log"]]
    without_nonce = [independent_face(seed, table.campaign.id, 1, hidden.seq, i, 20, []) for i in range(10)]
    with_nonce = [independent_face(seed, table.campaign.id, 1, hidden.seq, i, 20, [], hidden.payload["nonce"])
                  for i in range(10)]
    assert faces == with_nonce and faces != without_nonce
