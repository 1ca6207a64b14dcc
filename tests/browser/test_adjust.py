"""The GM adjusts a sheet from the table (the quick NPC's help promises it): every value of the
character's state in a form, as it stands; what she changes goes with her reason as one
``sheet_adjusted`` event, read in the log by everyone and folded into the sheet."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from campaign.models import Character, Event
from rules import get_system
from tests.browser.conftest import head_seq

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_the_gm_adjusts_a_sheet_with_a_reason(table_of, seats):
    table = table_of("tote")
    hero = table.create_character(table.alice, "Ayasha", get_system("tote").example_sheet)
    gm, alice = seats("gm", "alice")
    # Players are not offered it: the sheet is the GM's to adjust.
    expect(alice.page.locator('#sheet-wrap button[data-action="adjust_sheet"]')).to_have_count(0)
    gm.tab("Ayasha")
    form = gm.start("adjust_sheet")
    strike = form.get_by_label("Sheet · Skills · Strike", exact=True)
    expect(strike).to_have_value("2")
    strike.fill("3")
    form.get_by_label("Resolve", exact=True).fill("1")
    form.get_by_role("button", name="Adjust").click()
    expect(form.locator(".error")).to_have_text("Say why.")
    form.get_by_label("Why (the table reads it)").fill("a wound from the ambush; training paid off")
    seq = head_seq(table) + 1
    gm.submit("Adjust")
    for seat in (gm, alice):
        expect(seat.event(seq)).to_contain_text("adjusted the sheet: skills.Strike 2 → 3, resolve 3 → 1")
        expect(seat.event(seq)).to_contain_text("a wound from the ambush")
    event = Event.objects.get(campaign=table.campaign, seq=seq)
    assert event.type == "sheet_adjusted"
    assert {c["path"]: (c["from"], c["to"]) for c in event.payload["changes"]} == {
        "sheet.skills.Strike": (2, 3), "resolve": (3, 1)}
    state = Character.objects.select_related("projection").get(pk=hero.pk).projection.state
    assert state["sheet"]["skills"]["Strike"] == 3 and state["resolve"] == 1
    expect(alice.page.locator(".tote-grid")).to_contain_text("Strike")
    # Nothing changed is nothing to send.
    form = gm.start("adjust_sheet")
    form.get_by_label("Why (the table reads it)").fill("no change")
    form.get_by_role("button", name="Adjust").click()
    expect(form.locator(".error")).to_have_text("Change a value first.")
    assert head_seq(table) == seq
