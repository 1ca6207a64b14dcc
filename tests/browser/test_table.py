"""The shared table in real browsers: a GM and two players, each in their own browser context.

Live delivery, what hidden rolls show to whom (in the DOM and in the frames
the page received), reloads, dropped sockets, voids, requests, members and characters.
"""

from __future__ import annotations

import json
import re

import pytest
from playwright.sync_api import expect

from campaign.models import ApiToken, Event
from rules import ScriptedDice, get_system
from campaign.dice import Unscripted
from tests.browser.conftest import api_command, faces_for, head_seq, off_the_loop, take_refused
from tests.conftest import HANG, Table

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def expected_odds(system: str, state: dict, action: dict, parts: list[tuple[str, str]]) -> str:
    """The odds line the page should show, computed by the rules engine itself."""
    odds = get_system(system).preview(state, action)

    def pct(p):
        v = float(p) * 100
        return "0%" if p == 0 else "100%" if p == 1 else f"{v:.1f}%"

    return ", ".join(f"{pct(odds[key])} {label}" for key, label in parts if key in odds)


def wait_all(seats, selector: str):
    """Every seat shows ``selector`` (live delivery; its latency is measured in bench/, not here)."""
    for seat in seats:
        expect(seat.page.locator(selector)).to_be_attached()


def test_a_roll_reaches_every_page_live(table_of, seats, script_dice):
    table = table_of("tote")
    hero = table.create_character(table.alice, "Ayasha", get_system("tote").example_sheet)
    table.create_character(table.bob, "Tawa", get_system("tote").example_sheet)
    gm, alice, bob = seats("gm", "alice", "bob")

    # Presence: everybody sees who is at the table now.
    for seat in (gm, alice, bob):
        for name in ("gm", "alice", "bob"):
            expect(seat.page.locator("#presence")).to_contain_text(name)

    # A dice roll typed by Alice reaches Bob and the GM, live.
    seq = head_seq(table) + 1
    script_dice([2, 5, 6])
    alice.roll("3d6+1", label="climbing")
    wait_all([bob, gm, alice], f"#seq-{seq}")
    for seat in (gm, bob):
        line = seat.event(seq)
        expect(line).to_contain_text("rolled 3d6+1")
        expect(line.locator(".die")).to_have_count(3)
        expect(line).to_contain_text("= 14")

    # A skill test from the sheet: one click opens it, the exact odds show before the roll.
    alice.tab("Ayasha")
    alice.start("skill:Strike")
    alice.page.locator("#composer").get_by_label("Target number (T)").fill("9")
    state = hero.projection.state
    want = expected_odds("tote", state, {"type": "skill_test", "skill": "Strike", "target": 9},
                         [("success", "success"), ("critical", "critical")])
    expect(alice.page.locator("#composer .odds-text")).to_have_text(want)
    seq = head_seq(table) + 1
    script_dice(faces_for("tote", state, {"type": "skill_test", "skill": "Strike", "target": 9},
                          lambda p: p["success"] and p["total"] == 9))
    alice.submit()
    wait_all([bob, gm], f"#seq-{seq}")
    expect(bob.event(seq)).to_contain_text("Strike 2 vs T9")
    expect(bob.event(seq)).to_contain_text("= 9")
    expect(bob.event(seq)).to_contain_text("Success")
    expect(bob.event(seq).locator(".die.paragon")).to_have_count(1)
    expect(bob.event(seq)).to_contain_text("had ")


def test_a_die_nobody_scripted_is_refused_not_rolled(table_of, seats, dice_file):
    """The browser suite rolls no real dice (tests/browser/conftest.py ``strict_dice``): a die its test
    did not script is refused, for the page and for the test's own commands alike, nothing is
    stored, and the test is told which dice it did not script."""
    table = table_of("wyrm")
    alice = seats("alice")
    start = head_seq(table)
    alice.roll("2d6")
    expect(alice.page.locator("#roll-error")).to_have_text(
        re.compile(r"^No scripted face left for a d6: this test server rolls only the dice its test scripts"))
    with pytest.raises(Unscripted, match="No scripted face left for a d20"):
        table.command(table.bob, {"type": "roll", "notation": "1d20"})
    assert head_seq(table) == start
    assert take_refused(dice_file) == ["d6", "d20"]  # what strict_dice would fail this test for


def test_a_gm_only_roll_shows_its_dice_to_the_gm_alone(table_of, seats, script_dice):
    table = table_of("wyrm")
    table.create_character(table.alice, "Mira", get_system("wyrm").example_sheet)
    gm, alice, bob = seats("gm", "alice", "bob")

    seq = head_seq(table) + 1
    script_dice([1, 2, 3, 5])
    gm.roll("4d6", visibility="gm", label="the ambush")
    wait_all([gm, alice, bob], f"#seq-{seq}")
    expect(gm.event(seq).locator(".die")).to_have_count(4)
    expect(gm.event(seq)).to_contain_text("= 11")
    expect(gm.event(seq)).to_contain_text("the ambush")
    expect(gm.event(seq)).to_contain_text("GM only")
    for seat in (alice, bob):
        expect(seat.event(seq)).to_contain_text("did something in secret")
        expect(seat.event(seq).locator(".die")).to_have_count(0)
        expect(seat.event(seq)).not_to_contain_text("ambush")
    # Not only the DOM: the dice never reached the players' pages at all.
    for seat in (alice, bob):
        seat.wait_for_frame(seq)
        frames = [e for e in seat.event_frames() if e["seq"] == seq]
        assert frames and all(e.get("hidden") for e in frames)
        assert all("terms" not in e["payload"] and "total" not in e["payload"] for e in frames)
        assert not any('"the ambush"' in text or '"terms"' in text for text in seat.frames)

    # A roll only Alice and the GM may see.
    seq2 = seq + 1
    script_dice([7, 9])
    alice.roll("2d10", visibility="secret")
    wait_all([alice, gm, bob], f"#seq-{seq2}")
    for seat in (alice, gm):
        expect(seat.event(seq2).locator(".die")).to_have_count(2)
        expect(seat.event(seq2)).to_contain_text("= 16")
    expect(bob.event(seq2)).to_contain_text("did something in secret")

    # The GM reveals the ambush: the players' log line updates in place, dice and all.
    gm.event(seq).get_by_role("button", name=f"Reveal event {seq} to everyone").click()
    gm.event(seq).get_by_role("button", name=f"Yes, reveal #{seq} to everyone").click()
    wait_all([alice, bob], f"#seq-{seq + 2}")
    for seat in (alice, bob):
        expect(seat.event(seq).locator(".die")).to_have_count(4)
        expect(seat.event(seq)).to_contain_text("= 11")
        expect(seat.event(seq)).to_contain_text("the ambush")
        expect(seat.event(seq)).to_contain_text("revealed")
        expect(seat.event(seq + 2)).to_contain_text(f"revealed #{seq}")
    expect(bob.event(seq2)).to_contain_text("did something in secret")


def test_a_roll_revealed_while_the_page_is_open_names_its_character(table_of, seats):
    """An evening's play-test: the stub named no character, and the reveal filled in the dice but not
    whose they were ("alice · secret · revealed", where a reload said "Mira")."""
    table = table_of("wyrm")
    mira = table.create_character(table.alice, "Mira", get_system("wyrm").example_sheet)
    gm, bob = seats("gm", "bob")
    seq = head_seq(table) + 1
    table.command(table.alice, {"type": "roll", "notation": "2d6", "character": mira.id, "visibility": "secret"},
                  dice=ScriptedDice([2, 5]))
    wait_all([gm, bob], f"#seq-{seq}")
    expect(bob.event(seq).locator(".who")).to_have_text("alice")
    gm.event(seq).get_by_role("button", name=f"Reveal event {seq} to everyone").click()
    gm.event(seq).get_by_role("button", name=f"Yes, reveal #{seq} to everyone").click()
    wait_all([bob], f"#seq-{seq + 1}")
    expect(bob.event(seq).locator(".die")).to_have_count(2)
    expect(bob.event(seq).locator(".who")).to_have_text("Mira")


def test_a_voided_roll_revealed_while_the_page_is_open_reads_voided_at_once(table_of, seats):
    """Its void comes out with it (campaign/actions/log_entries.py): the page strikes the roll through
    as the reveal arrives, as a reload would."""
    table = table_of("wyrm")
    bob = seats("bob")
    seq = head_seq(table) + 1
    table.command(table.gm, {"type": "roll", "notation": "1d6", "visibility": "gm"}, dice=ScriptedDice([4]))
    table.command(table.gm, {"type": "void", "seq": seq, "reason": "wrong table"})
    expect(bob.event(seq + 1)).to_be_attached()
    expect(bob.event(seq)).not_to_have_class(re.compile(r"\bvoided\b"))
    table.command(table.gm, {"type": "reveal", "seq": seq})
    expect(bob.event(seq + 3)).to_be_attached()  # the void's reveal, after the roll's
    expect(bob.event(seq)).to_have_class(re.compile(r"\bvoided\b"))
    expect(bob.event(seq)).to_contain_text("wrong table")


def test_a_reload_keeps_the_log(table_of, seats, script_dice):
    table = table_of("mdt")
    table.create_character(table.alice, "Helena", get_system("mdt").example_sheet)
    alice = seats("alice")
    for notation, faces in (("1d10", [1]), ("2d10", [2, 3]), ("3d10", [4, 5, 6])):
        seq = head_seq(table) + 1
        script_dice(faces)
        alice.roll(notation)
        expect(alice.event(seq)).to_be_attached()
    before = alice.seqs()
    alice.page.reload()
    alice.wait_live()
    assert alice.seqs() == before == list(range(1, head_seq(table) + 1))
    expect(alice.event(before[-1])).to_contain_text("rolled 3d10")
    expect(alice.event(before[-1])).to_contain_text("= 15")
    expect(alice.page.get_by_role("tab", name="Helena")).to_be_visible()


def test_a_long_log_loads_the_recent_200_and_pages_back_on_demand(table_of, seats, script_dice):
    table = table_of("tote")
    off_the_loop(lambda: [Table.command(table, table.bob, {"type": "roll", "notation": "1d20", "label": f"roll {i}"},
                                        dice=ScriptedDice([i % 20 + 1])) for i in range(240)])
    head = head_seq(table)
    alice = seats("alice")  # login + the page + 200 events, live
    assert alice.seqs() == list(range(head - 199, head + 1))
    older = alice.page.get_by_role("button", name="Show earlier events")
    older.click()
    expect(alice.event(1)).to_be_attached()
    assert alice.seqs() == list(range(1, head + 1))
    expect(older).to_be_hidden()
    # New events still arrive at the bottom, once.
    script_dice([6, 6])
    alice.roll("2d6")
    expect(alice.event(head + 1)).to_contain_text("= 12")
    assert alice.seqs() == list(range(1, head + 2))


def test_a_dropped_socket_reconnects_and_catches_up_without_duplicates(table_of, seats, server, script_dice):
    table = table_of("tale")
    table.create_character(table.alice, "Autopet", get_system("tale").example_sheet)
    token = ApiToken.objects.create(user=table.alice).key
    alice, bob = seats("alice", "bob")
    start = head_seq(table)

    # Bob's network goes away and his socket with it; three rolls happen meanwhile.
    bob.go_offline()
    expect(bob.page.locator("#conn")).to_have_attribute("data-state", "offline")
    expect(bob.page.get_by_role("button", name="Reconnect now")).to_be_visible()
    script_dice([1] + [2, 3] + [4, 5, 6])  # 1d6, 2d6, 3d6
    for i in range(3):
        api_command(server, token, {"type": "roll", "notation": f"{i + 1}d6"}, f"offline-{i}")
    expect(alice.event(start + 3)).to_be_attached()
    expect(bob.event(start + 1)).not_to_be_attached()

    # Back online: the page reconnects by itself and shows each missed event once.
    bob.go_online()
    bob.wait_live()
    expect(bob.event(start + 3)).to_contain_text("= 15")
    assert bob.seqs() == list(range(1, start + 4))

    # Drops while rolls are flying (some delivered twice by the server's catch-up, at most).
    script_dice([4] * (1 + 2 + 3 + 4))  # 1d4 .. 4d4
    for i in range(4):
        alice.roll(f"{i + 1}d4")
        if i % 2 == 0:
            bob.page.evaluate("window.talekeeperTable.drop()")
        # Each roll on Alice's page before she types the next (her dice box is busy until then).
        expect(alice.event(start + 4 + i)).to_be_attached(timeout=HANG * 1000)
    expect(bob.event(start + 7)).to_be_attached(timeout=HANG * 1000)
    bob.wait_live()
    # One more roll: the socket delivers in order, so once it shows, every catch-up delivery
    # before it (a duplicate included) has been handled.
    script_dice([2])
    alice.roll("1d2")
    expect(bob.event(start + 8)).to_contain_text("= 2")
    assert bob.seqs() == list(range(1, start + 9))
    assert len(bob.page.locator("#log > li").all()) == start + 8


def award_while_offline(server, table, seat, hero) -> int:
    """``seat`` goes offline, the GM awards ``hero`` points meanwhile, ``seat`` comes back: the award is
    in the backlog its page reads on reconnecting. Returns the award's seq."""
    gm_token = ApiToken.objects.create(user=table.gm).key
    seat.go_offline()
    expect(seat.page.locator("#conn")).to_have_attribute("data-state", "offline")
    api_command(server, gm_token, {"type": "award_points", "character": hero.id, "points": 2,
                                   "reason": "a good night"}, "award-offline")
    seq = head_seq(table)
    seat.go_online()
    seat.wait_live()
    expect(seat.event(seq)).to_be_attached()
    seat.page.wait_for_function("([id, seq]) => window.talekeeperTable.sheetSeq(id) >= seq", arg=[hero.id, seq])
    return seq


def test_the_backlog_after_a_reconnect_brings_its_sheets_so_the_page_fetches_none(table_of, seats, server):
    """A reconnect storm must not turn into a sheet fetch per page and character: the
    backlog's last event carries the sheets the backlog changed, and the page shows them."""
    table = table_of("tale")
    hero = table.create_character(table.alice, "Autopet", get_system("tale").example_sheet)
    bob = seats("bob")
    fetches: list[str] = []

    def sheet_route(route):
        fetches.append(route.request.url)
        route.continue_()

    bob.page.route(re.compile(r"/api/campaigns/[^/]+/characters/\d+$"), sheet_route)
    award_while_offline(server, table, bob, hero)
    assert fetches == []


def test_a_sheet_fetch_the_server_could_not_answer_is_tried_again(table_of, seats, server):
    """An event that comes without its sheets (the server could not read them) makes the page fetch
    them; the server may answer 503 (its pool drained by a storm or an outage). The page tries again
    after a short jittered pause instead of keeping a stale sheet."""
    table = table_of("tale")
    hero = table.create_character(table.alice, "Autopet", get_system("tale").example_sheet)
    bob = seats("bob")
    refused: list[str] = []

    def sheet_route(route):
        if not refused:  # the first fetch meets the storm
            refused.append(route.request.url)
            route.fulfill(status=503, headers={"Retry-After": "0"}, content_type="application/json",
                          body=json.dumps({"error": {"code": "database_unavailable", "message": "busy"}}))
        else:
            route.continue_()

    def without_sheets(ws):  # the server could not read the sheets: its event frames carry none
        server_side = ws.connect_to_server()

        def from_server(message):
            frame = json.loads(message)
            if frame.get("type") == "event":
                frame.pop("sheets", None)
                message = json.dumps(frame)
            ws.send(message)

        ws.on_message(server_side.send)
        server_side.on_message(from_server)

    bob.page.route(re.compile(r"/api/campaigns/[^/]+/characters/\d+$"), sheet_route)
    bob.route_sockets(without_sheets)
    award_while_offline(server, table, bob, hero)
    assert len(refused) == 1


def losing_the_first_ack(lost: list[dict]):
    """A ``tamper_sockets`` hook from the server: the first ack becomes ``outcome_unknown`` (the database
    connection died at COMMIT, tests/faults/test_doubled_roll.py) and is kept in ``lost``."""
    def from_server(frame, to_page):
        if frame.get("type") == "ack" and not lost:
            lost.append(frame)
            return {"type": "error", "id": frame["id"], "code": "outcome_unknown",
                    "message": "The connection to the database broke while storing it."}
        return frame
    return from_server


def test_a_roll_whose_outcome_is_in_doubt_is_resent_with_its_id_and_stored_once(table_of, seats, script_dice):
    """The server stored the roll but the page heard ``outcome_unknown`` (its database connection
    died at COMMIT: tests/faults/test_doubled_roll.py): the page sends the same command id again,
    gets the stored roll back, and never asks the player to roll again."""
    table = table_of("tale")
    alice = seats("alice")
    sent: list[str] = []  # command ids the page sent, in order
    lost: list[dict] = []  # the one ack the page never heard

    def from_page(frame, to_page):
        if frame.get("type") == "command":
            sent.append(frame["id"])
        return frame

    alice.tamper_sockets(from_page, losing_the_first_ack(lost))
    alice.reconnect()  # the next socket goes through the route
    start = head_seq(table)
    script_dice([1, 2, 4])  # rolled once: a resend of its id gets the stored roll
    alice.roll("3d6")
    expect(alice.page.locator("#notice")).to_contain_text("Checking whether that was stored")
    expect(alice.page.locator("#notice")).to_have_text("")  # the resend's ack: the stored roll
    assert len(sent) == 2 and sent[0] == sent[1], sent
    assert lost and lost[0]["seq"] == start + 1
    expect(alice.event(start + 1)).to_contain_text("= 7")
    assert head_seq(table) == start + 1
    assert Event.objects.filter(campaign=table.campaign, command__client_id=sent[0]).count() == 1
    assert alice.seqs() == list(range(1, start + 2))


def test_a_roll_told_the_table_is_busy_is_sent_again_with_its_id_and_stored_once(table_of, seats, script_dice):
    """The server answered ``table_busy`` (the table's lock was held longer than it waits:
    tests/faults/test_busy_table.py; nothing was stored): the page says the table is busy, sends
    the same command id again and shows the roll, without asking the player to roll again."""
    table = table_of("tale")
    alice = seats("alice")
    sent: list[str] = []  # command ids the page sent, in order

    def from_page(frame, to_page):
        if frame.get("type") == "command":
            sent.append(frame["id"])
            if len(sent) == 1:  # the first never reaches the server: it was "busy"
                to_page(json.dumps({"type": "error", "id": frame["id"], "code": "table_busy",
                                    "message": "This table is busy finishing an earlier action; nothing was "
                                               "stored. Try again in a moment."}))
                return None
        return frame

    alice.tamper_sockets(from_page)
    alice.reconnect()  # the next socket goes through the route
    start = head_seq(table)
    script_dice([1, 2, 4])  # rolled once: a resend of its id gets the stored roll
    alice.roll("3d6")
    expect(alice.page.locator("#notice")).to_contain_text("The table is busy")
    expect(alice.page.locator("#notice")).to_have_text("")  # the resend's ack
    assert len(sent) == 2 and sent[0] == sent[1], sent
    expect(alice.event(start + 1)).to_contain_text("= 7")
    assert head_seq(table) == start + 1
    assert Event.objects.filter(campaign=table.campaign, command__client_id=sent[0]).count() == 1


def test_a_roll_typed_while_the_last_is_in_flight_is_sent_once_it_lands(table_of, seats, script_dice):
    """Alice presses Enter on a second roll while the first is unanswered (its button disabled, so
    the form has no implicit submission): the page keeps it and sends it once the first lands,
    and the second roll's own label is not cleared by the first one's answer."""
    table = table_of("tale")
    alice = seats("alice")
    held: list = []  # the first roll's ack and the way to the page, kept until the second is typed

    def from_server(frame, to_page):
        if frame.get("type") == "ack" and not held:
            held.extend([frame, to_page])
            return None
        return frame

    alice.tamper_sockets(from_server=from_server)
    alice.reconnect()  # the next socket goes through the route
    start = head_seq(table)
    script_dice([3, 4])
    alice.roll("1d6")
    expect(alice.event(start + 1)).to_contain_text("= 3")  # stored and broadcast; its ack is held
    expect(alice.page.locator("#roll-form button[type=submit]")).to_be_disabled()
    alice.page.locator("#notation").fill("1d8")
    alice.page.locator("#roll-label").fill("second")
    alice.page.locator("#notation").press("Enter")
    frame, to_page = held
    to_page(json.dumps(frame))
    expect(alice.event(start + 2)).to_contain_text("= 4")
    expect(alice.event(start + 2)).to_contain_text("second")
    assert head_seq(table) == start + 2
    assert alice.seqs() == list(range(1, start + 3))


def test_a_voided_event_is_struck_through_and_the_sheet_changes_back(table_of, seats):
    table = table_of("tote")
    table.create_character(table.alice, "Ayasha", get_system("tote").example_sheet)
    gm, alice = seats("gm", "alice")
    injuries = alice.page.locator(".injuries .track li.filled")
    expect(injuries).to_have_count(0)

    # The GM marks two injuries from the hero's sheet.
    gm.tab("Ayasha")
    gm.start("mark_injury")
    gm.page.locator("#composer").get_by_label("Injuries", exact=True).fill("2")
    seq = head_seq(table) + 1
    gm.submit()
    expect(alice.event(seq)).to_contain_text("was injured")
    expect(injuries).to_have_count(2)
    expect(alice.page.locator(".injuries")).to_contain_text("can't select 4, 5")

    # ... by mistake: void it with a reason.
    gm.event(seq).get_by_role("button", name=f"Void event {seq}").click()
    gm.page.get_by_label(f"Why void #{seq}?").fill("wrong hero")
    gm.page.get_by_role("button", name=f"Void #{seq}").click()
    for seat in (gm, alice):
        expect(seat.event(seq)).to_have_class(re.compile(r"\bvoided\b"))
        expect(seat.event(seq).locator(".badge.void")).to_have_text("voided")
        expect(seat.event(seq)).to_contain_text("wrong hero")
        expect(seat.event(seq + 1)).to_contain_text(f"voided #{seq}")
    expect(injuries).to_have_count(0)
    expect(alice.page.locator(".injuries")).to_contain_text("unhurt")
    # The original is still in the log, struck through (CSS), and the void is in the frames.
    assert alice.page.locator(f"#seq-{seq} .what").evaluate("e => getComputedStyle(e).textDecorationLine") == "line-through"

    # After a reload the void is still shown, now from the log itself.
    alice.page.reload()
    alice.wait_live()
    expect(alice.event(seq).locator(".badge.void")).to_have_text("voided")
    expect(alice.event(seq)).to_contain_text("wrong hero")


def test_the_gm_asks_for_a_roll_and_the_player_rolls_now(table_of, seats, script_dice):
    table = table_of("tote")
    hero = table.create_character(table.alice, "Ayasha", get_system("tote").example_sheet)
    gm, alice = seats("gm", "alice")
    gm.tab("Ayasha")
    form = gm.start("skill:Hunt")
    form.get_by_label("Target number (T)").fill("8")
    form.get_by_label("Note for alice (when asking)").fill("track the elk")
    expect(gm.page.locator("#composer .odds-text")).to_contain_text("% success")
    seq = head_seq(table) + 1
    gm.submit("Ask alice to roll")
    button = alice.event(seq).get_by_role("button", name="Roll now: a Hunt test vs T8")
    expect(button).to_be_visible()
    expect(alice.event(seq)).to_contain_text("track the elk")
    expect(alice.event(seq).locator(".odds-inline")).to_contain_text("% success")
    expect(gm.event(seq)).to_contain_text("waiting for alice")
    script_dice(faces_for("tote", hero.projection.state, {"type": "skill_test", "skill": "Hunt", "target": 8},
                          lambda p: not p["success"]))
    alice.page.keyboard.press("n")  # the shortcut for the newest "Roll now"
    expect(alice.event(seq + 1)).to_contain_text("Hunt 2 vs T8")
    expect(alice.event(seq + 1)).to_contain_text("Failure")
    expect(alice.event(seq)).to_contain_text(f"answered in #{seq + 1}")
    expect(gm.event(seq)).to_contain_text(f"answered in #{seq + 1}")


def test_members_and_characters_are_added_from_the_page(table_of, seats, django_user_model):
    table = table_of("wyrm")
    carol = django_user_model.objects.create_user(username="carol", password="pw-carol-123456")
    gm, alice = seats("gm", "alice")

    # Adding a member by username: unknown names are refused with the server's message.
    gm.page.get_by_label("Username").fill("nobody-here")
    gm.page.get_by_role("button", name="Add to the table").click()
    expect(gm.page.locator("#member-error")).to_contain_text("There is no user with that name")
    gm.page.get_by_label("Username").fill(carol.username)
    gm.page.get_by_role("button", name="Add to the table").click()
    expect(alice.page.locator("#members")).to_contain_text("carol")
    expect(gm.page.locator("#log")).to_contain_text("carol joined the table as player")

    # A character sheet the rules refuse: the server's message, clearly.
    form = alice.page.locator("#char-form")
    form.get_by_label("Name").fill("Mira")
    form.get_by_label("warrior").fill("12")  # past the declared range: caught as it is typed
    expect(form.get_by_role("button", name="Create character")).to_be_disabled()
    expect(form.locator("#sheet-attributes_warrior-error")).to_contain_text("from 0 to 10")
    form.get_by_label("warrior").fill("7")  # within it, past this campaign's ceiling: the server says so
    form.get_by_role("button", name="Create character").click()
    expect(alice.page.locator("#char-error")).to_contain_text("The character sheet is not valid")
    expect(alice.page.locator("#char-error")).to_have_attribute("role", "alert")
    form.get_by_label("warrior").fill("2")
    assert json.loads(form.get_by_label("Sheet (JSON)").input_value())["attributes"]["warrior"] == 2
    form.get_by_role("button", name="Create character").click()
    expect(alice.page.get_by_role("tab", name="Mira")).to_have_attribute("aria-selected", "true")
    expect(alice.page.locator("#sheet")).to_contain_text("Rogue check")
    expect(gm.page.get_by_role("tab", name="Mira")).to_be_visible()

    # The GM creates an NPC for themself, shown to the players: it appears for Alice as a readable
    # sheet without buttons.
    gm.page.get_by_text("New character").click()  # closed for the GM: a <details> to open
    assert gm.unlabelled() == []
    gm_form = gm.page.locator("#char-form")
    gm_form.get_by_label("Name").fill("The Guard")
    gm_form.get_by_label("What the players see").select_option("full")
    gm_form.get_by_role("button", name="Create character").click()
    alice.tab("The Guard")
    expect(alice.page.locator("#sheet")).to_contain_text("Played by gm")
    expect(alice.page.locator("#sheet button[data-action]")).to_have_count(0)


def test_the_page_is_usable_by_keyboard_at_phone_width(table_of, seats, script_dice):
    table = table_of("mdt")
    helena = table.create_character(table.alice, "Helena", get_system("mdt").example_sheet)
    alice = seats("alice", viewport={"width": 390, "height": 844})
    page = alice.page
    # Nothing overflows sideways at 390px.
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    # "1" opens the first action (an Intelligence test), Enter rolls it, focus comes back.
    page.locator("body").press("1")
    expect(page.locator("#composer")).to_be_visible()
    expect(page.locator("#composer .odds-text")).to_contain_text("% success")
    seq = head_seq(table) + 1
    script_dice(faces_for("mdt", helena.projection.state, {"type": "test", "attribute": "intelligence"},
                          lambda p: p["outcome"] == "success", sides=10))
    page.keyboard.press("Enter")
    expect(alice.event(seq)).to_contain_text("Intelligence 2")
    expect(alice.event(seq)).to_contain_text("Success")
    expect(page.locator("#composer")).to_be_hidden()
    assert page.evaluate("document.activeElement.dataset.action") == "test:intelligence"
    # Escape closes a form; "/" goes to the dice box.
    page.keyboard.press("2")
    expect(page.locator("#composer")).to_be_visible()
    assert alice.unlabelled() == []
    page.keyboard.press("Escape")
    expect(page.locator("#composer")).to_be_hidden()
    page.keyboard.press("/")
    assert page.evaluate("document.activeElement.id") == "notation"


def test_a_request_answered_by_a_sealed_roll_reads_answered_on_the_other_pages(table_of, seats):
    """The sealed answer has no character, and the page
    linked answers to requests by character, so Bob's page said "waiting for alice" for good."""
    table = table_of("tote")
    hero = table.create_character(table.alice, "Ayasha", get_system("tote").example_sheet)
    table.command(table.gm, {"type": "start_session"})
    test = {"type": "skill_test", "character": hero.id, "skill": "Hunt", "target": 8}
    table.command(table.alice, {**test, "visibility": "secret"}, dice=ScriptedDice([3, 3, 3]))
    bob = seats("bob")
    request = table.command(table.gm, {"type": "request_roll", "character": hero.id, "action": test}).events[0].seq
    expect(bob.event(request)).to_contain_text("waiting for alice")
    # On top of her own secret test her answer is hers and the GM's too: sealed on Bob's page.
    answer = table.command(table.alice, {**test, "request": request}, dice=ScriptedDice([4, 4, 4])).events[0]
    assert answer.visibility == "gm" and answer.payload["shared_with"][0]["username"] == "alice"
    expect(bob.event(request)).to_contain_text(f"answered in #{answer.seq}")
    bob.page.reload()
    expect(bob.event(request)).to_contain_text(f"answered in #{answer.seq}")


def test_a_gm_decision_a_player_reads_says_so_to_its_readers_and_is_gm_only_to_the_rest(table_of, seats):
    """The GM's grant on top of Alice's secret test is read by Alice too. Her page and the GM's say
    "shared with alice"; Bob's sealed stub reads "GM only", like any GM-only event (its envelope
    said "shared" before, telling the table a player read it)."""
    table = table_of("tote")
    hero = table.create_character(table.alice, "Ayasha", get_system("tote").example_sheet)
    table.command(table.gm, {"type": "start_session"})
    table.command(table.alice, {"type": "skill_test", "character": hero.id, "skill": "Hunt", "target": 8,
                                "visibility": "secret"}, dice=ScriptedDice([3, 3, 3]))
    gm, alice, bob = seats("gm", "alice", "bob")
    grant = table.command(table.gm, {"type": "grant_resolve", "character": hero.id, "amount": 1}).events[0]
    assert grant.visibility == "gm" and grant.payload["shared_with"][0]["username"] == "alice"
    for seat in (gm, alice):
        expect(seat.event(grant.seq).locator(".badge.vis")).to_have_text("shared with alice")
    expect(bob.event(grant.seq)).to_contain_text("did something in secret")
    expect(bob.event(grant.seq).locator(".badge.vis")).to_have_text("GM only")
    # Alice's own action on her secret roll: stored the same way, naming her alone; a secret roll to
    # her and the GM, one more GM-only event to Bob.
    table.command(table.alice, {"type": "skill_test", "character": hero.id, "skill": "Strike", "target": 11,
                                "visibility": "secret"}, dice=ScriptedDice([5, 2, 5]))
    spent = table.command(table.alice, {"type": "spend_resolve", "character": hero.id, "totem": "Bear"}).events[0]
    assert spent.visibility == "gm"
    for seat in (gm, alice):
        expect(seat.event(spent.seq).locator(".badge.vis")).to_have_text("secret")
    expect(bob.event(spent.seq).locator(".badge.vis")).to_have_text("GM only")


def test_a_resend_after_a_doubt_that_is_told_nothing_was_stored_stays_in_doubt(table_of, seats, script_dice):
    """A review's find: the roll was stored, but the page heard ``outcome_unknown``; its resend then
    met an answer that says "nothing was stored" (``database_unavailable``: the database still away;
    ``table_busy`` the same way). That answer speaks of the resend only, not of the first try, so the
    page must not tell the player nothing was stored (she would roll again: a doubled roll). It
    keeps resending the same id until it hears the stored roll."""
    table = table_of("tale")
    alice = seats("alice")
    sent: list[str] = []  # command ids the page sent, in order
    lost: list[dict] = []  # the one ack the page never heard

    def from_page(frame, to_page):
        if frame.get("type") == "command":
            sent.append(frame["id"])
            if len(sent) == 2:  # the first resend: the database is still away, it never gets there
                to_page(json.dumps({"type": "error", "id": frame["id"], "code": "database_unavailable",
                                    "message": "The server can't reach its database right now; nothing was "
                                               "stored. Try again in a moment."}))
                return None
        return frame

    alice.tamper_sockets(from_page, losing_the_first_ack(lost))
    alice.reconnect()  # the next socket goes through the route
    start = head_seq(table)
    script_dice([1, 2, 4])  # rolled once: a resend of its id gets the stored roll
    alice.roll("3d6")
    expect(alice.page.locator("#notice")).to_contain_text("Checking whether that was stored")
    expect(alice.page.locator("#notice")).to_have_text("")  # the third try's ack: the stored roll
    assert len(sent) == 3 and len(set(sent)) == 1, sent
    assert lost and lost[0]["seq"] == start + 1
    expect(alice.event(start + 1)).to_contain_text("= 7")
    assert head_seq(table) == start + 1
    assert Event.objects.filter(campaign=table.campaign, command__client_id=sent[0]).count() == 1


def test_a_sealed_event_says_only_what_its_envelope_says(table_of, seats):
    """A play-test's find: every sealed event read "rolled in secret", a GM's NPC made in secret
    too. The stub carries who, when and who may read it (campaign/visibility/filter.py SEALED_KEYS), not
    what: so a sealed event is something done in secret, and a whisper (its visibility says so) whispered."""
    table = table_of("wyrm")
    gm, bob = seats("gm", "bob")
    seq = head_seq(table) + 1
    table.command(table.gm, {"type": "create_character", "npc": True, "name": "The Spy", "shown": "hidden",
                             "quick": {"template": "veteran"}})
    table.command(table.gm, {"type": "roll", "notation": "1d6", "visibility": "gm"}, dice=ScriptedDice([3]))
    table.command(table.alice, {"type": "post_message", "text": "psst", "to": ["gm"]})
    for at, who, what in ((seq, "gm", "did something in secret"), (seq + 1, "gm", "did something in secret"),
                          (seq + 2, "alice", "whispered to someone")):
        expect(bob.event(at).locator(".who")).to_have_text(who)
        expect(bob.event(at).locator(".what")).to_have_text(what)
    expect(gm.event(seq)).to_contain_text("created the NPC The Spy")


def test_a_void_names_its_event_as_the_log_does(table_of, seats):
    """A play-test's find: "voided #5 (attribute checked)", the event's type, where the log says
    "Rogue 2 + Stealth 1: ..."."""
    table = table_of("wyrm")
    mira = table.create_character(table.alice, "Mira", get_system("wyrm").example_sheet)
    check = table.command(table.alice, {"type": "check", "character": mira.id, "attribute": "rogue", "dl": 8},
                          dice=ScriptedDice([3, 4])).events[0].seq
    gm, bob = seats("gm", "bob")
    said = bob.event(check).locator(".what").inner_text()
    gm.event(check).get_by_role("button", name=f"Void event {check}").click()
    gm.page.get_by_label(f"Why void #{check}?").fill("wrong attribute")
    gm.page.get_by_role("button", name=f"Void #{check}").click()
    for seat in (gm, bob):
        expect(seat.event(check + 1).locator(".what")).to_have_text(f"voided #{check} ({said})")
    bob.page.reload()
    bob.wait_live()
    expect(bob.event(check + 1).locator(".what")).to_have_text(f"voided #{check} ({said})")


def test_a_void_of_an_event_older_than_the_page_says_its_seq_then_its_words(table_of, seats):
    """The page holds the newest 200 events: a void of an older one names its seq alone (nothing
    else on the page says what it was), and its words once *Show earlier events* brings it in."""
    table = table_of("tote")
    hero = table.create_character(table.alice, "Ayasha", get_system("tote").example_sheet)
    test = table.command(table.alice, {"type": "skill_test", "character": hero.id, "skill": "Hunt", "target": 8},
                         dice=ScriptedDice([3, 3, 3])).events[0].seq
    off_the_loop(lambda: [Table.command(table, table.bob, {"type": "roll", "notation": "1d6"},
                                        dice=ScriptedDice([i % 6 + 1])) for i in range(200)])
    void = table.command(table.gm, {"type": "void", "seq": test, "reason": "wrong skill"}).events[0].seq
    bob = seats("bob")
    expect(bob.event(void).locator(".what")).to_have_text(f"voided #{test}")
    bob.page.get_by_role("button", name="Show earlier events").click()
    said = bob.event(test).locator(".what").inner_text()
    assert said.startswith("Hunt")
    expect(bob.event(void).locator(".what")).to_have_text(f"voided #{test} ({said})")
