"""The table's edges: the browser going offline is said at once (not "Live" with every button on);
a member opening a page only the GM opens gets the product's 403 page, not a 404; every time on the
table reads in UTC, whatever the browser's own zone."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from campaign.models import Event
from rules import get_system
from rules.base import ScriptedDice
from tests.browser.conftest import PHONE, Seat, faces_for

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_the_browser_going_offline_is_said_at_once_and_holds_the_buttons(table_of, seats):
    table = table_of("tote")
    table.create_character(table.alice, "Ayasha", get_system("tote").example_sheet)
    alice = seats("alice")
    page = alice.page
    roll = page.locator("#roll-form button[type=submit]")
    expect(roll).to_be_enabled()
    # Only the browser's "offline": the page's socket is not closed by the test (Chromium may keep
    # it open a while); new sockets are refused until the network is back.
    alice.route_sockets()
    alice.offline = True
    alice.context.set_offline(True)
    expect(page.locator("#conn")).to_have_attribute("data-state", "offline")
    expect(page.locator("#conn")).to_contain_text("Offline")
    expect(roll).to_be_disabled()
    expect(page.locator('#sheet-wrap button[data-action="skill:Hunt"]')).to_be_disabled()
    alice.go_online()
    alice.wait_live()
    expect(roll).to_be_enabled()


@pytest.mark.parametrize("path", ["audit/", "settings/"])
def test_a_member_on_a_gm_only_page_gets_the_403_page(table_of, seats, path):
    table_of("tote")
    alice = seats("alice")
    page = alice.page
    response = page.goto(f"{alice.base}/campaigns/torn-road/{path}")
    assert response.status == 403
    expect(page.get_by_role("heading", name="Not yours to open")).to_be_visible()
    expect(page.get_by_text("only the campaign's GM opens it")).to_be_visible()
    page.get_by_role("link", name="Back to the table").click()
    alice.wait_live()


def test_every_time_on_the_table_is_utc_whatever_the_browsers_zone(table_of, browser, server):
    table = table_of("tote")
    table.create_character(table.alice, "Ayasha", get_system("tote").example_sheet)
    seat = Seat(browser, server, "alice", timezone_id="Pacific/Auckland")  # UTC+12/13: never the same clock
    try:
        seat.login()
        page = seat.page
        page.get_by_role("button", name="Get a signed receipt").click()
        receipt = page.locator("#receipt-list time")
        expect(receipt).to_have_count(1)
        stamp = page.evaluate("document.querySelector('#receipt-list time').dateTime")
        expect(receipt).to_have_text(f"{stamp[:10]} {stamp[11:16]} UTC")
        last = Event.objects.filter(campaign=table.campaign).order_by("-seq").first()
        expect(seat.event(last.seq).locator("time")).to_have_text(f"{last.created_at.strftime('%H:%M')} UTC")
        assert not seat.errors, seat.errors
    finally:
        seat.close()


# The sheet's buttons something else covers at their centre (each brought into view first).
COVERED = """() => [...document.querySelectorAll("#sheet-wrap button[data-action]")].filter((b) => {
  b.scrollIntoView({ block: "nearest" });
  const r = b.getBoundingClientRect();
  const at = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
  return !(at && (at === b || b.contains(at)));
}).map((b) => b.dataset.action)"""


@pytest.mark.parametrize("viewport", [{"width": 1280, "height": 800}, PHONE], ids=["desktop", "phone"])
def test_the_result_card_never_covers_the_sheets_buttons(table_of, seats, script_dice, viewport):
    table = table_of("tote")
    sheet = get_system("tote").example_sheet
    table.create_character(table.alice, "Ayasha", sheet)
    alice = seats("alice", viewport=viewport)
    page = alice.page
    form = alice.start("skill:Hunt")
    form.get_by_label("Target number (T)").fill("8")
    alice.odds()
    action = {"type": "skill_test", "skill": "Hunt", "target": 8}
    script_dice(faces_for("tote", get_system("tote").initial_state(sheet), action, lambda p: p["success"]))
    form.get_by_role("button", name="Roll").click()
    expect(page.locator("#result")).to_contain_text("Success")
    assert page.evaluate(COVERED) == []
    expect(page.locator("#result")).to_be_visible()
    # A new form open: the dock holds it alone (the result is back when it closes).
    alice.start("skill:Strike")
    expect(page.locator("#result")).to_be_hidden()
    page.keyboard.press("Escape")
    expect(page.locator("#result")).to_be_visible()
    assert page.evaluate(COVERED) == []


def test_a_contests_lines_name_the_opponent(table_of, seats):
    from tests.browser.test_systems import dice_for

    table = table_of("tale")
    hero = table.create_character(table.alice, "Autopet", get_system("tale").example_sheet)
    rival = table.create_character(table.bob, "Grusk", get_system("tale").example_sheet)
    started = table.command(table.alice, {"type": "start_contest", "character": hero.id, "characteristics": ["brawn", "deft"],
                                          "vs_character": rival.id, "label": "arm wrestling"}).events[0].seq
    round_ = {"type": "iterated_round", "character": hero.id}
    rolled = table.command(table.alice, round_, dice=dice_for(table, "tale", "Autopet", round_, 3)).events[0].seq
    watcher = seats("watcher")
    for seq in (started, rolled):
        expect(watcher.event(seq)).to_contain_text("against Grusk")


@pytest.mark.parametrize("system, action", [
    ("wyrm", {"type": "check", "attribute": "warrior", "skills": []}),
    ("mdt", {"type": "opposed_test", "attribute": "presence"}),
])
def test_an_opposed_roll_s_line_names_the_opponent_in_every_system(table_of, seats, system, action):
    """Tale's contest above; WYRM's opposed check and MdT's opposed test against a character: a member
    who made neither reads whom each was against. The line finds the opponent in the command its event
    records (a signed one here: scripted dice are no verifiable record)."""
    table = table_of(system, signed=True, keyed=("alice", "bob"))
    hero = table.create_character(table.alice, "Mira", get_system(system).example_sheet)
    rival = table.create_character(table.bob, "Brannoc", get_system(system).example_sheet)
    opposed = {**action, "character": hero.id, "vs_character": rival.id}
    # 5s: no WYRM die explodes, no MdT die succeeds or rolls again.
    rolled = table.command(table.alice, opposed, dice=ScriptedDice([5] * 20)).events[0].seq
    watcher = seats("watcher")
    expect(watcher.event(rolled)).to_contain_text("Brannoc")
