"""How the table looks: a roll's dice tumble in unless the member asked for less motion; the table
follows the system's dark setting with axe still finding no serious or critical problem; each
system's sheet has its own colour and hand, recognisable at a glance."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from rules import get_system
from rules.base import ScriptedDice
from tests.browser.conftest import head_seq
from tests.browser.test_pages import axe_problems
from tests.browser.test_table_room import an_evening

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

ANIMATION = "(sel) => [...document.querySelectorAll(sel)].map((e) => getComputedStyle(e).animationName)"


def test_the_dice_tumble_in_unless_less_motion_is_asked_for(table_of, seats):
    table = table_of("tote")
    moving, still = seats("alice", "bob")
    moving.page.emulate_media(reduced_motion="no-preference")
    seq = head_seq(table) + 1
    table.command(table.gm, {"type": "roll", "notation": "3d6"}, dice=ScriptedDice([2, 5, 6]))
    for seat in (moving, still):
        expect(seat.event(seq)).to_contain_text("= 13")
    assert moving.page.evaluate(ANIMATION, f"#seq-{seq} .die") == ["tumble"] * 3
    assert still.page.evaluate(ANIMATION, f"#seq-{seq} .die") == ["none"] * 3
    # What was there when the page opened does not tumble: it is not a new roll.
    moving.page.reload()
    moving.wait_live()
    assert moving.page.evaluate(ANIMATION, f"#seq-{seq} .die") == ["none"] * 3


SYSTEM_BANDS = {"tote": "rgb(138, 90, 43)", "wyrm": "rgb(161, 51, 44)", "tale": "rgb(44, 110, 143)",
                "mdt": "rgb(109, 36, 71)"}


@pytest.mark.parametrize("system", sorted(SYSTEM_BANDS))
def test_each_systems_sheet_has_its_own_band(table_of, seats, system):
    assert len(set(SYSTEM_BANDS.values())) == len(SYSTEM_BANDS)
    table = table_of(system)
    table.create_character(table.alice, "Hero", get_system(system).example_sheet)
    alice = seats("alice")
    band = alice.page.locator("#hero-panel").evaluate("(e) => getComputedStyle(e).borderTopColor")
    assert band == SYSTEM_BANDS[system]


def test_the_dark_table_follows_the_system_and_passes_axe(table_of, seats, script_dice):
    table = table_of("tote")
    hero = an_evening(table, with_encounter=True)
    table.command(table.alice, {"type": "roll", "notation": "1d6", "visibility": "secret"}, dice=ScriptedDice([3]))
    table.command(table.alice, {"type": "post_message", "text": "psst", "to": ["gm"]})
    table.command(table.gm, {"type": "request_roll", "character": hero.id,
                             "action": {"type": "skill_test", "skill": "Hunt", "target": 8}})
    for seat in seats("gm", "alice"):
        seat.page.emulate_media(color_scheme="dark")
        background = seat.page.evaluate("getComputedStyle(document.body).backgroundColor")
        assert background == "rgb(22, 19, 28)", background
        seat.tab("Ayasha")
        assert axe_problems(seat.page) == [], seat.username
        seat.screenshot(f"table-dark-{seat.username}.png")  # only with TALEKEEPER_SCREENSHOTS=1
