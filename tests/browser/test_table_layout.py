"""Issue 14: what the acting member needs stays on the screen, and what waits for them finds them.

* The action form, its odds and its Roll button are in view when it opens, and the result is
  in view after the roll (1280x800 and 390x844; no jump back to the sheet on a phone).
* "Waiting for you" at the top of the page: a roll the GM asks for, a Fate request for the GM
  to approve; a title badge; an opt-in sound and desktop notification, remembered.
* The GM's session and scene buttons and the invite link are at the top on a phone, and the
  log's Void/Reveal buttons are at least 44x44 px there.
"""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from campaign.models import Event
from rules import get_system
from rules.base import ScriptedDice
from tests.browser.conftest import faces_for, head_seq
from tests.contract.test_systems import FACES

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

DESKTOP = {"width": 1280, "height": 800}
PHONE = {"width": 390, "height": 844}


def assert_in_view(locator, viewport):
    box = locator.bounding_box()
    assert box, f"{locator} is not on the page"
    assert 0 <= box["y"] and box["y"] + box["height"] <= viewport["height"] + 0.5, (box, viewport)
    assert 0 <= box["x"] and box["x"] + box["width"] <= viewport["width"] + 0.5, (box, viewport)


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_the_form_its_odds_and_the_result_stay_in_view(table_of, seats, script_dice, viewport):
    table = table_of("tote")
    sheet = get_system("tote").example_sheet
    table.create_character(table.alice, "Ayasha", sheet)
    alice = seats("alice", viewport=viewport)
    page = alice.page

    # The last skill of the sheet: its form opens wherever the button is.
    form = alice.start("skill:Shoot")
    form.get_by_label("Target number (T)").fill("8")
    alice.odds()
    roll = form.get_by_role("button", name="Roll")
    assert_in_view(roll, viewport)
    assert_in_view(page.locator("#composer .odds-text"), viewport)

    action = {"type": "skill_test", "skill": "Shoot", "target": 8}
    state = get_system("tote").initial_state(sheet)
    script_dice(faces_for("tote", state, action, lambda p: p["success"]))
    scrolled = page.evaluate("window.scrollY")
    seq = head_seq(table) + 1
    roll.click()
    result = page.locator("#result")
    expect(result).to_contain_text("Success")
    expect(result).to_contain_text(f"#{seq} in the log")
    assert_in_view(result.locator(".outcome"), viewport)
    if viewport is PHONE:  # no jump back up to the sheet
        assert page.evaluate("window.scrollY") >= scrolled
    expect(alice.event(seq)).to_contain_text("Success")

    # The dice box: the roll lands in the log just above it, both in view.
    script_dice([2, 5])
    page.locator("#notation").fill("2d6")
    button = page.locator("#roll-form button[type=submit]")
    button.click()
    expect(alice.event(seq + 1)).to_contain_text("= 7")
    assert_in_view(alice.event(seq + 1).locator(".outcome"), viewport)
    assert_in_view(button, viewport)


def test_a_roll_request_waits_for_the_player_with_badge_sound_and_notification(table_of, seats, browser, server,
                                                                                  script_dice):
    table = table_of("tote")
    hero = table.create_character(table.alice, "Ayasha", get_system("tote").example_sheet)
    alice = seats("alice")
    page = alice.page
    # A desktop notification is shown only when the page is not in front: pretend it is not, and
    # record what would be shown (Chromium headless has no notification centre).
    page.evaluate("""() => {
      window.__notes = [];
      window.Notification = class { constructor(title, o) { window.__notes.push(title + " | " + o.body); }
        static get permission() { return "granted"; } static requestPermission() { return Promise.resolve("granted"); } };
      Object.defineProperty(document, "visibilityState", { get: () => "hidden" });
    }""")
    waiting = page.locator("#waiting")
    expect(waiting).to_be_hidden()
    assert not re.match(r"^\(\d+\)", page.title())

    # Opt in: both are off until chosen, and remembered by this browser.
    page.get_by_text("Alerts").click()
    page.get_by_label("play a sound").check()
    page.get_by_label("show a desktop notification").check()

    wanted = {"type": "skill_test", "skill": "Hunt", "target": 8}
    asked = table.command(table.gm, {"type": "request_roll", "character": hero.id, "action": wanted,
                                     "note": "track the elk"}).events[0].seq
    expect(waiting).to_be_visible()
    expect(waiting).to_contain_text("GM asks for a Hunt test vs T8")
    expect(page).to_have_title(re.compile(r"^\(1\) The Torn Road"))
    assert page.evaluate("window.talekeeperTable.alertsPlayed") == 1
    assert page.evaluate("window.__notes") == [
        "The Torn Road: waiting for you | Ayasha: GM asks for a Hunt test vs T8"]

    # Answered from the list: it leaves the list and the title.
    script_dice(faces_for("tote", hero.projection.state, wanted, lambda p: p["success"]))
    waiting.get_by_role("button", name="Roll now: a Hunt test vs T8").click()
    expect(waiting).to_be_hidden()
    expect(page).to_have_title(re.compile(r"^The Torn Road"))
    expect(alice.event(asked + 1)).to_contain_text("Success")
    assert Event.objects.get(campaign=table.campaign, seq=asked + 1).payload["answers"] == asked

    # Another tab of the same browser remembers the choices; a page opened later does not
    # alert again for what was already there.
    again = alice.context.new_page()
    again.goto(page.url)
    expect(again.locator("#conn")).to_have_attribute("data-state", "online")
    again.get_by_text("Alerts").click()
    expect(again.get_by_label("play a sound")).to_be_checked()
    assert again.evaluate("window.talekeeperTable.alertsPlayed") == 0


def test_the_gm_approves_fate_from_the_waiting_list(table_of, seats, script_dice):
    table = table_of("wyrm")
    hero = table.create_character(table.alice, "Brannoc", get_system("wyrm").example_sheet)
    table.command(table.alice, {"type": "check", "attribute": "rogue", "skills": ["Stealth"], "dl": 12,
                                "character": hero.id}, dice=ScriptedDice(FACES))
    gm = seats("gm")
    seq = head_seq(table) + 1
    table.command(table.alice, {"type": "spend_fate", "use": "reroll", "character": hero.id})
    waiting = gm.page.locator("#waiting")
    expect(waiting).to_contain_text("Brannoc")
    expect(gm.page).to_have_title(re.compile(r"^\(1\) "))
    script_dice([4])  # the reroll (a 6 would explode: one more die)
    waiting.get_by_role("button", name="Approve Brannoc's Fate request").click()
    expect(waiting).to_be_hidden()
    expect(gm.event(seq + 1)).to_be_visible()
    assert Event.objects.get(campaign=table.campaign, seq=seq + 1).type == "fate_spent"


def test_the_gm_page_on_a_phone(table_of, seats):
    table = table_of("tote")
    table.create_character(table.alice, "Ayasha", get_system("tote").example_sheet)
    public = table.command(table.alice, {"type": "roll", "notation": "2d6"}, dice=ScriptedDice([3, 4])).events[0].seq
    hidden = table.command(table.alice, {"type": "roll", "notation": "1d6", "visibility": "secret"},
                           dice=ScriptedDice([5])).events[0].seq
    gm = seats("gm", viewport=PHONE)
    page = gm.page
    for element in (page.get_by_role("button", name="Start session"), page.get_by_role("button", name="End session"),
                    page.locator(".invite-box summary")):
        assert_in_view(element, PHONE)
    page.locator(".invite-box summary").click()
    expect(page.locator("#invite")).to_have_value(re.compile(r"/join/"))
    tools = [gm.event(public).get_by_role("button", name=f"Void event {public}"),
             gm.event(hidden).get_by_role("button", name=f"Reveal event {hidden} to everyone")]
    for button in tools:
        box = button.bounding_box()
        assert box["width"] >= 44 and box["height"] >= 44, box


# The skills' names the grid cuts (its text wider than its box: the ellipsis) and the totems' names
# that spill out of their header cell, each with its widths.
CUT_IN_THE_GRID = """() => {
  const pen = document.createElement("canvas").getContext("2d");
  const wider = (e) => { const s = getComputedStyle(e); pen.font = `${s.fontWeight} ${s.fontSize} ${s.fontFamily}`;
    return pen.measureText(e.textContent).width > e.getBoundingClientRect().width + 0.05; };
  return [...document.querySelectorAll(".tote-grid .skill-name")].filter(wider)
    .concat([...document.querySelectorAll(".tote-grid th")].filter((e) => e.scrollWidth > e.clientWidth))
    .map((e) => `${e.textContent}: ${e.scrollWidth} > ${e.getBoundingClientRect().width}`);
}"""


@pytest.mark.parametrize("viewport", [DESKTOP, {"width": 1000, "height": 800}, PHONE], ids=["desktop", "narrow", "phone"])
def test_the_tote_grid_shows_every_name_whole(table_of, seats, viewport):
    """A play-test's find: the grid cut "Command" ("Comm…") in the desktop's sheet column. The GM's
    page: its first nine skills carry their number keys, which take room too."""
    table = table_of("tote")
    table.create_character(table.alice, "Ayasha", get_system("tote").example_sheet)
    gm = seats("gm", viewport=viewport)
    expect(gm.page.locator(".tote-grid .skill-name")).to_have_count(16)
    expect(gm.page.locator(".tote-grid button[data-key]")).to_have_count(9)
    assert gm.page.evaluate(CUT_IN_THE_GRID) == []


def test_your_turn_waits_for_you_and_ends_from_the_list(table_of, seats):
    table = table_of("tote")
    sheet = get_system("tote").example_sheet
    hero = table.create_character(table.alice, "Ayasha", sheet)
    rival = table.create_character(table.bob, "Rival", sheet)
    table.command(table.gm, {"type": "start_encounter", "name": "Ambush"})
    for character in (hero, rival):
        table.command(table.gm, {"type": "add_combatant", "character": character.id})
    alice = seats("alice")
    waiting = alice.page.locator("#waiting")
    expect(waiting).to_be_hidden()
    turn = table.command(table.gm, {"type": "advance_turn"}).events[0].seq
    expect(waiting).to_contain_text("gave the turn to Ayasha (round 1)")
    expect(alice.page).to_have_title(re.compile(r"^\(1\) "))
    waiting.get_by_role("button", name="End Ayasha's turn").click()
    expect(alice.event(turn + 1)).to_contain_text("gave the turn to Rival (round 1)")
    expect(waiting).to_be_hidden()
    assert Event.objects.get(campaign=table.campaign, seq=turn + 1).payload["acting"] == rival.id


@pytest.mark.parametrize("viewport", [DESKTOP, {"width": 1440, "height": 900}, PHONE], ids=["1280", "1440", "phone"])
def test_the_chat_box_is_wide_enough_to_write_in(table_of, seats, viewport):
    """Play-test: at 1280px the log's column is narrow, and "Say" got what "As" and "Send" left of it:
    65px, its placeholder cut after "Enter sends;". The text box takes the form's first row."""
    table = table_of("wyrm")
    table.create_character(table.alice, "Mira", get_system("wyrm").example_sheet)
    alice = seats("alice", viewport=viewport)
    form = alice.page.locator("#chat-form").bounding_box()
    text = alice.page.locator("#chat-text").bounding_box()
    assert text["width"] >= form["width"] * 0.6, (text["width"], form["width"])


# How much wider the select is than its longest option's words, in its own font (its arrow needs about 20px).
ROOM = """(sel) => {
  const probe = document.createElement("span");
  probe.style.font = getComputedStyle(sel).font;
  probe.style.whiteSpace = "nowrap";
  probe.style.position = "absolute";
  document.body.append(probe);
  let widest = 0;
  for (const o of sel.options) { probe.textContent = o.textContent; widest = Math.max(widest, probe.getBoundingClientRect().width); }
  probe.remove();
  return sel.clientWidth - widest;
}"""


@pytest.mark.parametrize("viewport", [DESKTOP, {"width": 1440, "height": 900}, PHONE], ids=["1280", "1440", "phone"])
def test_the_dice_box_shows_its_choices_whole(table_of, seats, viewport):
    """Play-test: at 1280px the dice box's "For" and "Who sees the dice" read "NPC / nc" and "Everyon":
    the log's column is narrow on a desktop too, and the label field took the row's room; on a phone,
    side by side, "NPC / no charact"."""
    table = table_of("wyrm")
    table.create_character(table.alice, "Mira", get_system("wyrm").example_sheet)
    for seat in seats("gm", "alice", viewport=viewport):  # the GM's "NPC / no character", Alice's "Only me and the GM"
        for select in ("#roll-character", "#visibility"):
            room = seat.page.locator(select).evaluate(ROOM)
            assert room >= 20, (seat.username, select, room)
