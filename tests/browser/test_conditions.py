"""Conditions with a duration at the table (rules/conditions.py): the GM applies one with one form;
every member reads it on the sheet and beside the combatant in the encounter with the rounds left;
the rules read its modifier where the text gives it one (WYRM: "The GM may add circumstantial
modifiers to any DL", wyrm-srd-rules-mechanics.txt:31); it ends as the encounter's rounds pass;
the GM removes another with a click."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from campaign.models import Event
from rules import get_system
from tests.browser.conftest import head_seq, off_the_loop

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_a_condition_is_shown_read_by_the_rules_and_runs_down_with_the_rounds(table_of, seats, script_dice):
    table = table_of("wyrm")
    hero = table.create_character(table.alice, "Mira", get_system("wyrm").example_sheet)
    table.command(table.gm, {"type": "start_encounter", "name": "Ambush"})
    table.command(table.gm, {"type": "add_combatant", "character": hero.id})
    gm, alice = seats("gm", "alice")
    # Players are not offered the GM's form.
    expect(alice.page.locator('#sheet-wrap button[data-action="declared:apply_condition"]')).to_have_count(0)

    gm.tab("Mira")
    # One form applies a condition; removing one is the button beside it, none while there is none.
    tools = gm.page.locator("#actions .action-group.gm")
    expect(tools.get_by_role("button", name="Apply a condition")).to_be_visible()
    expect(tools.get_by_role("button", name="Remove a condition")).to_have_count(0)
    form = gm.start("declared:apply_condition")
    form.get_by_label("Condition", exact=True).fill("In the dark")
    form.get_by_label("Lasts", exact=True).select_option("rounds")
    form.get_by_label("Rounds", exact=True).fill("2")
    form.get_by_label("DL modifier", exact=True).fill("2")
    seq = head_seq(table) + 1
    gm.submit()
    for seat in (gm, alice):
        expect(seat.event(seq)).to_contain_text("is In the dark for 2 rounds")
        expect(seat.page.locator("#sheet .conditions")).to_contain_text("In the dark (DL modifier +2, 2 rounds left)")
        expect(seat.page.locator(f'#turn-order li[data-character="{hero.id}"]')).to_contain_text(
            "In the dark (2 rounds left)")
    expect(alice.page.get_by_role("button", name="Remove In the dark")).to_have_count(0)

    # Her check reads it: Rogue 3 + a 4 = 7 against DL 5 + 2.
    script_dice([4])
    form = alice.start("check:rogue")
    form.get_by_label("DL", exact=True).fill("5")
    rolled = head_seq(table) + 1
    alice.submit()
    for seat in (gm, alice):
        expect(seat.event(rolled)).to_contain_text("vs DL 7")
    payload = off_the_loop(lambda: Event.objects.get(campaign=table.campaign, seq=rolled).payload)
    assert payload["conditions"] == [{"name": "In the dark", "modifier": 2}] and payload["dl"] == 7

    # The encounter's rounds: round 1 begins (none has ended), round 2 ends one, round 3 the other.
    gm.page.locator("#next-turn").click()
    expect(alice.page.locator("#encounter-round")).to_have_text("Round 1")
    expect(alice.page.locator("#sheet .conditions")).to_contain_text("2 rounds left")
    gm.page.locator("#next-turn").click()
    for seat in (gm, alice):
        expect(seat.page.locator("#sheet .conditions")).to_contain_text("In the dark (DL modifier +2, 1 round left)")
        expect(seat.page.locator(f'#turn-order li[data-character="{hero.id}"]')).to_contain_text("1 round left")
    gm.page.locator("#next-turn").click()
    for seat in (gm, alice):
        expect(seat.page.locator("#encounter-round")).to_have_text("Round 3")
        expect(seat.page.locator("#sheet .conditions")).to_have_count(0)

    # One that lasts until removed: the GM removes it with a click.
    table.command(table.gm, {"type": "apply_condition", "character": hero.id, "name": "Cursed",
                             "duration": "until_removed"})
    expect(alice.page.locator("#sheet .conditions")).to_contain_text("Cursed (until removed)")
    removed = head_seq(table) + 1
    gm.page.get_by_role("button", name="Remove Cursed").click()
    for seat in (gm, alice):
        expect(seat.event(removed)).to_contain_text("is no longer Cursed")
        expect(seat.page.locator("#sheet .conditions")).to_have_count(0)


def test_the_form_announces_a_condition_s_effect_and_its_odds_include_it(table_of, seats, script_dice):
    """MdT: the GM makes Lia Staggered (−1 die, mundo-das-trevas-lite-testes.pt.txt:3). Her Presence
    test's form says so before she rolls, its odds are the rules' own with the die off, and the
    roll's line names the condition."""
    from campaign.models import CharacterProjection
    from tests.browser.test_table import expected_odds

    table = table_of("mdt")
    hero = table.create_character(table.alice, "Lia", get_system("mdt").example_sheet)
    table.command(table.gm, {"type": "apply_condition", "character": hero.id, "name": "Staggered", "duration": "scene",
                             "modifier": -1})
    table.command(table.gm, {"type": "apply_condition", "character": hero.id, "name": "Frightened",
                             "duration": "scene"})  # shown, not applied: not announced
    gm, alice = seats("gm", "alice")
    alice.start("test:presence")
    note = alice.page.locator("#composer .condition-effects")
    expect(note).to_have_text("Conditions: Staggered: −1 die")
    state = off_the_loop(lambda: CharacterProjection.objects.get(character=hero).state)
    action = {"type": "test", "attribute": "presence", "difficulty": 1, "modifier": 0}
    odds = expected_odds("mdt", state, action, [("success", "success"), ("exceptional", "exceptional"),
                                                ("dramatic_failure", "dramatic failure")])
    expect(alice.page.locator("#composer .odds-text")).to_contain_text(odds)
    # Presence 3: 1 + 3 dice, one off: three d10s.
    script_dice([7, 2, 10])
    rolled = head_seq(table) + 1
    alice.submit()
    for seat in (gm, alice):
        expect(seat.event(rolled)).to_contain_text("Conditions: Staggered: −1 die")
    # A form of an action the rules read no condition on says none (the GM's form for her).
    gm.tab("Lia")
    gm.start("declared:apply_condition")
    expect(gm.page.locator("#composer .condition-effects")).to_have_count(0)


def test_a_tale_combat_round_s_form_takes_both_sides_penalty_dice_off_as_the_server_does(table_of, seats,
                                                                                           script_dice):
    """Tale: a condition's penalty dice can't be portioned out (tale-rpg.txt:64-66), the opponent's too
    when it is a character (docs/rules.md, Conditions 7). The GM's "Fight a round" form for Ana against
    the Bandit offers each side what the server accepts: a split past it is marked before it is sent."""
    table = table_of("tale")
    ana = table.create_character(table.alice, "Ana", get_system("tale").example_sheet)
    bandit = table.command(table.gm, {"type": "create_character", "npc": True, "name": "Bandit", "shown": "full",
                                      "quick": {"rating": 3}}).events[0].character
    contest = table.command(table.gm, {"type": "start_combat", "character": ana.id, "vs_character": bandit.id}
                            ).events[0].payload["contest"]
    table.command(table.gm, {"type": "apply_condition", "character": ana.id, "name": "Winded", "duration": "scene",
                             "modifier": 1})
    mine, theirs = contest["mine"] - 1, contest["theirs"] - 2
    gm = seats("gm")
    gm.tab("Ana")
    expect(gm.page.locator("#sheet .contest")).to_contain_text(f"available {mine}D vs {theirs + 2}D")
    # Applied while Ana's sheet is open: her sheet reads the Bandit's.
    table.command(table.gm, {"type": "apply_condition", "character": bandit.id, "name": "Dazed", "duration": "scene",
                             "modifier": 2})
    expect(gm.page.locator("#sheet .contest")).to_contain_text(f"available {mine}D vs {theirs}D")
    form = gm.start("combat_round")
    expect(gm.page.locator("#composer")).to_contain_text(f"Split Ana's {mine}D and their {theirs}D into attack and defence")
    expect(form.get_by_label("Attack", exact=True)).to_have_attribute("max", str(mine))
    their_defence = form.get_by_label("Their defence")
    expect(their_defence).to_have_attribute("max", str(theirs))
    form.get_by_label("Attack", exact=True).fill("1")
    form.get_by_label("Defence", exact=True).fill("0")
    form.get_by_label("Their attack").fill("0")
    their_defence.fill(str(theirs + 1))  # within its dice, past what its condition leaves it
    expect(form.locator("[id$=-their_defence-error]")).to_have_text(f"Must be a whole number from 0 to {theirs}.")
    expect(form.locator("button[name=go]")).to_be_disabled()
    their_defence.fill(str(theirs))
    script_dice([6] + [1] * theirs)  # Ana's attack die, then the Bandit's defence
    rolled = head_seq(table) + 1
    gm.submit()
    expect(gm.event(rolled)).to_contain_text("round 1")
    round_ = off_the_loop(lambda: Event.objects.get(campaign=table.campaign, seq=rolled))
    assert (round_.type, round_.payload["their_conditions"]) == ("combat_round_rolled", 2)
