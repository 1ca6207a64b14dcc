"""The GM's audit page in a real browser (Debian's Chromium through Playwright, a real daphne):
log in through the form, filter the log, open a sheet as of an event, compare two events,
read the chain's verdict, verify a session's dice; a player is turned away like an outsider."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from campaign.models import CharacterProjection, Event
from rules import get_system
from tests.browser.conftest import PHONE, SCREENSHOTS, WRITE_SCREENSHOTS, off_the_loop
from tests.campaign.test_audit import play

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_the_gm_audits_an_evening(table_of, seats, real_dice):
    table = table_of("tote")
    off_the_loop(play, table)
    campaign = table.campaign
    campaign.refresh_from_db()
    gm, alice = seats("gm", "alice")
    page = gm.page
    audit = f"{gm.base}/campaigns/{campaign.slug}/audit/"

    # A player is told the page is the GM's (the outsider's 404 is for those who are not members).
    response = alice.page.goto(audit)
    assert response.status == 403

    response = page.goto(audit)
    assert response.status == 200
    expect(page.get_by_role("heading", name=f"Audit: {campaign.name}")).to_be_visible()

    # The chain's verdict, computed on the way in.
    expect(page.locator("#chain-result")).to_contain_text(f"all {campaign.last_seq} events are linked and unaltered")

    # Filters: session 2's rolls only.
    page.get_by_label("Session", exact=True).select_option("2")
    page.get_by_label("Event type", exact=True).select_option("roll")
    page.get_by_role("button", name="Filter").click()
    rolls = list(Event.objects.filter(campaign=campaign, session=2, type="roll").values_list("seq", flat=True))
    rows = page.locator("#log tbody tr")
    expect(rows).to_have_count(len(rolls))
    expect(page.locator("#log-count")).to_contain_text(f"{len(rolls)} matching events")
    for seq in rolls:
        expect(page.locator(f"#seq-{seq}")).to_contain_text("roll")
    assert "session=2" in page.url and "type=roll" in page.url
    expect(page.get_by_label("Session", exact=True)).to_have_value("2")  # the form keeps its filter

    # The voided award shows as voided (filter by character).
    page.get_by_label("Event type", exact=True).select_option("")
    page.get_by_label("Character", exact=True).select_option(str(table.rival.id))
    page.get_by_role("button", name="Filter").click()
    voided = page.locator(f"#seq-{table.voided_seq}")
    expect(voided).to_have_class(re.compile(r"\bvoided\b"))
    expect(voided).to_contain_text("Voided in #")
    expect(voided).to_contain_text("wrong character")

    # From an event to Rival's sheet as of it.
    award = Event.objects.filter(campaign=campaign, character=table.rival, payload__points=2).get()
    page.locator(f"#seq-{award.seq}").get_by_role("link", name=f"as of #{award.seq}").click()
    expect(page.get_by_role("heading", name=f"Rival as of #{award.seq}")).to_be_visible()
    earned = CharacterProjection.objects.get(character=table.rival).state["points"]["earned"]
    expect(page.locator("#sheet tr", has_text="points.earned")).to_contain_text(str(earned))

    # The difference between the event before and this one.
    page.get_by_label("As of event #", exact=True).fill(str(award.seq - 1))
    page.get_by_label("Compare with event #", exact=True).fill(str(award.seq))
    page.get_by_role("button", name="Show").click()
    expect(page.get_by_role("heading", name=f"Changes to Rival from #{award.seq - 1} to #{award.seq}")).to_be_visible()
    change = page.locator("#diff tr", has_text="points.earned")
    expect(change.locator("td.old")).to_have_text(str(earned - 2))
    expect(change.locator("td.new")).to_have_text(str(earned))

    # Verify the dice of session 2 (played with the server's own dice) with its button.
    page.goto(audit + "?session=2")
    page.locator("#session-2").get_by_role("button", name="Verify dice").click()
    result = page.locator("#dice-result-2")
    expect(result).to_contain_text("match the seed revealed at the end")
    expect(page.get_by_label("Session", exact=True)).to_have_value("2")  # the button kept the filter
    expect(page.locator("svg.dice-chart").first).to_be_visible()
    expect(page.locator(".dice-answer")).not_to_be_empty()

    # A third evening with plenty of dice: the statistics have something to say.
    table.command(table.gm, {"type": "start_session"})
    table.command(table.alice, {"type": "roll", "notation": "100d6", "character": table.hero.id})
    table.command(table.bob, {"type": "roll", "notation": "60d10", "character": table.rival.id})
    table.command(table.gm, {"type": "roll", "notation": "100d20", "visibility": "gm"})
    table.command(table.gm, {"type": "end_session"})
    page.goto(audit + "?session=3")
    page.locator("#session-3").get_by_role("button", name="Verify dice").click()
    expect(page.locator("#dice-result-3")).to_contain_text("260 dice in 3 events match")
    expect(page.locator("svg.dice-chart")).to_have_count(3)
    expect(page.locator("figcaption", has_text="d6: 100 dice")).to_be_visible()

    # The session's export links, streamed by daphne, as each reader may see it.
    gm_lines = page.request.get(f"{gm.base}/api/campaigns/{campaign.slug}/export.jsonl?session=3").text().splitlines()
    alice_lines = alice.page.request.get(
        f"{gm.base}/api/campaigns/{campaign.slug}/export.jsonl?session=3").text().splitlines()
    assert len(gm_lines) == len(alice_lines) == 5
    assert '"notation": "100d20"' in gm_lines[3] and '"notation"' not in alice_lines[3]
    assert '"hidden": true' in alice_lines[3]
    csv_text = page.request.get(f"{gm.base}/api/campaigns/{campaign.slug}/export.csv?session=3").text()
    assert csv_text.startswith("seq,created_at,") and len(csv_text.splitlines()) == 6

    if WRITE_SCREENSHOTS:
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        page.set_viewport_size({"width": 1440, "height": 900})
        page.screenshot(path=str(SCREENSHOTS / "audit.png"), full_page=True)


def test_the_gm_awards_the_evening_from_the_advancement_page(table_of, seats, script_dice):
    """Real Chromium, a real daphne, the form's CSRF token and its answer: one click, two awards."""
    table = table_of("tote")
    script_dice([3] * 3 + [7] * 7 * 2 + [5] * 2)  # the second of play's sessions: 3d6+1, two 7d13kh6, 2d10
    off_the_loop(play, table)
    gm, alice = seats("gm", "alice")
    page = gm.page
    page.goto(f"{gm.base}/campaigns/{table.campaign.slug}/audit/advancement/")
    page.get_by_label("XP for Hero").fill("3")
    page.get_by_label("XP for Rival").fill("1")
    page.get_by_label("Reason").fill("the pass held")
    page.get_by_role("button", name="Award").click()
    expect(page.locator(".messages")).to_have_text("Awarded XP: 3 to Hero, 1 to Rival.")
    awards = off_the_loop(lambda: list(Event.objects.filter(campaign=table.campaign, payload__reason="the pass held")
                                       .values_list("character_id", "payload__points")))
    assert sorted(awards) == sorted([(table.hero.id, 3), (table.rival.id, 1)])
    # The table hears them like any award: Alice's page shows her hero's new event.
    expect(alice.page.locator("#log")).to_contain_text("the pass held")
    if WRITE_SCREENSHOTS:
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        page.set_viewport_size({"width": 1440, "height": 900})
        page.screenshot(path=str(SCREENSHOTS / "advancement.png"), full_page=True)


def test_the_audit_pages_fit_a_phone(table_of, seats):
    """Play-test: on a phone the audit page was laid out 769px wide, so the phone shrank all of it
    to fit: the screen-reader words of the log's links ("… 's sheet"), positioned outside the
    tables' sideways scroll, stretched the page past the tables' right edges."""
    table = table_of("wyrm")
    hero = table.create_character(table.alice, "Mira", get_system("wyrm").example_sheet)
    table.command(table.gm, {"type": "start_session"})
    for n in range(3):
        table.command(table.gm, {"type": "award_points", "character": hero.id, "points": 1, "reason": f"deed {n}"})
    table.command(table.gm, {"type": "end_session"})
    gm = seats("gm", viewport=PHONE)
    base = f"{gm.base}/campaigns/{table.campaign.slug}/audit/"
    for page in ("", "advancement/", f"sheet/?character={hero.id}"):
        gm.page.goto(base + page)
        expect(gm.page.locator("h1")).to_be_visible()
        assert gm.page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"], page or "audit"
