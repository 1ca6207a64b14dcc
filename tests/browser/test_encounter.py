"""An encounter in real browsers: the GM and two players, each in their own context, scripted dice.

The turn order and whose turn it is reach every page live; on a player's turn their character's
controls come to the front (and only theirs); the shared opponent's contest is seen by all; the
hidden NPC never reaches a player's page, not even in the frames it received.
"""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from campaign.models import Character
from rules import ScriptedDice, get_system
from tests.browser.conftest import PHONE, head_seq, off_the_loop

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def npc(table, name, shown):
    result = table.command(table.gm, {"type": "create_character", "npc": True, "name": name, "shown": shown,
                                      "quick": {"template": "veteran"}})
    return off_the_loop(lambda: Character.objects.get(pk=result.events[0].character_id))


def test_an_encounter_with_turns_reaches_every_page_and_brings_your_controls_forward(table_of, seats, script_dice):
    table = table_of("wyrm")
    hero = table.create_character(table.alice, "Mira", get_system("wyrm").example_sheet)
    friend = table.create_character(table.bob, "Tor", get_system("wyrm").example_sheet)
    bandit = npc(table, "Bandit", "name")
    npc(table, "Innkeeper", "hidden")
    gm, alice, bob = seats("gm", "alice", "bob")
    for seat in (alice, bob):
        expect(seat.page.locator("#encounter")).to_be_hidden()
        expect(seat.page.get_by_role("tab", name="Bandit")).to_be_visible()  # shown by name
        expect(seat.page.get_by_role("tab", name="Innkeeper")).to_have_count(0)

    # The GM starts the encounter and adds the combatants from the page.
    gm.page.locator("#encounter-name").fill("Ambush at the ford")
    gm.page.get_by_role("button", name="Start an encounter").click()
    for seat in (gm, alice, bob):
        expect(seat.page.locator("#encounter-title")).to_have_text("Ambush at the ford")
    for character in (bandit, friend, hero):
        gm.page.locator("#encounter-character").select_option(str(character.id))
        gm.page.locator("#encounter-add button").click()
        expect(alice.page.locator(f'#turn-order li[data-character="{character.id}"]')).to_be_attached()
    for seat in (gm, alice, bob):
        expect(seat.page.locator("#turn-order li .name")).to_have_text(["Bandit", "Tor", "Mira"])
    # The GM orders the turns (no text has an initiative rule): Mira before Tor.
    gm.page.get_by_role("button", name="Move Mira up").click()
    for seat in (gm, alice, bob):
        expect(seat.page.locator("#turn-order li .name")).to_have_text(["Bandit", "Mira", "Tor"])

    # The bandit's turn: the GM gives it; nobody's controls move.
    gm.page.get_by_role("button", name="Next turn").click()
    for seat in (gm, alice, bob):
        expect(seat.page.locator("#turn-order li.acting")).to_contain_text("Bandit")
        expect(seat.page.locator("#encounter-round")).to_have_text("Round 1")
    expect(alice.page.locator("#end-turn")).to_be_hidden()

    # The GM pits Mira against the bandit (its numbers from its own sheet): every page sees it.
    seq = head_seq(table) + 1
    table.command(table.gm, {"type": "check", "character": hero.id, "attribute": "rogue", "skills": ["Stealth"],
                             "vs_character": bandit.id}, dice=ScriptedDice([2, 5]))
    for seat in (gm, alice, bob):
        expect(seat.event(seq)).to_be_attached()

    # Mira's turn: Alice's sheet comes to the front with an "End my turn" button; Bob's does not.
    gm.page.get_by_role("button", name="Next turn").click()
    expect(alice.page.locator("#hero-panel")).to_have_class("panel hero-panel my-turn")
    expect(alice.page.get_by_role("tab", name="Mira (you)")).to_have_attribute("aria-selected", "true")
    expect(alice.page.locator("#end-turn")).to_be_visible()
    expect(bob.page.locator("#end-turn")).to_be_hidden()
    expect(bob.page.locator("#hero-panel")).not_to_have_class("panel hero-panel my-turn")
    script_dice([6])
    seq = head_seq(table) + 1
    alice.roll("1d6", label="knife")
    expect(alice.event(seq)).to_contain_text("= 6")
    alice.page.get_by_role("button", name="End my turn").click()

    # Tor's turn, then a new round with the bandit.
    expect(bob.page.locator("#end-turn")).to_be_visible()
    expect(alice.page.locator("#end-turn")).to_be_hidden()
    expect(bob.page.get_by_role("tab", name="Tor (you)")).to_have_attribute("aria-selected", "true")
    bob.page.get_by_role("button", name="End my turn").click()
    for seat in (gm, alice, bob):
        expect(seat.page.locator("#encounter-round")).to_have_text("Round 2")
        expect(seat.page.locator("#turn-order li.acting")).to_contain_text("Bandit")

    # A page opened now starts from the encounter as it stands.
    alice.page.reload()
    alice.wait_live()
    expect(alice.page.locator("#turn-order li.acting")).to_contain_text("Bandit")

    # A settings change mid-evening turns the health track on (a house rule), and harm shows live.
    table.command(table.gm, {"type": "configure_campaign", "settings": {"health.enabled": True}})
    table.command(table.gm, {"type": "mark_harm", "character": hero.id, "amount": 2, "reason": "a knife"})
    alice.tab("Mira (you)")
    expect(alice.page.locator("#sheet")).to_contain_text("Health (house rule)4/6")  # 5 + Warrior 1 boxes

    gm.page.get_by_role("button", name="End encounter").click()
    gm.page.get_by_role("button", name="Yes, end the encounter").click()
    for seat in (gm, alice, bob):
        expect(seat.page.locator("#encounter")).to_be_hidden()
    for seat in (alice, bob):
        assert "Innkeeper" not in "".join(seat.frames) and "Innkeeper" not in seat.page.content()


def test_a_name_only_npcs_tab_says_the_gm_keeps_its_sheet(table_of, seats):
    """The tab must not say "Loading the sheet…" for good."""
    table = table_of("wyrm")
    table.create_character(table.alice, "Mira", get_system("wyrm").example_sheet)
    npc(table, "Bandit", "name")
    alice = seats("alice")
    alice.page.get_by_role("tab", name="Bandit").click()
    expect(alice.page.locator("#sheet")).to_contain_text("The GM keeps Bandit's sheet to themselves.")


def test_an_npc_the_gm_makes_or_hides_while_the_page_is_open_has_the_tab_a_reload_shows(table_of, seats):
    """A play-test's find: a name-only NPC made while Alice's page was open reached her sealed (right)
    and got no tab until she reloaded; hiding it again left its tab. The sealed stub tells her page
    nothing, so after one it asks for the characters a reload would list, and nothing more."""
    table = table_of("wyrm")
    table.create_character(table.alice, "Mira", get_system("wyrm").example_sheet)
    alice = seats("alice")
    answers = []  # what the page was told about the table's characters, besides the frames
    alice.page.on("response", lambda r: answers.append(r) if r.url.endswith("/characters") else None)
    tabs = alice.page.locator("#char-tabs [role=tab]")
    expect(tabs).to_have_count(1)

    seq = head_seq(table) + 1
    npc(table, "Innkeeper", "hidden")
    bandit = npc(table, "Bandit", "name")
    expect(alice.event(seq + 1)).to_have_class(re.compile(r"\bhidden-roll\b"))  # sealed, as it should be
    expect(alice.page.get_by_role("tab", name="Bandit")).to_be_visible()
    alice.page.get_by_role("tab", name="Bandit").click()
    expect(alice.page.locator("#sheet")).to_contain_text("The GM keeps Bandit's sheet to themselves.")
    expect(tabs).to_have_count(2)  # Mira and the Bandit; never the hidden innkeeper
    live = tabs.all_inner_texts()

    # The GM hides the bandit again (a sealed event too): its tab goes, as a reload would have it.
    table.command(table.gm, {"type": "show_npc", "character": bandit.id, "shown": "hidden"})
    expect(alice.page.get_by_role("tab", name="Bandit")).to_have_count(0)
    expect(tabs).to_have_count(1)
    table.command(table.gm, {"type": "show_npc", "character": bandit.id, "shown": "name"})  # public: by name again
    expect(tabs).to_have_count(2)
    alice.page.get_by_role("tab", name="Bandit").click()
    expect(alice.page.locator("#sheet")).to_contain_text("The GM keeps Bandit's sheet to themselves.")

    listings = [r.text() for r in answers]
    assert listings, "the page never asked for the characters"
    alice.page.reload()
    alice.wait_live()
    expect(tabs).to_have_count(2)
    assert tabs.all_inner_texts() == live
    for text in (*alice.frames, *listings, alice.page.content()):
        assert "Innkeeper" not in text
    assert all('"state"' not in text for text in listings)  # names, never sheets


def test_the_gm_makes_an_npc_from_the_form_and_shows_it_to_the_table_from_its_sheet(table_of, seats):
    """A play-test's find: "gm (you: an NPC)" made an ordinary public character. The form makes an
    NPC (create_character with npc and shown), says what the players see of it, and the NPC's sheet
    has the GM's control for changing that (show_npc)."""
    table = table_of("wyrm")
    table.create_character(table.alice, "Mira", get_system("wyrm").example_sheet)
    gm, alice = seats("gm", "alice")
    gm.page.get_by_text("New character").click()
    form = gm.page.locator("#char-form")
    expect(form.get_by_label("Player", exact=True)).to_have_value("gm")
    shown = form.get_by_label("What the players see")
    expect(shown).to_be_visible()
    assert shown.locator("option").all_inner_texts() == [
        "Hidden from the players", "Players see the name only", "Players see everything"]
    expect(shown).to_have_value("hidden")  # as the action itself: nothing reaches the table unless the GM says so
    form.get_by_label("Player", exact=True).select_option("alice")  # a player's character: the table always sees it
    expect(shown).to_be_hidden()
    form.get_by_label("Player", exact=True).select_option("gm")
    assert gm.unlabelled() == []

    seq = head_seq(table) + 1
    form.get_by_label("Name").fill("The Spy")
    form.get_by_role("button", name="Create character").click()
    expect(gm.page.get_by_role("tab", name="The Spy")).to_have_attribute("aria-selected", "true")
    expect(gm.page.locator("#sheet")).to_contain_text("Your NPC · Hidden from the players")
    expect(alice.event(seq)).to_have_class(re.compile(r"\bhidden-roll\b"))
    spy = off_the_loop(lambda: Character.objects.get(name="The Spy"))
    assert (spy.npc, spy.shown, spy.owner_id) == (True, "hidden", table.gm.id)

    # The GM shows it by name, then fully, from its sheet (show_npc): Alice's page follows live.
    gm.start("show_npc")
    composer = gm.page.locator("#composer")
    composer.get_by_label("The players see", exact=True).select_option("name")
    gm.submit()
    expect(gm.page.locator("#sheet")).to_contain_text("Your NPC · Players see the name only")
    alice.page.get_by_role("tab", name="The Spy").click()
    expect(alice.page.locator("#sheet")).to_contain_text("The GM keeps The Spy's sheet to themselves.")
    gm.start("show_npc")
    assert composer.get_by_label("The players see", exact=True).locator("option").all_inner_texts() == [
        "Hidden from the players", "Players see everything"]  # not the way it is shown now
    composer.get_by_label("The players see", exact=True).select_option("full")
    gm.submit()
    expect(alice.page.locator("#sheet")).to_contain_text("Played by gm")
    expect(alice.page.locator("#sheet")).to_contain_text("Rogue")
    expect(alice.page.locator("#sheet button[data-action]")).to_have_count(0)
    assert off_the_loop(lambda: Character.objects.get(pk=spy.id).shown) == "full"


def test_a_characters_list_the_page_could_not_read_is_asked_for_again_on_the_reconnect(table_of, seats):
    """The sealed event that made the page ask is shown once: if the answer never came (no network),
    the next connection asks again rather than leave the NPC's tab out until a reload."""
    table = table_of("wyrm")
    table.create_character(table.alice, "Mira", get_system("wyrm").example_sheet)
    alice = seats("alice")
    failed = []

    def fail_once(route):
        if failed:
            route.continue_()
        else:
            failed.append(route.request.url)
            route.abort()

    alice.page.route(re.compile(r"/characters$"), fail_once)
    with alice.page.expect_event("requestfailed", lambda r: r.url.endswith("/characters")):
        npc(table, "Bandit", "name")
    expect(alice.page.get_by_role("tab", name="Bandit")).to_have_count(0)
    alice.page.evaluate("window.talekeeperTable.drop()")
    expect(alice.page.get_by_role("tab", name="Bandit")).to_be_visible()


def test_a_roll_for_everyone_kept_for_the_gm_says_why(table_of, seats, script_dice):
    """An evening's play-test: the GM rolled for a hidden NPC "for everyone" and got a GM-only roll
    without a word. The page now says why; the players see a sealed roll and no such note."""
    table = table_of("wyrm")
    spy = npc(table, "Innkeeper", "hidden")
    gm, alice = seats("gm", "alice")
    seq = head_seq(table) + 1
    script_dice([4])
    gm.page.locator("#roll-character").select_option(str(spy.id))
    gm.roll("1d6", label="a knife in the dark")
    expect(gm.event(seq)).to_contain_text("GM only")
    expect(gm.page.locator("#notice")).to_have_text(
        "Kept for you: the players don't know Innkeeper is here (show it from its sheet first).")
    expect(alice.event(seq)).to_contain_text("did something in secret")
    script_dice([2])
    gm.page.locator("#roll-character").select_option("")
    gm.roll("1d6")
    expect(gm.event(seq + 1)).to_be_attached()
    expect(gm.page.locator("#notice")).to_have_text("")  # a roll for everyone that is: the note is gone


def test_the_gm_makes_a_quick_npc_from_the_form_without_a_sheet(table_of, seats):
    """A play-test's find: an opponent made in the evening meant typing a whole sheet. The form offers
    the quick templates (create_character's ``quick``, rules/npc.py) for the GM's own NPC."""
    from rules.npc import quick_sheet

    table = table_of("wyrm")
    gm = seats("gm")
    gm.page.get_by_role("heading", name="New character").click()
    form = gm.page.locator("#char-form")
    quick = form.get_by_label("Sheet", exact=True)
    assert quick.locator("option").all_inner_texts() == [
        "Made here, with the fields below", "Quick minion: every trait 1", "Quick veteran: every trait 3",
        "Quick boss: every trait 5"]
    expect(form.locator("#char-fields")).to_be_visible()
    quick.select_option("boss")
    expect(form.locator("#char-fields")).to_be_hidden()
    form.get_by_label("Player", exact=True).select_option("alice")  # a player's character: no quick sheet
    expect(quick).to_be_hidden()
    expect(form.locator("#char-fields")).to_be_visible()
    form.get_by_label("Player", exact=True).select_option("gm")
    expect(form.locator("#char-fields")).to_be_hidden()
    assert gm.unlabelled() == []

    form.get_by_label("Name").fill("Warlord")
    form.get_by_role("button", name="Create character").click()
    expect(gm.page.get_by_role("tab", name="Warlord")).to_have_attribute("aria-selected", "true")
    expect(gm.page.locator("#sheet")).to_contain_text("Your NPC · Hidden from the players")
    warlord = off_the_loop(lambda: Character.objects.get(name="Warlord"))
    assert (warlord.npc, warlord.shown) == (True, "hidden")
    created = off_the_loop(lambda: table.campaign.events.get(character=warlord, type="character_created"))
    assert created.payload["sheet"]["attributes"] == quick_sheet("wyrm", {"template": "boss"})["attributes"]


@pytest.mark.parametrize("viewport", [None, PHONE], ids=["desktop", "phone"])
def test_the_quick_npc_form_fits_its_panel_and_offers_only_what_applies(table_of, seats, viewport):
    """A play-test's find: the "Sheet" select (its widest option's width) pushed the form past its
    panel, and a quick NPC's form still spoke of the example sheet and offered "Past the creation
    limits", neither of which applies to a quick sheet (rules/npc.py)."""
    table_of("tote")
    gm = seats("gm", viewport=viewport)
    gm.page.get_by_role("heading", name="New character").click()
    form = gm.page.locator("#char-form")
    example = form.get_by_text("Starts as an example")
    override = form.get_by_label("Past the creation limits")
    expect(example).to_be_visible()
    expect(override).to_be_visible()
    form.get_by_label("Sheet", exact=True).select_option("boss")
    expect(example).to_be_hidden()
    expect(override).to_be_hidden()
    # Every control of the form ends inside the form, and the form inside its panel.
    overflow = form.evaluate("""(f) => {
      const box = f.getBoundingClientRect(), panel = f.closest("section").getBoundingClientRect();
      const out = [...f.querySelectorAll("select, input, button, label")].filter((el) => el.offsetParent)
        .filter((el) => el.getBoundingClientRect().right > box.right + 0.5).map((el) => el.id || el.textContent);
      if (box.right > panel.right + 0.5) out.push("the form");
      return out;
    }""")
    assert overflow == []
    form.get_by_label("Sheet", exact=True).select_option("")
    expect(example).to_be_visible()
    expect(override).to_be_visible()


def test_the_gms_add_list_follows_the_characters_made_during_the_encounter(table_of, seats):
    """Play-test: the GM started the fight, then made the ambushers as quick NPCs: they never reached
    "Add to the encounter" until a reload; and once everyone was in, "Add" did nothing and said nothing."""
    table = table_of("wyrm")
    hero = table.create_character(table.alice, "Mira", get_system("wyrm").example_sheet)
    gm = seats("gm")
    gm.page.locator("#encounter-name").fill("Ambush at the ford")
    gm.page.get_by_role("button", name="Start an encounter").click()
    add = gm.page.locator("#encounter-character")
    expect(add.locator("option")).to_have_text(["Mira"])
    bandit = npc(table, "Bandit", "name")
    expect(add.locator("option")).to_have_text(["Mira", "Bandit"])
    for character in (hero, bandit):
        add.select_option(str(character.id))
        gm.page.locator("#encounter-add button").click()
        expect(gm.page.locator(f'#turn-order li[data-character="{character.id}"]')).to_be_attached()
    expect(add.locator("option")).to_have_text(["Every character is in it"])
    expect(add).to_be_disabled()
    expect(gm.page.locator("#encounter-add button")).to_be_disabled()


def test_an_npcs_tab_says_npc_on_every_page(table_of, seats):
    """Play-test: the GM's NPC tabs each read "(you)" ("Ghoul (you)", "Bandit (you)"), the players' "· gm"."""
    table = table_of("wyrm")
    table.create_character(table.alice, "Mira", get_system("wyrm").example_sheet)
    npc(table, "Bandit", "name")
    gm, alice = seats("gm", "alice")
    npc(table, "Ghoul", "full")  # made while the pages are open
    for seat in (gm, alice):
        expect(seat.page.locator("#char-tabs [role=tab]")).to_contain_text(["Bandit · NPC", "Ghoul · NPC"])
    expect(alice.page.get_by_role("tab", name="Mira (you)")).to_be_visible()
    expect(gm.page.get_by_role("tab", name="Mira · alice")).to_be_visible()


def test_hidden_npcs_act_in_the_gms_turn_and_the_list_offers_only_what_may_be_added(table_of, seats):
    """A hidden NPC is not offered for the turn order; the GM's turn is, and the players see that one
    neutral slot, never who acts in it or how many."""
    table = table_of("wyrm")
    hero = table.create_character(table.alice, "Mira", get_system("wyrm").example_sheet)
    spy = npc(table, "Spy", "hidden")
    npc(table, "Ghost", "hidden")
    gm, alice = seats("gm", "alice")
    gm.page.locator("#encounter-name").fill("Night watch")
    gm.page.get_by_role("button", name="Start an encounter").click()
    add = gm.page.locator("#encounter-character")
    expect(add.locator("option")).to_have_text(["Mira", "GM's turn (your hidden NPCs act in it)"])
    add.select_option("gm")
    gm.page.locator("#encounter-add button").click()
    add.select_option(str(hero.id))
    gm.page.locator("#encounter-add button").click()
    for seat in (gm, alice):
        expect(seat.page.locator("#turn-order li .name")).to_have_text(["GM's turn", "Mira"])
    expect(add.locator("option")).to_have_text(["Every character is in it"])
    gm.page.get_by_role("button", name="Next turn").click()
    expect(alice.page.locator("#turn-order li.acting")).to_contain_text("GM's turn")
    expect(alice.page.locator("#end-turn")).to_be_hidden()
    assert "Spy" not in alice.page.content() and str(spy.id) not in "".join(alice.frames)
