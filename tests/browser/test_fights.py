"""Fights and requests of several players at the table: separate browser contexts per member,
scripted dice."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from rules import get_system
from tests.browser.conftest import faces_for, head_seq

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_one_request_asks_every_player_and_each_rolls_with_one_click(table_of, seats, script_dice):
    table = table_of("tote")
    ayasha = table.create_character(table.alice, "Ayasha", get_system("tote").example_sheet)
    bo = table.create_character(table.bob, "Bo", get_system("tote").example_sheet)
    gm, alice, bob = seats("gm", "alice", "bob")
    gm.tab("Ayasha")
    form = gm.start("skill:Hunt")
    form.get_by_label("Target number (T)").fill("8")
    first = head_seq(table) + 1
    gm.submit("Ask every player")
    for seat, seq, other in ((alice, first, first + 1), (bob, first + 1, first)):
        expect(seat.event(seq).get_by_role("button", name="Roll now: a Hunt test vs T8")).to_be_visible()
        expect(seat.event(other).get_by_role("button", name="Roll now: a Hunt test vs T8")).to_have_count(0)
    hunt = {"type": "skill_test", "skill": "Hunt", "target": 8}
    script_dice(faces_for("tote", ayasha.projection.state, hunt, lambda p: p["success"]))
    alice.event(first).get_by_role("button", name="Roll now: a Hunt test vs T8").click()
    expect(gm.event(first)).to_contain_text("answered in")
    bo.projection.refresh_from_db()
    script_dice(faces_for("tote", bo.projection.state, hunt, lambda p: not p["success"]))
    bob.event(first + 1).get_by_role("button", name="Roll now: a Hunt test vs T8").click()
    expect(gm.event(first + 1)).to_contain_text("answered in")
    expect(alice.event(first + 1)).to_contain_text("answered in")
