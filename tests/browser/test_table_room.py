"""The table's one screen: at 1280x800 the log, the dice box and the chat are in view together, the
log shows a good run of events, `t` goes to the chat without moving the log, and a running encounter
has a room of its own beside the log instead of pushing the sheet and the log down. On a phone the
log's panel is one screen: scrolled to, its log and its chat are in view together."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from rules import get_system
from rules.base import ScriptedDice
from tests.browser.conftest import PHONE

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

DESKTOP = {"width": 1280, "height": 800}

# The events wholly inside the log's box, as the member sees them.
SHOWN_EVENTS = """() => {
  const log = document.getElementById("log").getBoundingClientRect();
  return [...document.querySelectorAll("#log > li.event")].filter((li) => {
    const box = li.getBoundingClientRect();
    return box.top >= log.top - 0.5 && box.bottom <= log.bottom + 0.5;
  }).length;
}"""


def in_view(locator, viewport) -> bool:
    box = locator.bounding_box()
    return bool(box) and box["y"] >= 0 and box["y"] + box["height"] <= viewport["height"] + 0.5


def an_evening(table, with_encounter=False):
    hero = table.create_character(table.alice, "Ayasha", get_system("tote").example_sheet)
    table.command(table.gm, {"type": "start_session"})
    for i in range(15):
        table.command(table.alice, {"type": "roll", "notation": "2d6"}, dice=ScriptedDice([3, 4]))
        table.command(table.bob, {"type": "post_message", "text": f"The road bends north ({i})."})
    if with_encounter:
        table.command(table.gm, {"type": "start_encounter", "name": "Ambush at the ford"})
        table.command(table.gm, {"type": "add_combatant", "character": hero.id})
    return hero


@pytest.mark.parametrize("who", ["gm", "alice"])
def test_the_log_the_dice_box_and_the_chat_share_the_screen(table_of, seats, who):
    table = table_of("tote")
    an_evening(table)
    seat = seats(who, viewport=DESKTOP)
    page = seat.page
    for element in ("#log", "#notation", "#visibility", "#chat-text", "#chat-as", "#chat-form button[type=submit]"):
        assert in_view(page.locator(element), DESKTOP), element
    shown = page.evaluate(SHOWN_EVENTS)
    assert shown >= 12, f"the log shows {shown} events at 1280x800"

    # `t` goes to the chat and the log stays where it is.
    log_before = page.locator("#log").bounding_box()
    scrolled = page.evaluate("window.scrollY")
    page.keyboard.press("t")
    expect(page.locator("#chat-text")).to_be_focused()
    assert page.evaluate("window.scrollY") == scrolled
    assert page.locator("#log").bounding_box() == log_before
    assert page.evaluate(SHOWN_EVENTS) == shown


def test_a_running_encounter_has_a_room_beside_the_log(table_of, seats):
    table = table_of("tote")
    an_evening(table, with_encounter=True)
    gm = seats("gm", viewport=DESKTOP)
    page = gm.page
    room = page.locator("#encounter")
    expect(room).to_contain_text("Ambush at the ford")
    expect(room.get_by_role("button", name="Next turn")).to_be_visible()
    # The room is beside the log, not above it: the sheet and the log start where they would without it.
    log, sheet, box = (page.locator(s).bounding_box() for s in (".log-panel", "#hero-panel", "#encounter"))
    assert box["x"] >= log["x"] + log["width"], (box, log)
    assert box["y"] == pytest.approx(log["y"], abs=1) and sheet["y"] == pytest.approx(log["y"], abs=1)
    for element in ("#encounter", "#log", "#chat-text"):
        assert in_view(page.locator(element), DESKTOP), element
    assert page.evaluate(SHOWN_EVENTS) >= 12

    # Ended, the room goes, and the GM's column starts at the top again.
    page.get_by_role("button", name="End encounter").click()
    page.get_by_role("button", name="Yes, end the encounter").click()
    expect(room).to_be_hidden()
    side = page.locator(".side-panel").bounding_box()
    assert side["y"] == pytest.approx(log["y"], abs=1)


def test_on_a_phone_the_logs_panel_is_one_screen(table_of, seats):
    table = table_of("tote")
    an_evening(table, with_encounter=True)
    alice = seats("alice", viewport=PHONE)
    page = alice.page
    page.locator(".log-panel").evaluate("(e) => e.scrollIntoView({ block: 'start' })")
    for element in ("#log", "#notation", "#chat-text"):
        assert in_view(page.locator(element), PHONE), element
    assert page.evaluate(SHOWN_EVENTS) >= 6
    # `t` from there goes to the chat with the log still on the screen.
    page.locator("#log").focus()
    page.keyboard.press("t")
    expect(page.locator("#chat-text")).to_be_focused()
    assert in_view(page.locator("#log"), PHONE) and in_view(page.locator("#chat-text"), PHONE)
