"""Forms (issue 14): an action's limits come from its declaration (rules/declare.py) and are
checked as the player types; a new character is made with a form, not a JSON box."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from campaign.models import Character, Event
from rules import get_system
from tests.browser.conftest import head_seq

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# MdT's table module by its URL: static/talekeeper/systems/mdt.js, hashed (mdt.3f1c2a9b7d0e.js)
# when collected, as the browser tests' server serves it.
MDT_MODULE = re.compile(r"/talekeeper/systems/mdt(\.[0-9a-f]+)?\.js(\?|$)")


def test_limits_are_checked_as_the_player_types(table_of, seats, script_dice):
    table = table_of("tote")
    table.create_character(table.alice, "Ayasha", get_system("tote").example_sheet)
    alice = seats("alice")
    form = alice.start("skill:Strike")
    target = form.get_by_label("Target number (T)")
    roll = form.get_by_role("button", name="Roll")
    target.fill("40")  # TOTE declares a target from 1 to 30
    expect(form.locator("[id$=-target-error]")).to_have_text("Must be a whole number from 1 to 30.")
    expect(target).to_have_attribute("aria-invalid", "true")
    expect(roll).to_be_disabled()
    expect(form.locator(".odds-text")).to_have_text("Fix the fields marked above.")
    target.fill("10")
    expect(form.locator(".field-error:visible")).to_have_count(0)
    expect(roll).to_be_enabled()
    expect(form.locator(".odds-text")).to_contain_text("%")
    form.get_by_label("Modifier").fill("2.5")
    expect(roll).to_be_disabled()
    form.get_by_label("Modifier").fill("0")
    script_dice([3, 3, 4])
    seq = head_seq(table) + 1
    alice.submit()
    expect(alice.event(seq)).to_contain_text("Strike 2 vs T10: 3 + 4 = 7")


def test_a_new_character_is_made_with_a_form(table_of, seats):
    table = table_of("wyrm")
    alice = seats("alice")
    page = alice.page
    form = page.locator("#char-form")
    expect(form.get_by_label("Sheet (JSON)")).to_be_hidden()  # behind "Advanced"
    page.locator("#char-name").fill("Mira")
    # WYRM's skills are a list: rows to add and remove.
    rows = form.locator(".sheet-row")
    expect(rows).to_have_count(2)
    form.get_by_role("button", name="Add a row to Skills").click()
    expect(rows).to_have_count(3)
    rows.nth(2).get_by_label("Skill", exact=True).fill("Climb")
    rows.nth(2).get_by_label("Attribute").select_option("rogue")  # a declared choice
    form.get_by_role("button", name="Remove Skills 1").click()
    expect(rows).to_have_count(2)
    form.get_by_label("warrior").fill("2")
    form.get_by_role("button", name="Create character").click()
    expect(page.get_by_role("tab", name="Mira")).to_have_attribute("aria-selected", "true")
    sheet = Character.objects.get(name="Mira").projection.state["sheet"]
    assert [s["name"] for s in sheet["skills"]] == ["Awareness", "Climb"]
    assert sheet["attributes"]["warrior"] == 2


def test_a_declared_action_the_table_module_does_not_know_gets_a_form_from_its_declaration(table_of, seats):
    # MdT declares abandon_project. Every declared action has its table module's layout today
    # (mdt.js lists it in `handles` and lays it out), so the page is served an mdt.js that never
    # names it, as a module written before the action was declared: its form is built from the
    # declaration, with its fields, labels and limits. The module is served under its hashed
    # name (mdt.<hash>.js, campaign/staticstorage.py), which the route matches.
    table = table_of("mdt")
    helena = table.create_character(table.alice, "Helena", get_system("mdt").example_sheet)
    table.command(table.gm, {"type": "start_project", "character": helena.id, "name": "The archive",
                             "target": 5, "attribute": "intelligence"})
    alice = seats("alice")

    def without_abandon(route):
        response = route.fetch()
        route.fulfill(response=response, body=response.text().replace('"abandon_project"', '"not_declared_yet"'))

    alice.page.route(MDT_MODULE, without_abandon)
    alice.page.reload()
    alice.wait_live()
    form = alice.start("declared:abandon_project")
    project = form.get_by_label("Project")
    expect(project).to_have_attribute("maxlength", "60")
    form.get_by_label("Reason").fill("the archive burned")
    project.fill("The archive")
    seq = head_seq(table) + 1
    alice.submit("Do it")
    expect(alice.event(seq)).to_be_attached()
    stored = Event.objects.get(campaign=table.campaign, seq=seq)
    assert stored.type == "project_abandoned" and stored.payload["reason"] == "the archive burned"


def test_the_gm_makes_a_character_past_the_creation_limits_on_purpose(table_of, seats):
    """A play-test's find: the page could not send ``override_limits`` (an experienced hero joining)."""
    table_of("tote")
    gm = seats("gm")
    page = gm.page
    page.get_by_role("heading", name="New character").click()
    form = page.locator("#char-form")
    form.get_by_label("Name").fill("Old Bear")
    form.get_by_label("Player", exact=True).select_option("alice")
    form.get_by_label("Strike").fill("4")  # in the sheet's range (0-5), past TOTE's creation budget (0-2)
    form.get_by_role("button", name="Create character").click()
    expect(page.locator("#char-error")).to_contain_text("not valid")
    assert not Character.objects.filter(name="Old Bear").exists()
    form.get_by_label("Past the creation limits").check()
    form.get_by_role("button", name="Create character").click()
    expect(page.get_by_role("tab", name="Old Bear")).to_be_visible()
    created = Event.objects.get(character__name="Old Bear", type="character_created")
    assert created.payload["limits_overridden"] is True and created.payload["sheet"]["skills"]["Strike"] == 4
    expect(page.locator("#log")).to_contain_text("past the creation limits, by the GM")
    expect(form.get_by_label("Past the creation limits")).not_to_be_checked()  # each time on purpose


def test_a_wyrm_check_with_its_dl_left_empty_waits_for_one(table_of, seats):
    """A play-test's question: a check's DL left empty. The rules give no default (the GM sets the
    DL: docs/rules.md), so while the check is against a DL the field is required as the player
    types, as any other: marked under the field, the odds and the Roll wait, nothing is sent."""
    table = table_of("wyrm")
    table.create_character(table.alice, "Brannoc", get_system("wyrm").example_sheet)
    alice = seats("alice")
    form = alice.start("check:warrior")
    before = head_seq(table)
    dl = form.get_by_label("DL", exact=True)
    dl.fill("9")
    alice.odds()
    dl.fill("")
    expect(form.locator("[id$=-dl-error]")).to_have_text("Required: a whole number from 0 to 60.")
    expect(dl).to_have_attribute("aria-invalid", "true")
    expect(form.get_by_role("button", name="Roll")).to_be_disabled()
    expect(form.locator(".odds-text")).to_have_text("Fix the fields marked above.")
    dl.press("Enter")  # a roll sent would be refused its unscripted die, failing the test
    # Against an opponent their roll is the DL: the empty field no longer holds the form back.
    form.get_by_label("Against").select_option("vs")
    expect(form.get_by_role("button", name="Roll")).to_be_enabled()
    assert head_seq(table) == before
