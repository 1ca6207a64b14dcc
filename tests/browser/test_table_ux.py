"""What a first-time group trips over at the table (issue 14): sticky "who sees the dice",
a voided answer's "Roll now", Enter in the GM's request form, feedback while offline, and
polish (English MdT names, grammar, UTC times, what the screen reader announces).

None of these depends on what the dice show: each asserts text, state or layout, with scripted dice.
"""

from __future__ import annotations

import datetime
import json
import re
from pathlib import Path

import pytest
from playwright.sync_api import expect

from campaign.models import Event
from rules import get_system
from tests.browser.conftest import PHONE, faces_for, head_seq

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def visibility(seat):
    return seat.page.locator("#composer").get_by_label("Who sees the dice")


def test_who_sees_the_dice_is_remembered_per_kind_of_action(table_of, seats, script_dice):
    table = table_of("mdt")
    table.create_character(table.alice, "Helena", get_system("mdt").example_sheet)
    alice = seats("alice")
    alice.start("test:intelligence")
    visibility(alice).select_option("gm")
    seq = head_seq(table) + 1
    script_dice([1, 1, 1])  # Intelligence 2: 1 + 2 d10s
    alice.submit()
    expect(alice.event(seq)).to_contain_text("GM only")
    # Another kind of action starts from "Everyone" again...
    alice.start("opposed_test")
    expect(visibility(alice)).to_have_value("public")
    alice.page.keyboard.press("Escape")
    # ... and the same kind remembers the GM-only choice.
    alice.start("test:wits")
    expect(visibility(alice)).to_have_value("gm")


def test_a_voided_answer_brings_back_a_roll_now_that_works(table_of, seats, script_dice):
    table = table_of("tote")
    hero = table.create_character(table.alice, "Ayasha", get_system("tote").example_sheet)
    alice = seats("alice")
    wanted = {"type": "skill_test", "skill": "Hunt", "target": 8}
    asked = table.command(table.gm, {"type": "request_roll", "character": hero.id, "action": wanted}).events[0].seq
    roll_now = alice.event(asked).get_by_role("button", name="Roll now: a Hunt test vs T8")
    script_dice(faces_for("tote", hero.projection.state, wanted, lambda p: not p["success"]))
    roll_now.click()
    expect(alice.event(asked)).to_contain_text(f"answered in #{asked + 1}")
    expect(alice.event(asked + 1)).to_contain_text("Failure")
    table.command(table.gm, {"type": "void", "seq": asked + 1, "reason": "wrong skill"})
    expect(alice.event(asked + 1)).to_have_class(re.compile(r"\bvoided\b"))
    # The request is open again, on the page and on the server: the new answer is accepted.
    script_dice(faces_for("tote", hero.projection.state, wanted, lambda p: p["success"]))
    roll_now.click()
    expect(alice.event(asked)).to_contain_text(f"answered in #{asked + 3}")
    expect(alice.event(asked + 3)).to_contain_text("Success")
    assert Event.objects.get(campaign=table.campaign, seq=asked + 3).payload["answers"] == asked
    expect(alice.page.locator("#notice")).to_have_text("")


def test_enter_in_the_gms_note_asks_the_player_and_disabled_buttons_look_disabled(table_of, seats):
    table = table_of("tote")
    table.create_character(table.alice, "Ayasha", get_system("tote").example_sheet)
    gm = seats("gm")
    gm.tab("Ayasha")
    form = gm.start("skill:Hunt")
    form.get_by_label("Target number (T)").fill("8")
    note = form.get_by_label("Note for alice (when asking)")
    note.fill("track the elk")
    seq = head_seq(table) + 1
    note.press("Enter")
    expect(gm.event(seq)).to_contain_text("GM asks for a Hunt test vs T8")
    expect(gm.event(seq)).to_contain_text("track the elk")
    assert Event.objects.get(campaign=table.campaign, seq=seq).type == "roll_requested"

    # No session yet: Start session is enabled, the three others are disabled and look it.
    background = lambda name: gm.page.get_by_role("button", name=name).evaluate("b => getComputedStyle(b).backgroundColor")  # noqa: E731
    expect(gm.page.get_by_role("button", name="Start scene")).to_be_disabled()
    enabled = background("Start session")
    assert {background(name) for name in ("Start scene", "End scene", "End session")} == {"rgb(236, 232, 225)"} != {enabled}


def test_offline_the_status_counts_down_stays_in_view_and_rolling_waits(table_of, seats):
    table = table_of("tote")
    table.create_character(table.alice, "Ayasha", get_system("tote").example_sheet)
    alice = seats("alice", viewport=PHONE)
    page = alice.page
    roll_button = page.locator("#roll-form button[type=submit]")
    action = page.locator('#sheet-wrap button[data-action="skill:Strike"]')
    expect(roll_button).to_be_enabled()

    # The page's clock is the test's from here: its retries and countdown move when the test moves
    # them, not with a loaded machine's timers (a page starved for a second skips a number).
    page.clock.install(time=datetime.datetime(2026, 1, 1, tzinfo=datetime.timezone.utc))
    page.clock.pause_at(datetime.datetime(2026, 1, 1, 1, tzinfo=datetime.timezone.utc))

    # Offline, every new socket refused (Seat.go_offline): the page counts down to each retry.
    alice.go_offline()
    conn = page.locator("#conn")
    expect(conn).to_have_attribute("data-state", "offline")
    expect(roll_button).to_be_disabled()
    expect(action).to_be_disabled()

    # The countdown counts: on to the retries (each refused waits longer: 0.5 s doubling, times
    # 0.5-1) until one waits 4 s or more, then a second on, and it has gone down by one.
    countdown = page.locator("#conn .countdown")
    for _ in range(10):
        expect(countdown).to_have_text(re.compile(r" in \d+ s"))
        seconds = int(re.search(r"\d+", countdown.inner_text()).group())
        if seconds >= 4:
            break
        page.clock.run_for(seconds * 1000)  # to the retry: it connects, is refused, and counts down again
        expect(conn).to_have_attribute("data-state", "offline")
    assert seconds >= 4
    page.clock.run_for(1005)  # a second, and the 5 ms past it where the page's next tick lands
    expect(countdown).to_have_text(f" in {seconds - 1} s")

    # Scrolled to the bottom of a phone, the status and "Reconnect now" are still in view.
    page.evaluate("window.scrollTo(0, document.body.scrollHeight)")
    assert page.evaluate("window.scrollY") > 0
    for element in (page.locator("#conn"), page.get_by_role("button", name="Reconnect now")):
        box = element.bounding_box()
        assert box and 0 <= box["y"] and box["y"] + box["height"] <= PHONE["height"]

    alice.go_online()
    alice.wait_live()
    expect(roll_button).to_be_enabled()
    expect(action).to_be_enabled()


def test_mdt_speaks_english_and_counts_right_in_utc(table_of, seats, script_dice):
    table = table_of("mdt")
    helena = table.create_character(table.alice, "Helena", get_system("mdt").example_sheet)
    table.command(table.gm, {"type": "award_points", "character": helena.id, "points": 1})
    asked = table.command(table.gm, {"type": "request_roll", "character": helena.id,
                                     "action": {"type": "test", "attribute": "intelligence"}}).events[0]
    alice = seats("alice")
    page = alice.page
    expect(alice.event(asked.seq - 1)).to_contain_text("earned 1 point")
    expect(alice.event(asked.seq - 1)).not_to_contain_text("1 points")
    expect(alice.event(asked.seq)).to_contain_text("an Intelligence test")
    # Times: UTC, the same clock as the audit and the exports.
    assert alice.event(asked.seq).locator("time").inner_text() == f"{asked.created_at.strftime('%H:%M')} UTC"
    # What was there when the page opened is not announced; what happens now is.
    assert page.locator("#log").get_attribute("aria-live") is None
    expect(page.locator("#log-live")).to_have_text("")

    form = alice.start("test:intelligence")
    difficulty = form.get_by_label("Difficulty")
    assert difficulty.locator("option").all_inner_texts() == ["Dramatic (1)", "Dangerous (2)", "Desperate (3)"]
    form.get_by_label("Modifier (dice)").fill("-2")
    seq = head_seq(table) + 1
    script_dice([8])  # Intelligence 2 - 2: 1 die, and an 8 is one success
    alice.submit()
    expect(alice.event(seq)).to_contain_text("1 die vs Dramatic (1)")
    expect(alice.event(seq)).to_contain_text("Success")
    expect(page.locator("#log-live")).to_contain_text("1 die vs Dramatic (1)")
    expect(page.locator("#log-live")).to_contain_text("Helena")



def autopet_offered_a_fight(table_of, seats):
    """Alice's Tale character in a combat, her table showing the combat's "Fight" button."""
    table = table_of("tale")
    hero = table.create_character(table.alice, "Autopet", dict(get_system("tale").example_sheet))
    table.command(table.alice, {"type": "start_combat", "character": hero.id, "their_pool": 4})
    started = head_seq(table)
    alice = seats("alice")
    fight = alice.event(started).get_by_role("button", name="Fight")
    expect(fight).to_be_visible()
    return table, hero, started, alice, fight


def test_a_follow_up_box_under_a_press_waits_for_the_release(table_of, seats, server):
    """A sheet that arrives while a follow-up button is held down used to rebuild its box: the
    release landed on the new button and the click was lost. The box now waits for the release,
    then shows the new sheet's follow-ups.

    The press and release are dispatched to the button itself, so where the new line moves it on
    the screen plays no part (that is the next test's)."""
    from campaign.models import ApiToken
    from tests.browser.conftest import api_command

    table, hero, started, alice, fight = autopet_offered_a_fight(table_of, seats)
    fight.evaluate("b => { b.dataset.pressed = 'yes'; b.dispatchEvent(new PointerEvent('pointerdown', {bubbles: true})); }")

    # While the button is held down, the GM's award brings Autopet's new sheet to the page.
    gm_token = ApiToken.objects.create(user=table.gm).key
    api_command(server, gm_token, {"type": "award_points", "character": hero.id, "points": 1,
                                   "reason": "mid-click"}, "mid-click")
    award = head_seq(table)
    alice.page.wait_for_function("([id, seq]) => window.talekeeperTable.sheetSeq(id) >= seq", arg=[hero.id, award])
    pressed = alice.event(started).locator("button[data-pressed=yes]")
    expect(pressed).to_have_count(1)  # the same element: its box was not rebuilt under the press

    # Let go (no click: nothing else arrives): the held rebuild runs, with the new sheet.
    pressed.evaluate("b => b.dispatchEvent(new PointerEvent('pointerup', {bubbles: true}))")
    expect(alice.event(started).locator("button[data-pressed=yes]")).to_have_count(0)
    expect(alice.event(started).get_by_role("button", name="Fight")).to_be_visible()


def test_a_button_held_down_stays_under_the_pointer_and_takes_its_click(table_of, seats, server, script_dice):
    """A real mouse, pressed on "Fight" and let go where it was pressed, as a hand does. Meanwhile
    the GM's award brings a new sheet (the box would be rebuilt) and a roll request for Alice (the
    waiting list above the log would grow, and push the button down). The click still lands."""
    from campaign.models import ApiToken
    from tests.browser.conftest import api_command

    table, hero, started, alice, fight = autopet_offered_a_fight(table_of, seats)
    # The odds shown beside the button arrive after it and may wrap it onto the next row.
    expect(alice.event(started).locator("output.odds-text")).to_have_attribute("data-state", "ok")
    box = fight.bounding_box()
    alice.page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    alice.page.mouse.down()

    gm_token = ApiToken.objects.create(user=table.gm).key
    api_command(server, gm_token, {"type": "award_points", "character": hero.id, "points": 1,
                                   "reason": "mid-click"}, "mid-click")
    api_command(server, gm_token, {"type": "request_roll", "character": hero.id,
                                   "action": {"type": "roll", "notation": "1d6"}}, "mid-click-request")
    asked = head_seq(table)
    alice.page.wait_for_function("([id, seq]) => window.talekeeperTable.sheetSeq(id) >= seq", arg=[hero.id, asked - 1])
    expect(alice.event(asked)).to_be_attached()
    # The waiting list is drawn by a zero-delay timer after an event: let any such timer run first.
    alice.page.evaluate("() => new Promise((resolve) => setTimeout(resolve, 0))")

    script_dice([3] * 11)  # 4D + 3D hers, 2D + 2D theirs
    alice.page.mouse.up()
    expect(alice.event(asked + 1)).to_contain_text("combat, round 1")
    # Let go, the held waiting list shows the request.
    expect(alice.page.locator("#waiting")).to_contain_text("1d6")



def test_after_a_roll_typing_replaces_the_notation_instead_of_adding_to_it(table_of, seats, script_dice):
    """An evening's play-test, keyboard only: after "3d6 keyboard" + Enter the focus came back to
    the dice box with the cursor after the old text, so typing "1d4" + Enter rolled "3d6 keyboard1d4"
    (3d6 again, for everyone). The old notation is selected now: typing replaces it, Enter repeats it."""
    table = table_of("wyrm")
    alice = seats("alice")
    page = alice.page
    seq = head_seq(table) + 1
    script_dice([1, 2, 3, 4])  # 3d6, then 1d4
    page.locator("#notation").fill("3d6 keyboard")
    page.locator("#notation").press("Enter")
    expect(alice.event(seq)).to_contain_text("rolled 3d6")
    expect(alice.event(seq)).to_contain_text("= 6")
    expect(page.locator("#notation")).to_be_focused()
    page.keyboard.type("1d4")
    page.keyboard.press("Enter")
    expect(alice.event(seq + 1)).to_contain_text("rolled 1d4")
    expect(alice.event(seq + 1)).to_contain_text("= 4")
    assert not alice.errors


def test_the_result_card_belongs_to_the_character_it_was_rolled_for(table_of, seats, script_dice):
    """A play-test's find: the GM's result for Helena stayed pinned under Tomas's sheet after a tab
    change. The card shows with its character's sheet, and again when the GM comes back to it."""
    table = table_of("mdt")
    table.create_character(table.alice, "Helena", get_system("mdt").example_sheet)
    table.create_character(table.bob, "Tomas", get_system("mdt").example_sheet)
    gm = seats("gm")
    gm.tab("Helena")
    gm.start("test:intelligence")
    script_dice([8, 1, 1])  # Intelligence 2: 1 + 2 d10s, one success
    gm.submit("Roll for Helena")
    result = gm.page.locator("#result")
    expect(result).to_contain_text("Success")
    gm.tab("Tomas")
    expect(result).to_be_hidden()
    gm.tab("Helena")
    expect(result).to_be_visible()
    expect(result).to_contain_text("Helena")
    # Dismissed, it stays dismissed across tab changes.
    result.get_by_role("button", name="Dismiss the result").click()
    gm.tab("Tomas")
    gm.tab("Helena")
    expect(result).to_be_hidden()


def test_the_dice_box_is_back_to_everyone_after_a_hidden_roll(table_of, seats, script_dice):
    table = table_of("tote")
    alice, gm = seats("alice", "gm")
    box = alice.page.locator("#visibility")
    # From the most seen to the least; the GM has no "Only me and the GM" (hers is "Only the GM").
    assert box.locator("option").all_inner_texts() == ["Everyone", "Only me and the GM", "Only the GM"]
    assert gm.page.locator("#visibility option").all_inner_texts() == ["Everyone", "Only the GM"]
    for visibility, reads in (("secret", "= 4"), ("gm", "did something in secret")):
        seq = head_seq(table) + 1
        script_dice([4])
        alice.roll("1d6", visibility=visibility)
        expect(alice.event(seq)).to_contain_text(reads)
        expect(box).to_have_value("public")
    seq = head_seq(table) + 1
    script_dice([2])
    alice.page.locator("#notation").fill("1d6")
    alice.page.locator("#roll-form button[type=submit]").click()
    expect(alice.event(seq)).to_contain_text("= 2")
    assert Event.objects.get(campaign=table.campaign, seq=seq).visibility == "public"


def test_a_players_gm_only_roll_is_in_her_export_once_revealed(table_of, seats, script_dice):
    table = table_of("tote")
    alice, gm = seats("alice", "gm")
    seq = head_seq(table) + 1
    script_dice([6, 5, 1])
    alice.roll("3d6", visibility="gm", label="the hidden door")

    def exported():
        with alice.page.expect_download() as download:
            alice.page.get_by_role("link", name="JSON Lines").click()
        lines = [json.loads(line) for line in Path(download.value.path()).read_text().splitlines()]
        return next(e for e in lines if e["seq"] == seq)

    expect(alice.event(seq)).to_contain_text("did something in secret")
    assert exported().get("hidden") is True  # hers to make, not to read
    gm.event(seq).get_by_role("button", name=f"Reveal event {seq} to everyone").click()
    gm.page.get_by_role("button", name=f"Yes, reveal #{seq} to everyone").click()
    expect(alice.event(seq)).to_contain_text("= 12")
    mine = exported()
    assert not mine.get("hidden") and mine["payload"]["total"] == 12 and mine["payload"]["label"] == "the hidden door"


def test_a_socket_closed_because_the_database_is_away_is_tried_again(table_of, seats):
    """``4503`` (the server's database is away: sessions/consumers.py) is not a refusal: the page
    reconnects with its backoff until the server takes it, where a ``44xx`` would stop it."""
    table_of("tote")
    alice = seats("alice")
    refused: list[str] = []

    def database_away(ws):
        if len(refused) < 2:
            refused.append(ws.url)
            ws.send('{"type": "error", "id": null, "code": "database_unavailable", "message": "away"}')
            ws.close(code=4503, reason="database_unavailable")
        else:
            ws.connect_to_server()

    alice.route_sockets(database_away)
    alice.page.evaluate("window.talekeeperTable.drop()")
    expect(alice.page.locator("#conn")).not_to_have_attribute("data-state", "online")
    alice.wait_live()
    assert len(refused) == 2
