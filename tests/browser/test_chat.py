"""Talking at the table (issue 14): in- and out-of-character messages and whispers, live in
everyone's log; a whisper never reaches a member it is not for, not even in a socket frame;
the form checks the length as the player types."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from campaign.models import Event
from rules import get_system
from tests.browser.conftest import head_seq

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SECRET = "the duke is the vampire"


def test_messages_and_whispers_at_the_table(table_of, seats):
    table = table_of("tote")
    table.create_character(table.alice, "Ayasha", get_system("tote").example_sheet)
    gm, alice, bob = seats("gm", "alice", "bob")
    page = alice.page

    # In character, as Ayasha: everyone reads it, said by her.
    page.keyboard.press("t")
    page.get_by_label("Say").fill("We ride at dawn.")
    page.get_by_label("As", exact=True).select_option(label="Ayasha (in character)")
    seq = head_seq(table) + 1
    page.get_by_label("Say").press("Enter")
    for seat in (gm, alice, bob):
        expect(seat.event(seq)).to_contain_text("We ride at dawn.")
        expect(seat.event(seq).locator(".who")).to_have_text("Ayasha")
    expect(page.get_by_label("Say")).to_have_value("")

    # A whisper to the GM: the GM and Alice read it; Bob sees that someone whispered.
    page.get_by_label("As", exact=True).select_option(label="yourself (out of character)")
    page.locator("#chat-to").get_by_label("gm").check()
    page.get_by_label("Say").fill(SECRET)
    page.get_by_role("button", name="Send").click()
    for seat in (gm, alice):
        expect(seat.event(seq + 1)).to_contain_text(SECRET)
        expect(seat.event(seq + 1)).to_contain_text("whisper to gm")
    expect(bob.event(seq + 1)).to_contain_text("whispered to someone")
    bob.wait_for_frame(seq + 1)
    assert not any(SECRET in frame for frame in bob.frames)
    assert Event.objects.get(campaign=table.campaign, seq=seq + 1).visibility == "whisper"
    # The GM can't "reveal" a whisper (it is no hidden roll), but can void it.
    expect(gm.event(seq + 1).get_by_role("button", name=f"Reveal event {seq + 1} to everyone")).to_have_count(0)

    # Limits as the player types: the count, and no sending past 2000 characters.
    send = page.get_by_role("button", name="Send")
    page.get_by_label("Say").fill("x" * 2001)
    expect(page.locator("#chat-count")).to_have_text("2001 / 2000")
    expect(send).to_be_disabled()
    page.get_by_label("Say").fill("")
    expect(send).to_be_disabled()
    page.get_by_label("Say").fill("ok")
    expect(send).to_be_enabled()


def test_the_send_button_names_the_readers_and_a_whisper_is_one_messages(table_of, seats):
    table = table_of("tote")
    alice, gm = seats("alice", "gm")
    page = alice.page
    send = page.locator("#chat-form button[type=submit]")
    expect(send).to_have_text("Send to everyone")
    to = page.locator("#chat-to")
    to.get_by_label("bob").check()
    # The GM reads every whisper: the button says so.
    expect(send).to_have_text("Send to bob and the GM")
    to.get_by_label("gm").check()
    expect(send).to_have_text("Send to bob and gm (GM)")
    to.get_by_label("gm").uncheck()
    page.get_by_label("Say").fill("meet me at the mill")
    seq = head_seq(table) + 1
    send.click()
    expect(alice.event(seq)).to_contain_text("whisper to bob")
    # Sent: the ticks are cleared, so the next message is everyone's unless whispered again.
    expect(to.get_by_label("bob")).not_to_be_checked()
    expect(send).to_have_text("Send to everyone")
    page.get_by_label("Say").fill("Good evening, all.")
    page.get_by_label("Say").press("Enter")
    expect(alice.event(seq + 1)).to_contain_text("Good evening, all.")
    assert Event.objects.get(campaign=table.campaign, seq=seq + 1).visibility == "public"
    # The GM's whisper names only its readers: she reads it herself.
    gm.page.locator("#chat-to").get_by_label("alice").check()
    expect(gm.page.locator("#chat-form button[type=submit]")).to_have_text("Send to alice")


def test_esc_leaves_the_chat_and_the_keys_work_again(table_of, seats):
    table = table_of("tote")
    table.create_character(table.alice, "Ayasha", get_system("tote").example_sheet)
    alice = seats("alice")
    page = alice.page
    page.keyboard.press("t")
    say = page.get_by_label("Say")
    expect(say).to_be_focused()
    page.keyboard.type("half a thought")
    page.keyboard.press("Escape")
    expect(say).not_to_be_focused()
    expect(say).to_have_value("half a thought")
    page.keyboard.press("?")  # a page key, no longer typed into the box
    expect(page.locator("#keys")).to_be_visible()
    expect(say).to_have_value("half a thought")
