"""Fights and requests of several players at the table: separate browser contexts per member,
scripted dice."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from campaign.models import Event
from rules import ScriptedDice, get_system
from tests.browser.conftest import PHONE, faces_for, head_seq
from tests.browser.test_pages import axe_problems

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_one_request_asks_every_player_and_each_rolls_with_one_click(table_of, seats, script_dice):
    table = table_of("tote")
    ayasha = table.create_character(table.alice, "Ayasha", get_system("tote").example_sheet)
    bo = table.create_character(table.bob, "Bo", get_system("tote").example_sheet)
    gm, alice, bob = seats("gm", "alice", "bob")
    gm.tab("Ayasha")
    form = gm.start("skill:Hunt")
    form.get_by_label("Target number (T)").fill("8")
    first = head_seq(table) + 1
    gm.submit("Ask every player")
    for seat, seq, other in ((alice, first, first + 1), (bob, first + 1, first)):
        expect(seat.event(seq).get_by_role("button", name="Roll now: a Hunt test vs T8")).to_be_visible()
        expect(seat.event(other).get_by_role("button", name="Roll now: a Hunt test vs T8")).to_have_count(0)
    hunt = {"type": "skill_test", "skill": "Hunt", "target": 8}
    script_dice(faces_for("tote", ayasha.projection.state, hunt, lambda p: p["success"]))
    alice.event(first).get_by_role("button", name="Roll now: a Hunt test vs T8").click()
    expect(gm.event(first)).to_contain_text("answered in")
    bo.projection.refresh_from_db()
    script_dice(faces_for("tote", bo.projection.state, hunt, lambda p: not p["success"]))
    bob.event(first + 1).get_by_role("button", name="Roll now: a Hunt test vs T8").click()
    expect(gm.event(first + 1)).to_contain_text("answered in")
    expect(alice.event(first + 1)).to_contain_text("answered in")


def test_two_against_one_each_chooses_her_own_and_the_npcs_split_stays_sealed(table_of, seats, script_dice):
    """Tale, two heroes against a bandit: the GM starts the fight from the page, each member chooses
    only for her own side, the bandit's split reaches the players with the round that reads it."""
    table = table_of("tale")
    sheet = get_system("tale").example_sheet
    heroine = table.create_character(table.alice, "Ana", sheet)
    table.create_character(table.bob, "Ben", sheet)
    table.command(table.gm, {"type": "create_character", "npc": True, "name": "Bandit", "shown": "full",
                             "quick": {"rating": 3}})
    gm = seats("gm", viewport={"width": 1280, "height": 800})
    alice, bob = seats("alice", "bob")
    phone = seats("alice", viewport=PHONE)
    start = gm.page.locator("#fight details.fight-start")
    start.locator("summary").click()
    start.get_by_label("Name").fill("Ambush at the ford")
    for who in ("Ana", "Ben", "Bandit"):
        start.get_by_label(who, exact=True).check()
    start.get_by_role("button", name="Start the fight").click()
    for seat in (gm, alice, bob, phone):
        expect(seat.page.locator("#fight h2")).to_have_text("Ambush at the ford")
    # Each member has a form for her own side only; the GM for the NPC's.
    expect(alice.page.get_by_role("form", name="Ana's choice")).to_be_visible()
    expect(alice.page.get_by_role("form", name="Bandit's choice")).to_have_count(0)
    expect(alice.page.get_by_role("form", name="Ben's choice")).to_have_count(0)
    expect(gm.page.get_by_role("form", name="Ana's choice")).to_have_count(0)
    bandit_form = gm.page.get_by_role("form", name="Bandit's choice")
    bandit_form.get_by_label("Attack Ana").fill("2")
    bandit_form.get_by_label("Defence").fill("4")
    chose = head_seq(table) + 1
    bandit_form.get_by_role("button", name="Choose for Bandit").click()
    expect(gm.event(chose)).to_contain_text("chose for round 1")
    expect(alice.event(chose)).to_contain_text("did something in secret")  # the split is sealed
    expect(gm.page.locator("#fight [data-side]", has_text="Bandit")).to_contain_text("chose for round 1")
    ana = alice.page.get_by_role("form", name="Ana's choice")
    ana.get_by_label("Attack Bandit").fill("3")
    ana.get_by_label("Defence").fill("3")
    ana.get_by_role("button", name="Choose for Ana").click()
    expect(alice.page.locator("#fight [data-side]", has_text="Ana")).to_contain_text("chose for round 1")
    expect(bob.page.locator("#fight [data-side]", has_text="Ana")).not_to_contain_text("chose")
    # Sides in the start form's order (Ana, Bandit, Ben). Attacks: Ana 3, the bandit 2 (at Ana), Ben 2;
    # defences: Ana's 3, the bandit's 4 (Ben is not attacked: he rolls none).
    script_dice([6, 6, 5] + [2, 2] + [1, 1] + [5, 5, 5] + [4, 3, 2, 1])
    ben = bob.page.get_by_role("form", name="Ben's choice")
    ben.get_by_label("Attack Bandit").fill("2")
    rolled = head_seq(table) + 1
    ben.get_by_role("button", name="Choose for Ben").click()
    for seat in (gm, alice, bob):
        expect(seat.event(rolled)).to_contain_text("Ambush at the ford, round 1")
        last = seat.page.locator("#fight .fight-last")
        expect(last).to_contain_text("Ana → Bandit: 17 vs 10, hit, 3 dice off")
        expect(last).to_contain_text("Ben → Bandit: 2 vs 10, miss")
        expect(last).to_contain_text("Bandit → Ana: 4 vs 15, miss")
        expect(last).to_contain_text("to hit)")
    expect(alice.page.locator("#fight [data-side]", has_text="Bandit")).to_contain_text("3D of 6D")
    expect(bob.page.locator("#fight [data-side]", has_text="Ben")).to_contain_text("−1D next round")
    gm.screenshot("fight-desktop.png", at="#fight")
    phone.screenshot("fight-phone.png", at="#fight")
    # The whole table in the fight: a condition on Ana's sheet (in a fight of several sides a Tale
    # condition is shown, docs/rules.md "Conditions with a duration"), the log and the chat together.
    table.command(table.gm, {"type": "apply_condition", "character": heroine.id, "name": "Winded", "duration": "rounds",
                             "rounds": 2, "modifier": 1})
    said = head_seq(table) + 1
    alice.page.locator("#chat-text").fill("Ben, the ford! Keep him busy.")
    alice.page.keyboard.press("Enter")
    for seat in (gm, alice, phone):
        expect(seat.event(said)).to_contain_text("Keep him busy")
        seat.tab("Ana")
        expect(seat.page.locator("#sheet .conditions")).to_contain_text("Winded (Penalty dice +1, 2 rounds left)")
    gm.screenshot("fight-table-desktop.png")
    phone.screenshot("fight-table-phone.png", at=".log-panel")
    phone.screenshot("fight-conditions-phone.png", at="#sheet")
    for seat in (gm, phone):  # the fight's panel and forms, as the GM and on a phone
        assert axe_problems(seat.page) == [], seat.username
    gm.page.get_by_role("button", name="End the fight").click()
    gm.page.get_by_role("button", name="Yes, end the fight").click()
    for seat in (alice, bob):
        expect(seat.page.locator("#fight")).to_be_hidden()


def test_a_damage_roll_reaches_its_targets_track_with_one_click(table_of, seats, script_dice):
    """WYRM with the health track: Ana's damage roll in a fight offers the GM "Apply 5 to Ogre" on its
    line; one click marks the ogre's track with an event naming the roll."""
    table = table_of("wyrm")
    ana = table.create_character(table.alice, "Ana", get_system("wyrm").example_sheet)
    ogre = table.command(table.gm, {"type": "create_character", "npc": True, "name": "Ogre", "shown": "full",
                                    "quick": {"rating": 2}}).events[0].character
    table.command(table.gm, {"type": "configure_campaign", "settings": {"health.enabled": True}})
    table.command(table.gm, {"type": "start_fight", "sides": [
        {"character": ana.id, "attribute": "warrior", "team": "A"},
        {"character": ogre.id, "attribute": "warrior", "team": "B"}]})
    table.command(table.gm, {"type": "apply_condition", "character": ana.id, "name": "Dazzled", "duration": "scene",
                             "modifier": 1})
    gm, alice = seats("gm", "alice")
    # The WYRM module's `fights` lays out each side's choice: whom it acts against (fight.js names no system);
    # the form says what her conditions change this round.
    choice = alice.page.get_by_role("form", name="Ana's choice")
    expect(choice.locator(".condition-effects")).to_have_text("Conditions: Dazzled: +1 to the DL")
    expect(choice.get_by_label("Act against Ogre")).to_be_checked()
    expect(choice.get_by_role("button", name="Choose for Ana")).to_be_visible()
    rolled = table.command(table.alice, {"type": "damage", "character": ana.id, "dice": 1, "bonus": 1},
                           dice=ScriptedDice([4])).events[0].seq
    apply = gm.event(rolled).get_by_role("button", name="Apply 5 to Ogre")
    expect(apply).to_be_visible()
    expect(alice.event(rolled).get_by_role("button", name="Apply 5 to Ogre")).to_have_count(0)  # the GM's
    apply.click()
    expect(gm.event(rolled)).to_contain_text(f"applied to Ogre in #{rolled + 1}")
    expect(alice.event(rolled + 1)).to_contain_text("marked 5 boxes of harm")
    marked = Event.objects.get(campaign=table.campaign, seq=rolled + 1)
    assert (marked.type, marked.character_id, marked.payload["applies"]) == ("harm_marked", ogre.id, rolled)


def test_a_group_race_each_rolls_her_own_side_and_the_one_ahead_at_the_target_wins(table_of, seats, script_dice):
    """MdT, three racing to the ford ("um certo número de sucessos primeiro",
    mundo-das-trevas-lite-testes.pt.txt:24; docs/rules.md, Fights 6): the GM starts the race from the
    page, each member rolls her own side with one click and the GM the hound's; the round rolls once
    every side has, and the one side ahead at the target wins."""
    table = table_of("mdt")
    sheet = get_system("mdt").example_sheet
    table.create_character(table.alice, "Helena", sheet)
    table.create_character(table.bob, "Tomas", sheet)
    table.command(table.gm, {"type": "create_character", "npc": True, "name": "Hound", "shown": "full",
                             "quick": {"rating": 3}})
    gm, alice, bob = seats("gm", "alice", "bob")
    start = gm.page.locator("#fight details.fight-start")
    start.locator("summary").click()
    start.get_by_label("Name").fill("Race to the ford")
    start.get_by_label("Kind").select_option("race")
    start.get_by_label("Race to (successes)").fill("2")
    start.get_by_label("Everyone rolls").select_option("dexterity")
    for who, team in (("Helena", "A"), ("Tomas", "B"), ("Hound", "C")):
        start.get_by_label(who, exact=True).check()
        start.get_by_label(f"{who}'s team").select_option(team)
    started = head_seq(table) + 1
    start.get_by_role("button", name="Start the fight").click()
    for seat in (gm, alice, bob):
        expect(seat.page.locator("#fight h2")).to_have_text("Race to the ford")
        expect(seat.page.locator("#fight [role=status]")).to_contain_text("Race to 2")
    fight = Event.objects.get(campaign=table.campaign, seq=started).payload["fight"]
    names = {str(c.id): c.name for c in table.campaign.characters.all()}
    order = [names[s] for s in fight["order"]]
    pools = {names[s]: e["pool"] for s, e in fight["entries"].items()}
    assert pools == {"Helena": 1 + 2, "Tomas": 1 + 2, "Hound": 1 + 3}  # 1 + Dexterity, from each sheet
    # Each member rolls only for her own side.
    expect(alice.page.get_by_role("form", name="Tomas's choice")).to_have_count(0)
    expect(gm.page.get_by_role("form", name="Helena's choice")).to_have_count(0)
    gm.page.get_by_role("button", name="Roll for Hound").click()
    expect(gm.page.locator("#fight [data-side]", has_text="Hound")).to_contain_text("chose for round 1")
    alice.page.get_by_role("button", name="Roll for Helena").click()
    expect(alice.page.locator("#fight [data-side]", has_text="Helena")).to_contain_text("chose for round 1")
    # Round 1, sides in order: Helena's two 7s reach 2 alone; Tomas one success, the hound none.
    faces = {"Helena": [7, 7, 2], "Tomas": [8, 3, 2], "Hound": [5, 5, 5, 5]}
    script_dice([f for who in order for f in faces[who]])
    rolled = head_seq(table) + 1
    bob.page.get_by_role("button", name="Roll for Tomas").click()
    for seat in (gm, alice, bob):
        expect(seat.event(rolled)).to_contain_text("Race to the ford, round 1")
        expect(seat.event(rolled)).to_contain_text("Helena: 2 successes")
        expect(seat.event(rolled + 1)).to_contain_text("ended after 1 round")
        expect(seat.event(rolled + 1)).to_contain_text("won by Helena")  # a team of one is named
    for seat in (alice, bob):
        expect(seat.page.locator("#fight")).to_be_hidden()
    expect(gm.page.locator("#fight summary")).to_have_text("Start a fight")  # the GM's next one
