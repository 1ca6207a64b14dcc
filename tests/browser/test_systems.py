"""Each rule system played through the table page: its sheet, its main actions with their exact
odds, the follow-up choices on the rolls in the log, the GM's tools; and a screenshot of each
table (desktop, and at phone width) into docs/screenshots/.
"""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from campaign.models import Character, Event
from rules import get_system
from rules.base import ScriptedDice
from tests.browser.conftest import PHONE, faces_for, head_seq
from tests.browser.test_table import expected_odds

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def payload(table, seq: int) -> dict:
    return Event.objects.get(campaign=table.campaign, seq=seq).payload


def state_of(table, name: str) -> dict:
    return Character.objects.select_related("projection").get(campaign=table.campaign, name=name).projection.state


def act(seat, table, do, text: str | None = None) -> int:
    """Do something on the page; wait until its event is in the log; return its seq."""
    seq = head_seq(table) + 1
    do()
    line = seat.event(seq)
    expect(line).to_be_attached()
    if text:
        expect(line).to_contain_text(text)
    return seq


def composer(seat):
    return seat.page.locator("#composer")


def screenshots(seats_fixture, system: str, player, gm, action: str):
    """The player's table on a desktop (an action form open, with its odds), on a phone, and the GM's."""
    player.page.locator("#log").evaluate("e => e.scrollTop = e.scrollHeight")
    player.start(action)
    player.odds()
    player.screenshot(f"{system}.png")
    player.page.keyboard.press("Escape")
    gm.screenshot(f"{system}-gm.png")
    phone = seats_fixture(player.username, viewport=PHONE)
    phone.page.locator("#log").evaluate("e => e.scrollTop = e.scrollHeight")
    phone.screenshot(f"{system}-phone.png", full_page=True)


def test_tote_at_the_table(table_of, seats, script_dice):
    table = table_of("tote")
    gm, alice = seats("gm", "alice")

    # Alice makes her hero with the form (the example sheet, one skill changed back and forth).
    form = alice.page.locator("#char-form")
    form.get_by_label("Name").fill("Ayasha")
    form.get_by_role("button", name="Create character").click()
    expect(alice.page.get_by_role("tab", name="Ayasha")).to_have_attribute("aria-selected", "true")
    expect(alice.page.locator(".tote-grid")).to_contain_text("Strike")
    expect(alice.page.locator("#sheet")).to_contain_text("3 / 5")  # Resolve

    # The GM opens the evening: a session and a scene.
    gm.page.get_by_role("button", name="Start session").click()
    expect(gm.page.get_by_role("button", name="Start scene")).to_be_enabled()
    gm.page.get_by_label("Name of the next scene (optional)").fill("The elk hunt")
    gm.page.get_by_role("button", name="Start scene").click()
    expect(alice.page.locator("#session-status")).to_have_text("Session 1, scene 1: The elk hunt")
    expect(alice.page.locator("#log")).to_contain_text("started scene 1: “The elk hunt”")
    expect(gm.page.get_by_label("Name of the next scene (optional)")).to_have_value("")
    expect(gm.page.get_by_label("Name of the next scene (optional)")).to_be_disabled()

    # XP from the GM, spent by Alice on her Bear totem (three steps, 2+... see the sheet).
    gm.tab("Ayasha")
    gm.start("award_points")
    composer(gm).get_by_label("XP", exact=True).fill("20")
    act(alice, table, gm.submit, "earned 20 XP")
    expect(alice.page.locator(".points")).to_contain_text("20 available")
    for level in (2, 3, 4):
        alice.start("buy_advance")
        composer(alice).get_by_label("Raise").select_option("totem")
        composer(alice).get_by_label("Totem").select_option("Bear")
        act(alice, table, alice.submit, f"raised the Bear totem from {level - 1} to {level}")
    expect(alice.page.locator(".tote-grid thead")).to_contain_text("Bear 4")

    # A Strike test against T10 that fails by at most 4 (scripted): Resolve and the Bear totem rescue it.
    strike = {"type": "skill_test", "skill": "Strike", "target": 10}
    script_dice(faces_for("tote", state_of(table, "Ayasha"), strike,
                          lambda p: not p["success"] and not p["critical"] and p["total"] + 4 >= 10))
    alice.start("skill:Strike")
    composer(alice).get_by_label("Target number (T)").fill("10")
    want = expected_odds("tote", state_of(table, "Ayasha"), strike, [("success", "success"), ("critical", "critical")])
    expect(composer(alice).locator(".odds-text")).to_have_text(want)
    seq = act(alice, table, alice.submit, "Strike 2 vs T10")
    test = payload(table, seq)
    assert not test["success"] and test["total"] + 4 >= 10, test
    expect(gm.event(seq)).to_contain_text(f"= {test['total']}")
    picker = alice.event(seq).get_by_label("Add a totem")
    expect(picker).to_be_visible()
    picker.select_option("Bear")
    act(alice, table, lambda: alice.event(seq).get_by_role("button", name="Spend Resolve").click(),
        f"Bear +4 turns {test['total']} into {test['total'] + 4}")
    expect(alice.page.locator("#sheet")).to_contain_text("2 / 5")
    expect(alice.event(seq).locator(".ev-follow")).to_be_hidden()

    # The GM invokes her aspect against her; she invokes it for a free point; an effect test.
    gm.page.locator('#sheet-wrap button[data-action="gm_invoke_aspect"]').click()  # no form: one click
    expect(alice.page.locator("#sheet")).to_contain_text("−2 on the next skill test")
    act(alice, table, lambda: alice.page.locator('#sheet-wrap button[data-action="invoke_aspect"]').click(), "one free Resolve")
    expect(alice.page.locator("#sheet")).to_contain_text("+1 free (aspect)")
    alice.start("effect_test")
    composer(alice).get_by_label("What for").fill("damage")
    expect(composer(alice).locator(".odds-text")).to_contain_text("average 7.0")
    script_dice([6, 3])
    act(alice, table, alice.submit, "damage: effect test 2d6 = 9")

    # Injuries from the GM block skill dice; Resolve granted back.
    gm.start("mark_injury")
    act(alice, table, gm.submit, "was injured")
    expect(alice.page.locator(".injuries")).to_contain_text("can't select 5")
    gm.start("grant_resolve")
    composer(gm).get_by_label("Reason").fill("a fine speech")
    act(alice, table, gm.submit, "was granted 1 Resolve")
    alice.start("skill:Hunt")
    expect(composer(alice)).to_contain_text("Injuries block 5")
    expect(composer(alice)).to_contain_text("The GM's −2 applies")
    composer(alice).get_by_role("button", name="Cancel").click()

    # A critical is rare with real dice: the log line of one the engine rolled with scripted dice.
    system = get_system("tote")
    crit = system.decide(state_of(table, "Ayasha"), {"type": "skill_test", "skill": "Strike", "target": 8},
                         ScriptedDice([1, 3, 1]))[0]
    described = alice.page.evaluate("""async (payload) => {
        const tote = await import("/static/talekeeper/systems/tote.js");
        const d = tote.describe({type: "skill_tested", payload}, { said: () => "its declared sentence" });
        return `${d.text} | ${d.outcome.label} | ${d.detail}`;
    }""", dict(crit.payload))
    assert "· critical!" in described and f"Critical: {crit.payload['bubble_note']}" in described
    assert "bubble" in crit.payload["bubble_note"]

    screenshots(seats, "tote", alice, gm, "skill:Strike")


def test_wyrm_at_the_table(table_of, seats, script_dice):
    table = table_of("wyrm")
    table.create_character(table.alice, "Mira", get_system("wyrm").example_sheet)
    table.create_character(table.bob, "Brannoc", {"attributes": {"warrior": 4, "rogue": 1, "mage": 0},
                                                   "skills": [{"name": "Swords", "attribute": "warrior"}], "fate": 1})
    gm, alice = seats("gm", "alice")
    expect(alice.page.locator("#sheet")).to_contain_text("Rogue check")

    # A Rogue check with Stealth against DL 9: 50% exactly.
    alice.start("check:rogue")
    composer(alice).get_by_label("Stealth").check()
    composer(alice).get_by_label("DL", exact=True).fill("9")
    action = {"type": "check", "attribute": "rogue", "skills": ["Stealth"], "dl": 9}
    expect(composer(alice).locator(".odds-text")).to_have_text(
        expected_odds("wyrm", state_of(table, "Mira"), action, [("success", "success")]))
    script_dice([1])  # 1 + Rogue 3 + Stealth 2 = 6: a failure +2 can't save
    seq = act(alice, table, alice.submit, "Rogue check + Stealth")
    expect(gm.event(seq)).to_contain_text("vs DL 9")
    expect(alice.event(seq).get_by_role("button", name="Reroll (Fate)")).to_be_visible()
    expect(alice.event(seq).get_by_role("button", name="+2 (Fate)")).to_have_count(0)  # 8 is not past 9
    script_dice([4])  # the reroll

    # Fate: Alice asks for a reroll on that roll; the GM approves it on the request.
    req = act(alice, table, lambda: alice.event(seq).get_by_role("button", name="Reroll (Fate)").click(), "asks to spend Fate: reroll")
    expect(alice.event(req)).to_contain_text("Waiting for the GM")
    expect(alice.page.locator("#sheet")).to_contain_text("Fate request waiting for the GM")
    spent = act(gm, table, lambda: gm.event(req).get_by_role("button", name="Approve Mira's Fate request").click(), "Fate reroll of roll #1")
    expect(alice.event(spent).locator(".die")).to_have_count(len(payload(table, spent)["original_dice"]) + len(payload(table, spent)["new_dice"]))
    expect(alice.page.locator(".sheet-wyrm .stat").first).to_contain_text("1")
    expect(alice.event(seq).get_by_role("button", name="Reroll (Fate)")).to_have_count(0)

    # A Mage check against an opponent; +2 asked for, denied with a reason.
    alice.start("check:mage")
    composer(alice).get_by_label("Against").select_option("vs")
    composer(alice).get_by_label("Their attribute").fill("3")
    composer(alice).get_by_label("Their skills").fill("1")
    expect(composer(alice).locator(".odds-text")).to_contain_text("% success")
    script_dice([2, 4])  # theirs first: 2 + 3 + 2 = DL 7; hers 4 + Mage 2 = 6, which +2 makes 8
    seq = act(alice, table, alice.submit, "Mage check")
    req = act(alice, table, lambda: alice.event(seq).get_by_role("button", name="+2 (Fate)").click(), "+2 to the check")
    deny = gm.event(req).locator("form")
    deny.get_by_label("Reason (optional)").fill("not this time")
    act(alice, table, lambda: deny.get_by_role("button", name="Deny").click(), "GM denied the Fate request")
    expect(alice.page.locator("#log")).to_contain_text("not this time")

    # The GM grants Fate; Alice rolls damage (exploding 6s) with its distribution shown first.
    gm.tab("Mira")
    gm.start("grant_fate")
    composer(gm).get_by_label("Fate", exact=True).fill("2")
    act(alice, table, gm.submit, "was granted 2 Fate (now 3)")
    alice.start("damage")
    composer(alice).get_by_label("Dice", exact=True).fill("2")
    composer(alice).get_by_label("Bonus").fill("1")
    odds = get_system("wyrm").preview(state_of(table, "Mira"), {"type": "damage", "dice": 2, "bonus": 1})
    mean = sum(int(total) * p for total, p in odds.items())
    expect(composer(alice).locator(".odds-text")).to_contain_text(f"average {float(mean):.1f}")
    script_dice([3, 4])
    act(alice, table, alice.submit, "damage 2d6 + 1")
    # The GM rolls for an NPC, only for themself.
    script_dice([5])
    gm.roll("1d6+2", visibility="gm", label="guard captain")
    expect(alice.page.locator("#log li").last).to_contain_text("did something in secret")

    screenshots(seats, "wyrm", alice, gm, "check:rogue")


def test_tale_at_the_table(table_of, seats, script_dice):
    table = table_of("tale")
    table.create_character(table.alice, "Autopet", get_system("tale").example_sheet)
    gm, alice = seats("gm", "alice")
    expect(alice.page.locator("#sheet")).to_contain_text("Ride")

    # A straight roll by skill: Ride (deft + brawn + 1D = 8D) against 14.
    alice.start("roll:Ride")
    composer(alice).get_by_label("Target").fill("14")
    action = {"type": "straight_roll", "skill": "Ride", "target": 14}
    expect(composer(alice).locator(".odds-text")).to_have_text(
        expected_odds("tale", state_of(table, "Autopet"), action, [("success", "success")]))
    script_dice(dice_for(table, "tale", "Autopet", action, 2).remaining)  # 8D of 2s: 16, over 14
    seq = act(alice, table, alice.submit, "Ride 8D")
    assert (payload(table, seq)["total"], payload(table, seq)["success"]) == (16, True)

    # Against rolled challenge dice (a "hard" 7D).
    alice.start("roll:Jump")
    composer(alice).get_by_label("Against").select_option("dice")
    composer(alice).get_by_label("Challenge dice").select_option("7")
    expect(composer(alice).locator(".odds-text")).to_contain_text("% success")
    jump = {"type": "straight_roll", "skill": "Jump", "vs_pool": 7}
    script_dice(dice_for(table, "tale", "Autopet", jump, 3).remaining)  # her 8D and their 7D
    act(alice, table, alice.submit, "vs 7D")

    # An iterated contest, round by round from the log, held to its limit of three rounds
    # (scripted: every die a 3, her 7D against their 5D, so nobody is eliminated).
    alice.start("start_contest")
    composer(alice).get_by_label("Their dice").fill("5")
    composer(alice).get_by_label("Round limit").fill("3")
    composer(alice).get_by_label("At the limit").select_option("mine")
    composer(alice).get_by_label("What").fill("the chase")
    seq = act(alice, table, alice.submit, "started a contest: the chase")
    script_dice([3] * 12 * 3)
    for _ in range(3):
        assert state_of(table, "Autopet")["contest"]
        button = alice.event(seq).get_by_role("button", name=re.compile(r"^Next round"))
        expect(alice.event(seq).locator(".odds-inline")).to_contain_text("% win")
        seq = act(alice, table, button.click, "the chase, round")
    assert not state_of(table, "Autopet")["contest"]  # the limit ended it
    expect(alice.page.locator(".contest")).to_have_count(0)

    # Combat: portions chosen right on the log line, then ended; damage spread, then rest.
    alice.start("start_combat")
    composer(alice).get_by_label("Their dice").fill("4")
    seq = act(alice, table, alice.submit, "started a combat")
    # The GM fights a round for her from the sheet: the form names Autopet (it said "Your attack",
    # "you hit" to the GM too).
    gm.tab("Autopet")
    gm.start("combat_round")
    expect(composer(gm).get_by_label("Attack", exact=True)).to_be_visible()
    expect(composer(gm).locator(".odds-text")).to_contain_text("Autopet hits")
    expect(composer(gm)).not_to_contain_text("you")
    fight = alice.event(seq).locator("form")
    fight.get_by_label("Attack", exact=True).fill("4")
    fight.get_by_label("Defence", exact=True).fill("3")
    expect(fight.locator(".odds-text")).to_contain_text("Autopet hits")
    # Scripted, the path real dice once broke: she misses (4D + 3D of 1s), they hit her (2D + 2D of 6s).
    script_dice([1] * 7 + [6] * 4)
    seq = act(alice, table, lambda: fight.get_by_role("button", name="Fight").click(), "combat, round 1")
    assert payload(table, seq)["damage"] == {"to_me": 2, "to_them": 0}
    alice.event(seq).get_by_role("button", name="End the contest").click()
    act(alice, table, alice.event(seq).get_by_role("button", name="Yes, end the contest").click, "ended")
    gm.tab("Autopet")
    gm.start("take_damage")
    composer(gm).get_by_label("Dice of damage").fill("2")
    composer(gm).get_by_label("Reason").fill("fell off the wall")
    seq = act(alice, table, gm.submit, "takes 2D of damage")
    state = state_of(table, "Autopet")
    owed = state["unassigned_damage"]  # the fall (the combat's damage came off her combat pool)
    on_brawn = min(owed, state["sheet"]["characteristics"]["brawn"] - state["damage"]["brawn"])
    spread = alice.event(seq).locator("form")
    expect(spread).to_be_visible()
    spread.get_by_label(re.compile("^Brawn")).fill(str(on_brawn))
    spread.get_by_label(re.compile("^Skill")).fill(str(owed - on_brawn))
    act(alice, table, lambda: spread.get_by_role("button", name="Spread it").click(), "spread damage")
    expect(alice.page.locator("#sheet .attr-table").first).to_contain_text("−")
    act(alice, table, lambda: (alice.start("rest"), alice.submit()), "rested 1 day")

    screenshots(seats, "tale", alice, gm, "roll:Ride")


def test_mdt_at_the_table(table_of, seats, script_dice):
    table = table_of("mdt")
    table.create_character(table.alice, "Helena", get_system("mdt").example_sheet)
    gm, alice = seats("gm", "alice")
    expect(alice.page.locator(".mdt-grid")).to_contain_text("Presence")

    # A Presence test with her specialization, dangerous: the exact odds, then the dice.
    alice.start("test:presence")
    composer(alice).get_by_label("Difficulty").select_option("2")
    composer(alice).get_by_label("Specialization").select_option("Ocultismo")
    action = {"type": "test", "attribute": "presence", "specialization": "Ocultismo", "difficulty": 2}
    want = expected_odds("mdt", state_of(table, "Helena"), action,
                         [("success", "success"), ("exceptional", "exceptional"), ("dramatic_failure", "dramatic failure")])
    assert want == "81.3% success, 7.3% exceptional, 3.1% dramatic failure"
    expect(composer(alice).locator(".odds-text")).to_have_text(want)
    script_dice([7, 8, 9, 1, 2, 3])  # 1 + Presence 3 + Ocultismo 2 d10s: three successes, no 10 to roll again
    seq = act(alice, table, alice.submit, "Presence 3 + Ocultismo 2")
    expect(gm.event(seq).locator(".die")).to_have_count(6)
    expect(gm.event(seq)).to_contain_text("Success")

    # The GM starts a race; Alice rolls its rounds from the log until someone wins.
    gm.tab("Helena")
    gm.start("start_contest")
    composer(gm).get_by_label("Successes to win").fill("3")
    composer(gm).get_by_label("What").fill("the car chase")
    seq = act(alice, table, gm.submit, "race started: the car chase")
    expect(alice.page.locator(".contest")).to_contain_text("first to 3")
    # Scripted: her three 10s (six successes) against their four 1s win the race in one round.
    script_dice([10, 10, 10, 1, 1, 1, 1])
    button = alice.event(seq).get_by_role("button", name=re.compile(r"^Next round"))
    act(alice, table, button.click, "the car chase, round")
    assert not state_of(table, "Helena")["contest"]
    expect(alice.page.locator(".contest")).to_have_count(0)

    # A project, rolled from the sheet and again from the log; the GM says yes to something.
    gm.start("start_project")
    composer(gm).get_by_label("Project", exact=True).fill("Restore the tome")
    composer(gm).get_by_label("Successes needed").fill("20")
    act(alice, table, gm.submit, "project started: Restore the tome")
    roll = {"type": "project_roll", "project": "Restore the tome"}
    faces = dice_for(table, "mdt", "Helena", roll, 7).remaining  # a success on every die
    script_dice(faces * 2)
    seq = act(alice, table, lambda: (alice.start("project:Restore the tome"), alice.submit()), "Restore the tome, roll 1")
    again = alice.event(seq).get_by_role("button", name=re.compile("^Roll for Restore the tome"))
    seq = act(alice, table, again.click, "roll 2")
    assert payload(table, seq)["progress"] == 2 * len(faces)
    expect(alice.page.locator("#sheet progress")).to_have_count(1)
    gm.start("say_yes")
    composer(gm).get_by_label("Goal").fill("the door is unlocked")
    act(alice, table, gm.submit, "the GM says yes")

    screenshots(seats, "mdt", alice, gm, "test:presence")


def record_previews(seat):
    """From a reload on, every preview ``seat``'s page asks for is in ``window.previewsAsked`` (its
    action types), recorded as the page calls fetch: in step with what the page shows."""
    seat.context.add_init_script("""
      window.previewsAsked = [];
      const send = window.fetch;
      window.fetch = (url, options) => {
        if (String(url).endsWith("/preview")) window.previewsAsked.push(JSON.parse(options.body).action.type);
        return send(url, options);
      };""")
    seat.page.reload()
    seat.wait_live()


def test_a_finished_mdt_race_asks_for_no_odds_of_another_round(table_of, seats, script_dice):
    """A play-test's find: the round that won the race reached the page before its sheet, so the page
    offered "Next round" on it from the sheet of before and asked for its odds: a 422 (the race is over)
    in the browser's console. Choices on an event wait for a sheet as new as the event."""
    table = table_of("mdt")
    helena = table.create_character(table.alice, "Helena", get_system("mdt").example_sheet)
    table.command(table.gm, {"type": "start_contest", "character": helena.id, "attribute": "dexterity",
                             "vs_pool": 4, "target": 3, "label": "the car chase"})
    alice = seats("alice")
    record_previews(alice)
    start = head_seq(table)
    expect(alice.event(start).locator(".odds-inline")).to_contain_text("% win")  # the running race's odds
    asked = alice.page.evaluate("window.previewsAsked.length")
    # Scripted: her three 10s (six successes) against their four 1s win the race in one round.
    script_dice([10, 10, 10, 1, 1, 1, 1])
    seq = act(alice, table, alice.event(start).get_by_role("button", name=re.compile(r"^Next round")).click,
              "the car chase, round 1")
    expect(alice.page.locator(".contest")).to_have_count(0)  # her sheet after the race
    expect(alice.event(seq).get_by_role("button")).to_have_count(0)
    expect(alice.page.locator("#waiting")).to_be_hidden()
    assert alice.page.evaluate("window.previewsAsked")[asked:] == [], "odds asked for after the race"


def test_a_tale_contest_ended_by_its_last_round_asks_for_no_odds_of_another(table_of, seats, script_dice):
    """The same for Tale, where the round and the contest's end are two events of one command: the
    round's line came first, with the sheet of before, and asked for the odds of a round no one can roll."""
    table = table_of("tale")
    hero = table.create_character(table.alice, "Autopet", get_system("tale").example_sheet)
    table.command(table.alice, {"type": "start_contest", "character": hero.id, "characteristics": ["brawn", "deft"],
                                "vs_pool": 2, "rounds": 1, "at_time_out": "mine", "label": "the chase"})
    alice = seats("alice")
    record_previews(alice)
    start = head_seq(table)
    expect(alice.event(start).locator(".odds-inline")).to_contain_text("% win")
    asked = alice.page.evaluate("window.previewsAsked.length")
    contest = state_of(table, "Autopet")["contest"]
    script_dice([3] * (contest["mine"] + contest["theirs"]))  # every die a 3: nobody is knocked out
    seq = act(alice, table, alice.event(start).get_by_role("button", name=re.compile(r"^Next round")).click,
              "the chase, round 1")
    expect(alice.event(seq + 1)).to_contain_text("the chase ended after 1 round: won")
    expect(alice.page.locator(".contest")).to_have_count(0)
    expect(alice.event(seq).get_by_role("button")).to_have_count(0)
    assert alice.page.evaluate("window.previewsAsked")[asked:] == [], "odds asked for after the contest"


def dice_for(table, system: str, name: str, action: dict, face: int) -> ScriptedDice:
    """``face`` on every die ``action`` rolls for ``name`` now (the engine says how many)."""
    counted = ScriptedDice([face] * 60)
    get_system(system).decide(state_of(table, name), action, counted)
    return ScriptedDice([face] * len(counted.rolled))


def test_mdt_lines_name_the_character_on_every_page(table_of, seats):
    """A play-test's find: a line about Alice's character said "you" on Bob's page (dice groups,
    knocked-out counts, the race on her sheet). Every member reads these: they name the character."""
    table = table_of("mdt")
    helena = table.create_character(table.alice, "Helena", get_system("mdt").example_sheet)
    opposed = {"type": "opposed_test", "character": helena.id, "attribute": "wits", "vs_pool": 2,
               "opponent": "the guard"}
    seq = table.command(table.alice, opposed, dice=dice_for(table, "mdt", "Helena", opposed, 8)).events[0].seq
    table.command(table.gm, {"type": "start_contest", "character": helena.id, "attribute": "dexterity",
                             "vs_pool": 2, "target": 9, "label": "the chase"})
    round_ = {"type": "contest_round", "character": helena.id}
    race = table.command(table.alice, round_, dice=dice_for(table, "mdt", "Helena", round_, 8)).events[0].seq
    bob = seats("bob")
    expect(bob.event(seq).locator(".dice-label")).to_have_text(["Helena", "the guard"])
    expect(bob.event(race).locator(".dice-label")).to_have_text(["Helena", "them"])
    bob.tab("Helena")
    expect(bob.page.locator(".contest .race > span").first).to_have_text("Helena")
    for at in (seq, race):
        assert " you" not in f" {bob.event(at).inner_text().lower()}"


def test_tale_lines_name_the_character_on_every_page(table_of, seats):
    table = table_of("tale")
    hero = table.create_character(table.alice, "Autopet", get_system("tale").example_sheet)
    table.command(table.alice, {"type": "start_contest", "character": hero.id, "characteristics": ["brawn", "deft"],
                                "vs_pool": 2, "label": "the chase"})
    round_ = {"type": "iterated_round", "character": hero.id}
    seq = table.command(table.alice, round_, dice=dice_for(table, "tale", "Autopet", round_, 3)).events[0].seq
    bob = seats("bob")
    expect(bob.event(seq).locator(".dice-label")).to_have_text(["Autopet", "them"])
    expect(bob.event(seq).locator(".ev-detail")).to_contain_text("knocked out: Autopet 0, them 0")
    assert " you" not in f" {bob.event(seq).inner_text().lower()}"
    bob.tab("Autopet")
    expect(bob.page.locator(".contest .race > span").first).to_have_text("Autopet")


# --- opponents named from the table: their numbers from their own sheets (rules/contests.py) ----------

def test_wyrm_a_check_against_a_character_at_the_table(table_of, seats, script_dice):
    """An evening's play-test: an opposed check asked for the opponent's numbers by hand. Then a
    review's: their helping skills were typed by name; they are offered from the opponent's sheet."""
    table = table_of("wyrm")
    table.create_character(table.alice, "Mira", get_system("wyrm").example_sheet)
    brannoc = table.create_character(table.bob, "Brannoc", {"attributes": {"warrior": 4, "rogue": 1, "mage": 0},
                                                            "skills": [{"name": "Swords", "attribute": "warrior"},
                                                                       {"name": "Riddles", "attribute": "mage"}]})
    alice = seats("alice")
    alice.start("check:warrior")
    composer(alice).get_by_label("Against").select_option("character")
    expect(composer(alice).get_by_label("DL", exact=True)).to_be_hidden()
    composer(alice).get_by_label("Opponent at the table").select_option(str(brannoc.id))
    theirs = composer(alice).get_by_role("group", name="Their helping skills")
    expect(theirs.get_by_role("checkbox")).to_have_count(2)  # Brannoc's own, from his sheet
    expect(theirs).to_contain_text("Swords (Warrior)")
    expect(composer(alice).get_by_role("textbox", name="Their helping skills")).to_have_count(0)  # not typed
    theirs.get_by_label("Swords (Warrior)").check()
    expect(composer(alice).locator(".odds-text")).to_contain_text("% success")
    script_dice([3, 2])  # Brannoc's die, then Mira's
    seq = act(alice, table, alice.submit, "Warrior check")
    stored = payload(table, seq)
    assert (stored["opposition"]["attribute"], stored["opposition"]["skills"]) == (4, 1)  # Brannoc's sheet


def test_the_gm_s_own_npc_spends_fate_without_asking_the_gm(table_of, seats, script_dice):
    """A play-test's find: the GM's own NPC's roll said "Spend Fate (1 left, the GM approves)", and its
    form "Ask the GM": the GM is the one who approves, so the form says neither."""
    table = table_of("wyrm")
    table.command(table.gm, {"type": "create_character", "name": "Brannoc", "npc": True, "shown": "full",
                             "sheet": {**get_system("wyrm").example_sheet, "fate": 1}})
    gm, alice = seats("gm", "alice")
    gm.tab("Brannoc")
    gm.start("check:warrior")  # d6 + 1 against 6: a failure a reroll can save
    composer(gm).get_by_label("DL", exact=True).fill("6")
    script_dice([1])
    seq = act(gm, table, gm.submit, "Warrior check")
    follow = gm.event(seq).locator(".ev-follow")
    expect(follow).to_contain_text("Spend Fate (1 left):")
    expect(follow).not_to_contain_text("the GM approves")
    form = gm.start("spend_fate")
    expect(form.get_by_role("button", name="Spend Fate")).to_be_visible()
    expect(form.get_by_role("button", name="Ask the GM")).to_have_count(0)
    gm.page.keyboard.press("Escape")
    # A player's own roll still says who decides.
    table.create_character(table.alice, "Mira", {**get_system("wyrm").example_sheet, "fate": 1})
    alice.tab("Mira")
    alice.start("check:warrior")
    composer(alice).get_by_label("DL", exact=True).fill("6")
    script_dice([1])
    seq = act(alice, table, alice.submit, "Warrior check")
    expect(alice.event(seq).locator(".ev-follow")).to_contain_text("the GM approves")


def test_mdt_an_opposed_test_against_a_character_at_the_table(table_of, seats, script_dice):
    table = table_of("mdt")
    table.create_character(table.alice, "Helena", get_system("mdt").example_sheet)
    rival = table.create_character(table.bob, "Tomas", {**get_system("mdt").example_sheet,
                                                        "specializations": {"Intimidação": 1}})
    alice = seats("alice")
    alice.start("opposed_test")
    composer(alice).get_by_label("Attribute").select_option("presence")
    composer(alice).get_by_label("Against").select_option("character")
    expect(composer(alice).get_by_label("Their dice")).to_be_hidden()
    composer(alice).get_by_label("Opponent at the table").select_option(str(rival.id))
    composer(alice).get_by_label("Their specialization").fill("Intimidação")
    expect(composer(alice).locator(".odds-text")).to_contain_text("% win")
    script_dice([5] * (4 + 5))  # her 1 + Presence 3, his 5: no 10s to roll again
    seq = act(alice, table, alice.submit, "vs Tomas")
    assert payload(table, seq)["vs_pool"] == 1 + 3 + 1  # Tomas's Presence 3 + Intimidação 1, and 1


def test_mdt_the_gm_s_race_names_its_opponent_as_the_players_forms_do(table_of, seats):
    """A play-test's find: the GM's race form sent no opponent's name (the players' opposed test sends
    the one typed, or the character's named from the table): the race on the sheet was against "Them"."""
    table = table_of("mdt")
    helena = table.create_character(table.alice, "Helena", get_system("mdt").example_sheet)
    tomas = table.create_character(table.bob, "Tomas", get_system("mdt").example_sheet)
    gm, alice = seats("gm", "alice")
    gm.tab("Helena")
    gm.start("start_contest")
    composer(gm).get_by_label("Opponent", exact=True).fill("the hound")
    composer(gm).get_by_label("Successes to win").fill("3")
    seq = act(alice, table, gm.submit, "race started: contest, first to 3 successes (Dexterity vs the hound, 4 dice)")
    assert payload(table, seq)["opponent_name"] == "the hound"
    expect(alice.page.locator(".contest .race > span")).to_have_text(["Helena", "the hound"])
    table.command(table.gm, {"type": "end_contest", "character": helena.id})

    gm.start("start_contest")
    composer(gm).get_by_label("Against").select_option("character")
    expect(composer(gm).get_by_label("Opponent", exact=True)).to_be_hidden()  # the character's own name goes
    composer(gm).get_by_label("Opponent at the table").select_option(str(tomas.id))
    seq = act(alice, table, gm.submit, "vs Tomas")
    assert (payload(table, seq)["opponent_name"], payload(table, seq)["opponent"]) == ("Tomas", tomas.id)
    expect(alice.page.locator(".contest .race > span")).to_have_text(["Helena", "Tomas"])
    # Tomas's sheet names whom he races too (a play-test's find: "Them").
    alice.page.get_by_role("tab", name=re.compile("Tomas")).click()
    expect(alice.page.locator(".contest .race > span")).to_have_text(["Tomas", "Helena"])


def test_mdt_abandon_a_project_is_offered_only_for_a_project_the_character_has(table_of, seats):
    """A play-test's find: *Abandon a project* was offered to a character with no project (a text
    field to guess a name into). It is offered with a project, and names the sheet's projects."""
    table = table_of("mdt")
    helena = table.create_character(table.alice, "Helena", get_system("mdt").example_sheet)
    alice = seats("alice")
    abandon = alice.page.locator("#sheet-wrap button.act", has_text="Abandon a project")
    expect(alice.page.locator("#sheet-wrap button.act", has_text="Opposed test")).to_be_visible()
    expect(abandon).to_have_count(0)
    table.command(table.gm, {"type": "start_project", "character": helena.id, "name": "Restore the car",
                             "target": 5, "attribute": "intelligence"})
    expect(abandon).to_be_visible()
    abandon.click()
    expect(composer(alice).get_by_label("Project", exact=True)).to_have_value("Restore the car")
    composer(alice).get_by_label("Reason").fill("sold it")
    act(alice, table, alice.submit, "abandoned Restore the car at 0/5")
    expect(abandon).to_have_count(0)
    assert state_of(table, "Helena")["projects"] == {}


@pytest.mark.parametrize("system", ["mdt", "wyrm"])
def test_the_health_track_s_tools_are_offered_only_with_the_track(table_of, seats, system):
    """Found beside the play-test's *Abandon a project*: without the health track (a house rule, off
    by default) the GM was offered *Mark harm* and *Heal harm* from their declaration alone, and the
    server refused them ("plays without a health track"). health.js lays them out, with the track."""
    table = table_of(system)
    table.create_character(table.alice, "Helena", get_system(system).example_sheet)
    gm = seats("gm")
    tools = gm.page.locator("#actions .action-group.gm")
    expect(tools.get_by_role("button", name="Award points")).to_be_visible()
    expect(tools.get_by_role("button", name=re.compile("harm"))).to_have_count(0)
    table.command(table.gm, {"type": "configure_campaign", "settings": {"health.enabled": True}})
    expect(tools.get_by_role("button", name=re.compile("harm"))).to_have_count(2)


def autopet_against_grusk(table_of, seats, action: str):
    """Alice's Autopet about to start ``action`` against Bob's Grusk, named from the table."""
    table = table_of("tale")
    table.create_character(table.alice, "Autopet", get_system("tale").example_sheet)
    rival = table.create_character(table.bob, "Grusk", get_system("tale").example_sheet)
    alice = seats("alice")
    alice.start(action)
    composer(alice).get_by_label("Against").select_option("character")
    expect(composer(alice).get_by_label("Their dice")).to_be_hidden()
    composer(alice).get_by_label("Opponent at the table").select_option(str(rival.id))
    return table, rival, alice


def test_tale_a_contest_against_a_character_at_the_table(table_of, seats):
    table, rival, alice = autopet_against_grusk(table_of, seats, "start_contest")
    composer(alice).get_by_label("What").fill("arm wrestling")
    seq = act(alice, table, alice.submit, "started a contest: arm wrestling")
    contest = payload(table, seq)["contest"]
    assert (contest["theirs"], contest["opponent"]) == (4 + 3, rival.id)  # Grusk's brawn + skill, from his sheet
    assert state_of(table, "Grusk")["contest"]  # both sides are in it


def test_tale_a_combat_against_a_character_at_the_table(table_of, seats):
    table, rival, alice = autopet_against_grusk(table_of, seats, "start_combat")
    seq = act(alice, table, alice.submit, "started a combat")
    contest = payload(table, seq)["contest"]
    assert (contest["kind"], contest["theirs"], contest["opponent"]) == ("combat", 4 + 3, rival.id)  # brawn + skill
    assert contest["label"] == "Grusk"  # the combat is called by its opponent's name


def test_tale_a_contest_started_with_no_name_reads_right(table_of, seats):
    """Play-test: "What" left empty (it is optional) gave "started a contest: , 7D vs 6D",
    ", round 1: …" and a sheet headed "Iterated: "."""
    table = table_of("tale")
    hero = table.create_character(table.alice, "Autopet", get_system("tale").example_sheet)
    alice = seats("alice")
    started = act(alice, table, lambda: (alice.start("start_contest"), alice.submit()))
    expect(alice.event(started).locator(".what")).to_have_text(re.compile(r"^started a contest, \d+D vs 6D$"))
    expect(alice.page.locator(".contest h3")).to_have_text("Iterated contest")
    round_ = {"type": "iterated_round", "character": hero.id}
    seq = table.command(table.alice, round_, dice=dice_for(table, "tale", "Autopet", round_, 3)).events[0].seq
    expect(alice.event(seq).locator(".what")).to_have_text(re.compile(r"^the contest, round 1: \d+ vs \d+$"))
    ended = table.command(table.alice, {"type": "end_contest", "character": hero.id, "winner": "mine"}).events[0].seq
    expect(alice.event(ended).locator(".what")).to_contain_text(re.compile(r"^the contest ended after 1 round"))



@pytest.mark.parametrize("system, start, end, question", [
    ("tale", {"type": "start_contest", "characteristics": ["brawn", "deft"], "vs_pool": 2, "label": "the chase"},
     "End the contest", "End the contest (the chase) with nobody winning?"),
    ("mdt", {"type": "start_contest", "attribute": "dexterity", "vs_pool": 4, "target": 3},
     "End the race", "End the race before anyone reaches the target?"),
])
def test_ending_a_contest_from_the_log_asks_first(table_of, seats, system, start, end, question):
    """Play-test: "End the contest" under the roll ended it at once, undecided, for good, beside "Next round"."""
    table = table_of(system)
    hero = table.create_character(table.alice, "Autopet", get_system(system).example_sheet)
    starter = table.gm if system == "mdt" else table.alice  # an MdT race is one of the GM's tools
    seq = table.command(starter, {**start, "character": hero.id}).events[0].seq
    alice = seats("alice")
    alice.event(seq).get_by_role("button", name=end).click()
    asked = alice.event(seq).get_by_role("group", name=question)
    expect(asked).to_be_visible()
    asked.get_by_role("button", name="No, keep it going").click()
    expect(alice.event(seq).get_by_role("button", name=end)).to_be_visible()
    assert head_seq(table) == seq  # nothing was sent
    alice.event(seq).get_by_role("button", name=end).click()
    act(alice, table, alice.event(seq).get_by_role("button", name=f"Yes, {end.lower()}").click, "ended")
