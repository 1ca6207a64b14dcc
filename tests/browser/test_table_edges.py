"""The table's edges: the browser going offline is said at once (not "Live" with every button on);
a member opening a page only the GM opens gets the product's 403 page, not a 404."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from rules import get_system

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
