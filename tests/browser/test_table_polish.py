"""An evening's play-test, the small finds: a reveal or the encounter's end took effect on one
click; the dice box rolled for no character and carried a label into the next roll; the GM was
offered two ways of saying "only me"; log lines that read wrong; a greyed-out "End session" that
said nothing of why; lower-case attribute names in the new-character form; an advance offered
that the points could not pay for.

None of these depends on what the dice show: each asserts text, state or what was stored, with scripted dice.
"""

from __future__ import annotations

import json

import pytest
from playwright.sync_api import expect

from campaign.models import Event
from rules import ScriptedDice, get_system
from tests.browser.conftest import head_seq, off_the_loop

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def stored(table, seq):
    return off_the_loop(lambda: Event.objects.get(campaign=table.campaign, seq=seq))


def test_a_reveal_asks_first_and_no_keeps_the_roll_hidden(table_of, seats):
    table = table_of("wyrm")
    hidden = table.command(table.gm, {"type": "roll", "notation": "2d6", "visibility": "gm"},
                           dice=ScriptedDice([1, 6])).events[0].seq
    gm = seats("gm")
    line = gm.event(hidden)
    reveal = line.get_by_role("button", name=f"Reveal event {hidden} to everyone")
    # One click only asks, in place; No puts the button back, with the focus on it.
    reveal.click()
    expect(line.get_by_role("group", name=f"Reveal #{hidden} to everyone?")).to_be_visible()
    expect(reveal).to_be_hidden()
    expect(line.get_by_role("button", name=f"Yes, reveal #{hidden} to everyone")).to_be_focused()
    line.get_by_role("button", name=f"No, keep #{hidden} hidden").click()
    expect(reveal).to_be_focused()
    # Esc is No too.
    reveal.click()
    gm.page.keyboard.press("Escape")
    expect(reveal).to_be_focused()
    expect(line.get_by_role("group")).to_have_count(0)
    # Yes reveals: the next event stored is the reveal, so neither No stored anything.
    reveal.click()
    line.get_by_role("button", name=f"Yes, reveal #{hidden} to everyone").click()
    expect(gm.event(hidden + 1)).to_contain_text(f"revealed #{hidden}")
    assert stored(table, hidden + 1).type == "roll_revealed"
    expect(line.get_by_role("button", name=f"Reveal event {hidden} to everyone")).to_have_count(0)


def test_ending_the_encounter_asks_first_and_its_lines_read_as_said(table_of, seats):
    table = table_of("wyrm")
    mira = table.create_character(table.alice, "Mira", get_system("wyrm").example_sheet)
    table.command(table.gm, {"type": "start_encounter", "name": "Ambush"})
    table.command(table.gm, {"type": "add_combatant", "character": mira.id})
    turn = table.command(table.gm, {"type": "advance_turn"}).events[0].seq
    gm = seats("gm")
    # Whoever gave the turn did the giving ("gm · round 1: Mira's turn" read as if the GM chose Mira).
    expect(gm.event(turn)).to_contain_text("gave the turn to Mira (round 1)")
    end = gm.page.get_by_role("button", name="End encounter")
    end.click()
    expect(gm.page.get_by_role("group", name="End the encounter “Ambush”?")).to_be_visible()
    gm.page.get_by_role("button", name="No, keep it going").click()
    expect(end).to_be_focused()
    expect(gm.page.locator("#encounter")).to_be_visible()
    end.click()
    gm.page.get_by_role("button", name="Yes, end the encounter").click()
    expect(gm.page.locator("#encounter")).to_be_hidden()
    # The next event stored is the end (No stored nothing), and one round is "1 round".
    expect(gm.event(turn + 1)).to_contain_text("ended the encounter “Ambush” after 1 round")
    expect(gm.event(turn + 1)).not_to_contain_text("round(s)")
    assert stored(table, turn + 1).type == "encounter_ended"
    # A new encounter's End button is there again.
    table.command(table.gm, {"type": "start_encounter", "name": "Second wave"})
    expect(end).to_be_visible()


def test_the_dice_box_rolls_for_a_players_only_character_and_clears_the_label(table_of, seats, script_dice):
    table = table_of("wyrm")
    mira = table.create_character(table.alice, "Mira", get_system("wyrm").example_sheet)
    table.create_character(table.bob, "Tor", get_system("wyrm").example_sheet)
    alice, gm = seats("alice", "gm")
    page = alice.page
    expect(page.locator("#roll-character")).to_have_value(str(mira.id))
    expect(gm.page.locator("#roll-character")).to_have_value("")  # the GM's stays "NPC / no character"
    seq = head_seq(table) + 1
    script_dice([5])
    alice.roll("1d6", visibility="secret", label="gm secret")
    expect(alice.event(seq)).to_contain_text("gm secret")
    expect(alice.event(seq)).to_contain_text("= 5")
    expect(alice.event(seq).locator(".who")).to_have_text("Mira")
    # The label and the hidden choice were that roll's; the notation is selected to be replaced, "For" stays.
    expect(page.locator("#roll-label")).to_have_value("")
    expect(page.locator("#notation")).to_have_value("1d6")
    expect(page.locator("#visibility")).to_have_value("public")
    expect(page.locator("#roll-character")).to_have_value(str(mira.id))
    assert stored(table, seq).character_id == mira.id
    # Her own choice of "no character" stands when the characters are drawn again.
    page.locator("#roll-character").select_option("")
    table.create_character(table.bob, "Brom", get_system("wyrm").example_sheet)
    expect(page.get_by_role("tab", name="Brom · bob")).to_be_visible()
    expect(page.locator("#roll-character")).to_have_value("")


def test_the_gm_is_offered_one_way_of_keeping_the_dice_to_herself(table_of, seats):
    table = table_of("mdt")
    table.create_character(table.alice, "Helena", get_system("mdt").example_sheet)
    gm, alice = seats("gm", "alice")
    for seat in (gm, alice):
        seat.page.get_by_role("tab", name="Helena").first.click()
        seat.start("test:intelligence")
    for where in ("#visibility", "#composer [name=visibility]"):
        expect(gm.page.locator(where).locator("option")).to_have_text(["Everyone", "Only the GM"])
        expect(alice.page.locator(where).locator("option")).to_have_text(["Everyone", "Only me and the GM", "Only the GM"])


def test_end_session_says_why_it_waits_while_a_scene_runs(table_of, seats):
    table = table_of("tote")
    table.command(table.gm, {"type": "start_session"})
    table.command(table.gm, {"type": "start_scene"})
    gm = seats("gm")
    end = gm.page.get_by_role("button", name="End session")
    expect(end).to_be_disabled()
    expect(end).to_have_accessible_description("End scene 1 first.")
    expect(end).to_have_attribute("title", "End scene 1 first.")
    expect(gm.page.locator("#session-hint")).to_be_visible()
    gm.page.get_by_role("button", name="End scene").click()
    expect(end).to_be_enabled()
    expect(gm.page.locator("#session-hint")).to_have_text("")


@pytest.mark.parametrize("system, labels", [
    ("wyrm", ["Warrior", "Rogue", "Mage"]),
    ("tale", ["Brawn", "Deft", "Clever", "Wisecrack", "Primary characteristic", "Secondary characteristic"]),
    ("mdt", ["Intelligence", "Wits", "Composure"]),
    ("tote", ["Strike", "Persuade"]),
])
def test_the_new_character_form_names_ratings_as_the_sheets_do(table_of, seats, system, labels):
    table_of(system)
    alice = seats("alice")
    form = alice.page.locator("#char-form")
    for label in labels:
        expect(form.get_by_label(label, exact=True)).to_be_visible()
    for lower in ("warrior", "brawn", "intelligence"):
        expect(form.get_by_text(lower, exact=True)).to_have_count(0)
    if system == "tale":  # the primary's choices too
        expect(form.get_by_label("Primary characteristic").locator("option").first).to_have_text("Brawn")
        # A review's find: the characteristic Skill and a skill's name were both labelled "Skill".
        expect(form.get_by_label("Skill", exact=True)).to_have_count(1)
        expect(form.get_by_role("group", name="Characteristics").get_by_label("Skill", exact=True)).to_be_visible()
        expect(form.get_by_role("group", name="Skills").get_by_label("Skill name", exact=True)).to_have_value("Ride")


def buying(table_of, seats, system: str, points: int):
    """Alice's example character of ``system`` with ``points`` from the GM, her advance form open."""
    table = table_of(system)
    hero = table.create_character(table.alice, "Hero", get_system(system).example_sheet)
    table.command(table.gm, {"type": "award_points", "character": hero.id, "points": points, "reason": "the ford"})
    alice = seats("alice")
    return table, alice, alice.start("buy_advance")


def test_buy_an_advance_prices_each_choice_and_marks_what_the_points_dont_cover(table_of, seats):
    table, alice, form = buying(table_of, seats, "wyrm", 5)
    buy = form.get_by_label("Buy")
    expect(buy.locator("option")).to_have_text(["+1 attribute (needs 10 points, has 5)", "a new skill (5 points)"])
    expect(buy.locator("option[value=attribute]")).to_be_disabled()
    expect(buy).to_have_value("skill")  # the choice the points cover


# What the other systems' forms show, priced by the server (each sheet's ``advances``, from the rules'
# own advance_cost): (system, points, the "Raise" choice, the field, {option value: its text}).
PRICED = [
    ("mdt", 5, "attribute", "Attribute", {"strength": "Strength (1) (4 points)",
                                          "presence": "Presence (3) (needs 8 points, has 5)"}),
    ("mdt", 5, "specialization", "Specialization", {"Ocultismo": "Ocultismo +2 (3 points)", "": "a new one (1 point)"}),
    ("tote", 3, "skill", "Skill", {"Strike": "Strike (2) (3 XP)", "Grapple": "Grapple (0) (1 XP)"}),
    ("tote", 3, "totem", "Totem", {"Bear": "Bear (1) (needs 4 XP, has 3)"}),
    ("tale", 4, "characteristic", "Characteristic", {"brawn": "Brawn 4D (needs 5 points, has 4)",
                                                     "deft": "Deft 3D (4 points)"}),
    ("tale", 4, "skill", "Skill", {"Ride": "Ride +1D (1 point)", "Jump": "Jump +0D (1 point)"}),
]


@pytest.mark.parametrize("system, points, kind, label, texts", PRICED)
def test_every_system_s_advance_form_prices_its_choices_as_the_server_does(table_of, seats, system, points, kind,
                                                                          label, texts):
    """A review's find: only WYRM's "Buy an advance" showed what each choice costs and disabled what
    the points don't cover; the others priced per rating (or not at all) in their JavaScript."""
    table, alice, form = buying(table_of, seats, system, points)
    form.get_by_label("Raise").select_option(kind)
    field = form.get_by_label(label, exact=True)
    for value, text in texts.items():
        option = field.locator(f'option[value="{value}"]')
        expect(option).to_have_text(text)
        if "needs" in text:
            expect(option).to_be_disabled()
        else:
            expect(option).to_be_enabled()


def test_a_bought_advance_reprices_the_form_from_the_sheet_the_server_pushes(table_of, seats):
    table, alice, form = buying(table_of, seats, "mdt", 5)
    expect(form.get_by_label("Attribute", exact=True)).to_have_value("strength")  # the first the points cover
    seq = head_seq(table) + 1
    alice.submit()
    expect(alice.event(seq)).to_contain_text("raised Strength from 1 to 2 for 4 points")
    form = alice.start("buy_advance")
    expect(form.get_by_label("Attribute", exact=True).locator('option[value="strength"]')).to_have_text(
        "Strength (2) (needs 6 points, has 1)")
    expect(form.get_by_label("Specialization", exact=True).locator('option[value=""]')).to_have_text("a new one (1 point)")


def test_the_new_character_form_keeps_named_entries_named_and_apart(table_of, seats):
    """A play-test's find: a third MdT specialization turned the rows into a fixed set of ratings
    labelled "New 1" and "New 2" (no name to change, no Remove), and a row renamed as another
    became one entry with it: the declaration says which are named entries, and a name is one row's."""
    table_of("mdt")
    alice = seats("alice")
    form = alice.page.locator("#char-form")
    group = form.get_by_role("group", name="Specializations")
    add = group.get_by_role("button", name="Add an entry to Specializations")
    add.click()
    add.click()
    names = group.get_by_label("Specialization name", exact=True)
    expect(names).to_have_count(3)
    for i, name in enumerate(["Ocultismo", "New specialization", "New specialization 2"]):
        expect(names.nth(i)).to_have_value(name)
    expect(group.get_by_role("button", name="Remove New specialization 2")).to_be_visible()
    names.nth(2).fill("ocultismo")
    names.nth(2).press("Tab")
    expect(group).to_contain_text("Another specialization is named ocultismo: give this one its own name.")
    expect(names.nth(2)).to_have_value("New specialization 2")
    sheet = json.loads(form.get_by_label("Sheet (JSON)").input_value())
    assert sheet["specializations"] == {"Ocultismo": 2, "New specialization": 0, "New specialization 2": 0}


def test_the_log_keeps_a_new_rolls_follow_up_buttons_in_view(table_of, seats, script_dice):
    """The result card says "what you can do next is on the roll in the log": the log scrolled to
    the roll before its Fate buttons were drawn under it, so they sat below the log's edge."""
    table = table_of("wyrm")
    table.create_character(table.alice, "Mira", get_system("wyrm").example_sheet)
    for n in range(12):  # a log longer than its box, so that where it is scrolled matters
        table.command(table.gm, {"type": "roll", "notation": "1d6", "label": f"warm-up {n}"},
                      dice=ScriptedDice([3]))
    alice = seats("alice")
    alice.start("check:rogue")
    alice.page.locator("#composer").get_by_label("DL", exact=True).fill("9")
    seq = head_seq(table) + 1
    script_dice([1])  # 1 + Rogue 3 = 4 vs DL 9: a failure Fate can reroll
    alice.submit()
    reroll = alice.event(seq).get_by_role("button", name="Reroll (Fate)")
    expect(reroll).to_be_visible()
    log = alice.page.locator("#log")
    # The buttons are drawn and the scroll follows in the same task: no wait for it.
    gap = log.evaluate("(el) => el.scrollHeight - el.scrollTop - el.clientHeight")
    assert gap <= 1, f"the log stops {gap}px above its newest line's end"
