"""Every page, at a desktop's 1280x800 and a phone's 390x844: axe-core finds no serious or
critical accessibility violation, nothing overflows the phone's width, and (opt-in) each
page's screenshot is written to docs/screenshots/ for the docs.

axe-core is vendored (tests/browser/vendor/axe.min.js, MPL-2.0, see vendor/README.md):
nothing is downloaded at test time. The data is deterministic: a played evening
(tests/campaign/test_audit.py ``play``, its two sessions) rolled with the server's own fair dice
from fixed seeds, so the screenshots change only when the pages do.
``TALEKEEPER_SCREENSHOTS=1 pytest tests/browser`` rewrites them (a plain run never writes tracked files).

Not scripted faces (the rest of the browser suite's, tests/browser/conftest.py): two of the pages
are the fair-dice checks (the verify page and a session's dice), which recompute every die from
its session's revealed seed and would report a scripted face as a die the seed does not give.
Dice from a fixed seed and fixed ids are the same every run all the same; the test checks that
no die of the evening came from the operating system (a roll outside a session).
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest
from playwright.sync_api import expect

from campaign import fairdice
from campaign.models import Event
from tests.browser.conftest import SCREENSHOTS, WRITE_SCREENSHOTS, Seat, off_the_loop
from tests.campaign.test_audit import play

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True, reset_sequences=True)]

AXE = (Path(__file__).parent / "vendor" / "axe.min.js").read_text()
DESKTOP = {"width": 1280, "height": 800}
PHONE = {"width": 390, "height": 844}
WIDTHS = {"desktop": DESKTOP, "phone": PHONE}


def seeded_evening(table, monkeypatch):
    """``play``'s evening, both sessions, with the server's own fair dice from fixed seeds and
    command ids (the faces ``play`` scripts for the first of its sessions are left out), so it verifies (the
    verify page checks every die) and rolls the same every run (``reset_sequences`` keeps the
    campaign's and the users' ids, inputs of the dice, the same too)."""
    counter = itertools.count(1)
    monkeypatch.setattr(fairdice.secrets, "token_hex", lambda n=32: f"{next(counter):0{2 * n}x}")
    ids = itertools.count(1)
    command = table.command
    table.command = lambda user, action, client_id=None, dice=None: command(user, action, f"evening-{next(ids)}")
    off_the_loop(play, table)
    table.command = command
    rolled = [e.payload for e in Event.objects.filter(campaign=table.campaign) if "dice_log" in e.payload]
    assert rolled and all(p.get("dice_scheme") == fairdice.SCHEME for p in rolled), "a die not from a fixed seed"
    return table


def axe_problems(page) -> list[str]:
    """axe-core's serious and critical violations on the page as it stands (WCAG 2.x A/AA rules and
    best practices), one line each: rule, impact, the first offending elements."""
    if not page.evaluate("typeof window.axe !== 'undefined'"):
        page.evaluate(AXE)  # through the debugger protocol: the page's CSP does not apply
    result = page.evaluate("""async () => {
      const r = await axe.run(document, { resultTypes: ["violations"] });
      return r.violations.filter((v) => v.impact === "serious" || v.impact === "critical")
        .map((v) => `${v.id} (${v.impact}): ${v.nodes.slice(0, 3).map((n) => n.target.join(" ")).join(" | ")}`);
    }""")
    return result


def overflow(page) -> list[str]:
    """Elements wider than the viewport (what a phone scrolls sideways for), outermost first."""
    return page.evaluate("""() => {
      const width = document.documentElement.clientWidth;
      const wide = [...document.querySelectorAll("body *")].filter((el) => {
        const box = el.getBoundingClientRect();
        if (!box.width || getComputedStyle(el).position === "fixed") return false;
        for (let p = el.parentElement; p && p !== document.body; p = p.parentElement) {
          const o = getComputedStyle(p).overflowX;
          if (o === "auto" || o === "scroll" || o === "hidden") return false;  // scrolls inside its own box
        }
        return box.right > width + 1 || (box.left < -1 && box.right > 0);  // wholly off-screen: a skip link
      });
      return wide.slice(0, 5).map((el) => el.outerHTML.slice(0, 100));
    }""")


def pages_of(table, base):
    slug = table.campaign.slug
    c = f"{base}/campaigns/{slug}"
    return {
        "gm": [("home", f"{base}/", "h1"), ("table", f"{c}/", "#conn[data-state=online]"),
               ("audit", f"{c}/audit/", "#chain-result"),
               ("audit-sheet", f"{c}/audit/sheet/?character={table.hero.id}&seq={table.voided_seq}", "h1"),
               ("audit-advancement", f"{c}/audit/advancement/?character={table.rival.id}", "h1"),
               ("session-dice", f"{c}/sessions/2/dice/", "h1"),
               ("verify", f"{c}/verify/", "#verify-summary[data-state=ok]"),
               ("settings", f"{c}/settings/", "h1"), ("profile", f"{base}/profile/", "h1")],
        "alice": [("player-table", f"{c}/", "#conn[data-state=online]"),
                  ("player-dice", f"{c}/sessions/2/dice/", "h1")],
        None: [("login", f"{base}/login/", "form"), ("signup", f"{base}/signup/", "form"),
               ("join", f"{base}/join/{table.campaign.invite_code}/", "h1"),
               ("password-reset", f"{base}/password/reset/", "h1")],
    }


@pytest.mark.parametrize("width", sorted(WIDTHS))
def test_every_page_passes_axe_and_fits_the_width(table_of, browser, server, monkeypatch, real_dice, width):
    table = seeded_evening(table_of("tote"), monkeypatch)
    viewport = WIDTHS[width]
    problems = {}
    for who, pages in pages_of(table, server).items():
        seat = Seat(browser, server, who or "visitor", viewport)
        try:
            if who:
                seat.login()
            for name, url, ready in pages:
                seat.page.goto(url)
                expect(seat.page.locator(ready).first).to_be_attached()
                found = axe_problems(seat.page)
                if width == "phone":
                    found += [f"wider than the phone: {html}" for html in overflow(seat.page)]
                if found:
                    problems[name] = found
                if WRITE_SCREENSHOTS:
                    seat.screenshot(f"{name}-{width}.png", full_page=False)
                    if name.endswith("table") and width == "phone":  # the log's panel: log, dice box and chat
                        seat.screenshot(f"{name}-log-{width}.png", at=".log-panel")
            assert not seat.errors, seat.errors
        finally:
            seat.close()
    assert not problems, json.dumps(problems, indent=1)


DARK_BACKGROUND = "rgb(22, 19, 28)"  # talekeeper.css's dark --bg


@pytest.mark.parametrize("width", sorted(WIDTHS))
def test_every_page_follows_the_dark_setting_and_passes_axe(table_of, browser, server, monkeypatch, real_dice, width):
    """Under the system's dark setting every page is dark (its body's computed background), not the
    table alone, and axe still finds no serious or critical problem (its contrast checks included);
    the error pages too: a GM-only page opened by a player (403) and a missing one (404)."""
    table = seeded_evening(table_of("tote"), monkeypatch)
    pages = pages_of(table, server)
    pages["alice"] = [*pages["alice"], ("forbidden", f"{server}/campaigns/{table.campaign.slug}/audit/", "h1")]
    pages[None] = [*pages[None], ("missing", f"{server}/campaigns/no-such-table/", "h1")]
    problems = {}
    for who, listed in pages.items():
        seat = Seat(browser, server, who or "visitor", WIDTHS[width])
        try:
            seat.page.emulate_media(color_scheme="dark")
            if who:
                seat.login()
            for name, url, ready in listed:
                seat.page.goto(url)
                expect(seat.page.locator(ready).first).to_be_attached()
                background = seat.page.evaluate("getComputedStyle(document.body).backgroundColor")
                found = [] if background == DARK_BACKGROUND else [f"a light page: {background}"]
                found += axe_problems(seat.page)
                if found:
                    problems[name] = found
                if WRITE_SCREENSHOTS and name in ("home", "audit", "verify", "login"):
                    seat.screenshot(f"{name}-dark-{width}.png", full_page=False)
        finally:
            seat.close()
    assert not problems, json.dumps(problems, indent=1)
