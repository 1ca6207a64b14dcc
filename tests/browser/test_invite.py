"""An invite link, followed by someone new: it survives the header's "Sign up" and "Log in" and the
login form, and a new player (on a phone) lands on her own "new character" form, not on another
player's sheet."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from campaign.models import Membership
from rules import get_system
from tests.browser.conftest import PASSWORDS, PHONE, Seat

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def in_view(locator, viewport) -> bool:
    box = locator.bounding_box()
    return bool(box) and box["y"] >= 0 and box["y"] + box["height"] <= viewport["height"] + 0.5


def test_a_new_player_signs_up_from_the_invite_and_lands_on_her_new_character_form(table_of, browser, server):
    table = table_of("tote")
    table.create_character(table.alice, "Ayasha", get_system("tote").example_sheet)
    invite = f"{server}/join/{table.campaign.invite_code}/"
    seat = Seat(browser, server, "newcomer", PHONE)
    try:
        page = seat.page
        page.goto(invite)
        expect(page).to_have_url(re.compile(r"/login/\?next="))
        # The header's "Sign up", not the form's link: the invite goes along.
        page.get_by_role("navigation").get_by_role("link", name="Sign up").click()
        expect(page.get_by_role("heading", name="Create an account")).to_be_visible()
        page.get_by_label("Username").fill("mirela")
        page.locator("#id_password1").fill("a-long-pass-phrase-42")
        page.locator("#id_password2").fill("a-long-pass-phrase-42")
        page.get_by_role("button", name="Sign up").click()
        expect(page.get_by_role("heading", name="Join The Torn Road")).to_be_visible()
        page.get_by_role("button", name="Join as a player").click()
        expect(page.locator("#conn")).to_have_attribute("data-state", "online")
        # Her own form, open, in view and ready to type in; not Ayasha's sheet.
        name = page.get_by_label("Name", exact=True)
        expect(name).to_be_focused()
        assert in_view(name, PHONE)
        assert not in_view(page.locator("#sheet"), PHONE)
        assert Membership.objects.filter(campaign=table.campaign, user__username="mirela", role="player").exists()
        assert not seat.errors, seat.errors
    finally:
        seat.close()


def test_an_invite_survives_the_header_links_and_the_login(table_of, browser, server):
    table = table_of("tote")
    invite = f"/join/{table.campaign.invite_code}/"
    seat = Seat(browser, server, "outsider")
    try:
        page = seat.page
        page.goto(server + invite)
        nav = page.get_by_role("navigation")
        nav.get_by_role("link", name="Sign up").click()
        expect(page.get_by_role("heading", name="Create an account")).to_be_visible()
        # Back to "Log in" from the sign-up page, by the header and by the page's own link.
        nav.get_by_role("link", name="Log in").click()
        expect(page.get_by_role("heading", name="Log in")).to_be_visible()
        page.get_by_role("link", name="Create an account").click()
        page.get_by_role("main").get_by_role("link", name="Log in").click()
        page.get_by_label("Username").fill("outsider")
        page.get_by_label("Password").fill(PASSWORDS["outsider"])
        page.get_by_role("button", name="Log in").click()
        expect(page.get_by_role("heading", name="Join The Torn Road")).to_be_visible()
        assert page.url == server + invite
    finally:
        seat.close()
