"""WYRM at the table: a check's form opens at the DL the GM set last (the rules name none), else
empty and required; "Reroll (Fate)" is offered only where a reroll can turn the failure into a
success; a Fate request's line says how it ended: approved, denied, or withdrawn."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from rules import get_system
from rules.base import ScriptedDice
from tests.browser.conftest import head_seq

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def brannoc(table):
    return table.create_character(table.alice, "Brannoc", get_system("wyrm").example_sheet)


def test_a_check_opens_at_the_gms_last_dl_or_waits_for_one(table_of, seats):
    table = table_of("wyrm")
    hero = brannoc(table)
    alice = seats("alice")
    form = alice.start("check:warrior")
    dl = form.get_by_label("DL", exact=True)
    expect(dl).to_have_value("")  # no DL anywhere yet: none made up
    expect(form.get_by_role("button", name="Roll")).to_be_disabled()
    alice.page.keyboard.press("Escape")
    # The GM asks for a check against DL 12: the next check opens there.
    table.command(table.gm, {"type": "request_roll", "character": hero.id,
                             "action": {"type": "check", "attribute": "rogue", "skills": [], "dl": 12}})
    expect(alice.page.get_by_role("button", name="Roll now: a Rogue check vs DL 12")).to_have_count(2)
    form = alice.start("check:mage")
    expect(form.get_by_label("DL", exact=True)).to_have_value("12")
    alice.odds()


@pytest.mark.parametrize("face, dl, offered", [(2, 12, False), (2, 6, True), (6, 6, False)],
                         ids=["failure-no-face-saves", "failure-a-six-saves", "success"])
def test_reroll_is_offered_only_where_it_can_change_the_outcome(table_of, seats, face, dl, offered):
    table = table_of("wyrm")
    hero = brannoc(table)
    # Warrior 1 and no helping skill: d6 + 1, no explosion; the best reroll is 7.
    seq = table.command(table.alice, {"type": "check", "attribute": "warrior", "skills": [], "dl": dl,
                                      "character": hero.id}, dice=ScriptedDice([face])).events[0].seq
    alice = seats("alice")
    line = alice.event(seq)
    expect(line).to_contain_text("Failure" if face + 1 <= dl else "Success")
    expect(line.get_by_role("button", name="Reroll (Fate)")).to_have_count(1 if offered else 0)
    if not offered and face + 1 <= dl:
        expect(line).to_contain_text("No Fate spend can change this roll.")


def test_a_fate_requests_line_says_how_it_ended(table_of, seats, script_dice):
    table = table_of("wyrm")
    hero = brannoc(table)
    table.command(table.gm, {"type": "start_session"})
    table.command(table.gm, {"type": "start_scene"})
    check = {"type": "check", "attribute": "warrior", "skills": [], "dl": 6, "character": hero.id}
    table.command(table.alice, check, dice=ScriptedDice([2]))
    asked = table.command(table.alice, {"type": "spend_fate", "use": "reroll", "character": hero.id}).events[0].seq
    alice, gm = seats("alice", "gm")
    expect(alice.event(asked)).to_contain_text("Waiting for the GM to approve or deny.")
    script_dice([6])
    gm.event(asked).get_by_role("button", name="Approve Brannoc's Fate request").click()
    for seat in (alice, gm):
        expect(seat.event(asked)).to_contain_text(f"approved in #{asked + 1}")

    # Another roll, another request, and the scene ends before the GM answers: withdrawn.
    table.command(table.alice, check, dice=ScriptedDice([1]))
    again = table.command(table.alice, {"type": "spend_fate", "use": "plus_two", "character": hero.id}).events[0].seq
    expect(alice.event(again)).to_contain_text("Waiting for the GM")
    table.command(table.gm, {"type": "end_scene"})
    for seat in (alice, gm):
        expect(seat.event(again)).to_contain_text("Withdrawn")
        expect(seat.event(again).get_by_role("button", name="Approve Brannoc's Fate request")).to_have_count(0)
    assert head_seq(table) == again + 1
