"""Members' own checks in the browser: the anchor line a session's end offers, checked on the verification
page, and the dice a log line shows checked against the dice rolled (static/talekeeper/trust.js)."""

from __future__ import annotations

import json
import re

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import head_seq
from tests.conftest import HANG

pytestmark = pytest.mark.browser


def test_the_anchor_line_is_copied_at_session_end_and_checked_on_the_verification_page(table_of, seats):
    table = table_of("tote")
    table.command(table.gm, {"type": "start_session"})
    alice = seats("alice")
    alice.context.grant_permissions(["clipboard-read", "clipboard-write"])
    table.command(table.gm, {"type": "end_session"})
    end = head_seq(table)
    line = alice.page.locator("#anchor-line")
    expect(line).to_contain_text(f"Talekeeper torn-road #{end} ")
    alice.page.get_by_role("button", name="Copy").click()
    expect(alice.page.locator("#anchor-status")).to_contain_text("Copied")
    copied = alice.page.evaluate("navigator.clipboard.readText()")
    assert copied == line.inner_text() and len(copied.split()) == 3 + 6

    alice.page.get_by_role("link", name="Verify the log and the dice").click()
    page = alice.page
    page.locator("#anchor-input").fill(f"  `{copied.upper().replace('TALEKEEPER', 'Talekeeper').replace('TORN-ROAD', 'torn-road')}`  ")
    page.get_by_role("button", name="Check the anchor").click()
    expect(page.locator("#verify-checks")).to_contain_text(f"Anchor: The log passes through #{end} as the anchor says.")
    # Its members do not sign (the suite's Table): the page makes no key and lists none.
    expect(page.locator("#keys-summary")).to_contain_text("do not sign their commands")
    # A log rewritten since: the anchor's hash is not the one at its seq any more.
    forged = copied[:-4] + ("0000" if not copied.endswith("0000") else "1111")
    page.locator("#anchor-input").fill(forged)
    page.get_by_role("button", name="Check the anchor").click()
    expect(page.locator("#verify-summary")).to_have_attribute("data-state", "bad")
    expect(page.locator(f"#verify-problems li[data-seq='{end}']")).to_contain_text(f"The log was rewritten up to #{end}")


def test_a_die_shown_that_was_not_rolled_is_bad_on_the_table(table_of, seats, script_dice):
    table = table_of("tote")
    bob = seats("bob")

    def forge(frame, to_page):  # a host's relay shows a 6 where the dice rolled a 1 (the chain rehashed by it)
        if frame.get("type") == "event" and frame["event"]["type"] == "roll":
            frame["event"]["payload"]["terms"][0]["dice"][0]["face"] = 6
        return frame

    bob.tamper_sockets(from_server=forge)
    bob.reconnect()
    script_dice([1])
    table.command(table.alice, {"type": "roll", "notation": "1d6"})
    seq = head_seq(table)
    mark = bob.event(seq).locator(".trust-mark")
    expect(mark).to_have_attribute("data-state", "bad")
    expect(mark).to_have_text("BAD")
    expect(bob.page.locator("#chain-problems")).to_contain_text("but the dice rolled (dice_log) are 1")


def test_two_members_sign_from_their_browsers_and_the_verification_page_checks_every_signature(table_of, seats,
                                                                                                real_dice):
    """Alice and Bob, each in a browser of their own: each page makes its key, registers it in the log
    (self-signed) and signs every command; the verification page checks every signature from the log."""
    from django.core.management import call_command

    from campaign.models import Event
    from tests.browser.conftest import off_the_loop

    table = table_of("tote", signed=True, keyed=("gm",))  # the GM acts from the test, with her own key
    table.command(table.gm, {"type": "start_session"})
    alice, bob = seats("alice", "bob")
    alice.roll("1d20", label="climb")
    expect(bob.page.locator("#log")).to_contain_text("climb")
    # Every member's table says each key added in a member's name, not only her own browser.
    expect(bob.page.locator("#log")).to_contain_text("added a key:")
    bob.roll("2d6", label="leap")
    expect(alice.page.locator("#log")).to_contain_text("leap")
    table.command(table.gm, {"type": "end_session"})

    def stored():
        keys = {e.actor.username: e.payload["key"] for e in
                Event.objects.filter(campaign=table.campaign, type="member_key_added").select_related("actor")}
        rolls = {e.actor.username: e.payload["signature"]["key"] for e in
                 Event.objects.filter(campaign=table.campaign, type="roll").select_related("actor")}
        call_command("verify_dice", table.campaign.slug, "--session", "1")  # raises on any problem
        return keys, rolls

    keys, rolls = off_the_loop(stored)
    assert rolls == {"alice": keys["alice"], "bob": keys["bob"]}  # each signed by the key her browser registered
    page = alice.page
    page.get_by_role("link", name="Verify the log and the dice").click()
    expect(page.locator("#verify-summary")).to_have_attribute("data-state", "ok", timeout=10000)
    checks = page.locator("#verify-checks")
    expect(checks).to_contain_text("of members' commands signed by their registered keys.")
    expect(checks).not_to_contain_text("from before members signed")
    expect(page.locator("#keys-summary")).to_contain_text("This device's key is registered")
    expect(page.locator("#key-list li")).to_have_count(1)
    # ...and the verification page lists every member's keys, as the log registered them.
    for member in ("alice", "bob", "gm"):
        expect(page.locator(f"#member-keys li[data-member='{member}']")).to_contain_text("added #")


def test_a_gm_roll_is_witnessed_by_the_players_table_and_shown_on_both_screens(table_of, seats, real_dice):
    """The GM and Alice, each in a browser of her own, in a campaign that witnesses the GM's rolls: the
    GM's roll is stored pending, Alice's table commits and then reveals by itself, and both screens show the roll
    decided with the die stored, witnessed by Alice (docs/fair-dice.md, "Witnessed rolls"). Real dice:
    the verification page recomputes the die from the revealed seed and the witness digest, which no
    scripted face would match."""
    from campaign.models import Event
    from tests.browser.conftest import off_the_loop

    table = table_of("tote", signed=True, keyed=("gm",))  # the GM starts the session from the test
    table.command(table.gm, {"type": "configure_campaign", "settings": {"witnessed_rolls": "gm"}})
    table.command(table.gm, {"type": "start_session"})
    gm, alice = seats("gm", "alice")
    gm.roll("1d20", label="ambush")
    for seat in (gm, alice):
        decided = seat.page.locator("#log li.ev-roll", has=seat.page.locator(".badge.witness"))
        expect(decided.locator(".badge.witness")).to_have_text("witnessed by alice")
        expect(seat.page.locator("#log li.ev-roll_pending .badge.witness")).to_have_attribute("data-state", "decided")

    def stored():
        pending = Event.objects.get(campaign=table.campaign, type="roll_pending")
        committed = Event.objects.select_related("actor").get(campaign=table.campaign, type="roll_committed")
        closed = Event.objects.get(campaign=table.campaign, type="commitments_closed")
        contribution = Event.objects.select_related("actor").get(campaign=table.campaign, type="roll_witnessed")
        decision = Event.objects.get(campaign=table.campaign, type="roll", payload__command_of=pending.seq)
        return pending.payload["witnesses"], (committed, closed), contribution, decision.payload

    witnesses, (committed, closed), contribution, decision = off_the_loop(stored)
    assert witnesses == [table.alice.pk] and contribution.actor.username == "alice"
    # Her table committed first, and revealed only once the commitments were closed with hers.
    assert committed.actor.username == "alice" and closed.payload["committed"] == [committed.seq]
    assert committed.seq < closed.seq < contribution.seq
    assert decision["witnessed_by"] == [contribution.seq] and [sides for sides, _ in decision["dice_log"]] == [20]
    face = decision["dice_log"][0][1]
    for seat in (gm, alice):
        decided = seat.page.locator("#log li.ev-roll", has=seat.page.locator(".badge.witness"))
        expect(decided.locator(".outcome")).to_have_text(f"= {face}")
        # The contribution's line is its declared sentence (campaign/platform_events.py), the pending roll a link.
        witnessed = seat.page.locator(f"#log li.ev-roll_witnessed a[href='#seq-{decision['command_of']}']")
        expect(witnessed).to_have_text(f"#{decision['command_of']}")
        expect(seat.page.locator("#log li.ev-roll_witnessed")).to_contain_text(f"witnessed #{decision['command_of']}")
    assert gm.page.locator("#chain-alarm").is_hidden() and alice.page.locator("#chain-alarm").is_hidden()
    # Once the session ends, the verification page checks the decision's dice (scheme v4) from the seed.
    table.command(table.gm, {"type": "end_session"})
    page = alice.page
    page.get_by_role("link", name="Verify the log and the dice").click()
    expect(page.locator("#verify-summary")).to_have_attribute("data-state", "ok", timeout=10000)
    checks = page.locator("#verify-checks")
    expect(checks).to_contain_text("1 witnessed roll decided with every contribution stored before it")
    expect(checks).to_contain_text("1 die matches its session's revealed seed")


def test_a_hidden_witnessed_roll_once_revealed_is_checked_on_the_verification_page(table_of, seats, real_dice):
    """Two sessions, each with a GM's roll only she reads, witnessed by Alice's table, revealed, the session
    ended. The first is honest; in the second the host's server wrote the die itself (the reveal, made from
    what it stored, matches its seal). Bob, who never read either sealed, opens the verification page: the
    revealed rolls are checked like any other (dice from the seed and the witness digest, contributions,
    commitments), the first passes and the second is BAD. Real dice: the page recomputes them from the seed."""
    from campaign.models import Event
    from rules.base import ScriptedDice
    from rules.notation import roll_event
    from tests.browser.conftest import off_the_loop
    from tests.campaign import host

    table = table_of("tote", signed=True, keyed=("gm",))
    table.command(table.gm, {"type": "configure_campaign", "settings": {"witnessed_rolls": "gm"}})
    gm, alice = seats("gm", "alice")

    def hidden_roll(session: int, forge: bool) -> int:
        table.command(table.gm, {"type": "start_session"})
        # Her page signs for the session it has read: the one just started.
        expect(gm.page.locator("#log li.ev-session_started")).to_have_count(session)
        gm.roll("1d20", visibility="gm", label=f"ambush {session}")
        expect(gm.page.locator("#log li.ev-roll_pending .badge.witness[data-state=decided]")).to_have_count(session)

        def decided():
            pending = Event.objects.filter(campaign=table.campaign, type="roll_pending").latest("seq")
            decision = Event.objects.get(campaign=table.campaign, type="roll", payload__command_of=pending.seq)
            assert pending.payload["witnesses"] == [table.alice.pk] and decision.visibility == "gm"
            assert len(decision.payload["witnessed_by"]) == 1  # Alice's table committed, then revealed
            if forge:  # a die the seed and the witness digest did not give, and what the rules make of it
                face = decision.payload["dice_log"][0][1] % 20 + 1
                outcome = roll_event(pending.payload["action"], ScriptedDice([face])).payload
                host.edit_payload(table.campaign, decision.seq, {**decision.payload, **json.loads(json.dumps(outcome)),
                                                                 "dice_log": [[20, face]]})
            return decision.seq

        seq = off_the_loop(decided)
        if not forge:  # a roll sealed from her: its call and close name a command she can't read, not a forged one
            expect(alice.page.locator("#chain-alarm")).to_be_hidden()
        table.command(table.gm, {"type": "reveal", "seq": seq})
        table.command(table.gm, {"type": "end_session"})
        return seq

    hidden_roll(1, forge=False)
    forged = hidden_roll(2, forge=True)
    bob = seats("bob")
    bob.page.get_by_role("link", name="Verify the log and the dice").click()
    page = bob.page
    expect(page.locator("#verify-summary")).to_have_attribute("data-state", "bad", timeout=10000)
    expect(page.locator("#verify-summary")).to_have_attribute("data-first-bad", str(forged))
    problems = page.locator("#verify-problems li")
    expect(problems).to_have_count(1)
    expect(problems.first).to_have_attribute("data-seq", str(forged))
    expect(problems.first).to_contain_text(f"#{forged}: die 1 (d20) shows ")
    checks = page.locator("#verify-checks")
    expect(checks.locator("li.ok")).to_contain_text(["Hash chain", "Reveals"])
    expect(checks.locator("li.bad")).to_have_text([re.compile(r"Dice: 2 dice match")])
    # Both read whole, neither skipped as sealed: the honest one checks out, contributions and commitments too.
    expect(checks).not_to_contain_text("sealed from you")
    expect(checks.locator("li.ok", has_text="Witnessed rolls")).to_contain_text(
        "2 witnessed rolls decided with every contribution stored before them")


def _alice_witnesses_the_gm(table_of, seats, **tamper):
    """A signed campaign witnessing its GM's rolls, in session, the GM's and Alice's tables open, every
    frame of Alice's socket passing through ``tamper`` (``tamper_sockets``' hooks). Returns (table, gm, alice)."""
    table = table_of("tote", signed=True, keyed=("gm",))
    table.command(table.gm, {"type": "configure_campaign", "settings": {"witnessed_rolls": "gm"}})
    table.command(table.gm, {"type": "start_session"})
    gm, alice = seats("gm", "alice")
    alice.tamper_sockets(**tamper)
    alice.reconnect()
    return table, gm, alice


def _answering(action_type, code, message, caught):
    """A ``from_page`` hook: the host answers Alice's ``action_type`` commands ``code`` and stores nothing
    (each one's roll appended to ``caught``)."""
    def hook(frame, to_page):
        if frame.get("type") == "command" and frame.get("action", {}).get("type") == action_type:
            caught.append(frame["action"]["roll"])
            to_page(json.dumps({"type": "error", "id": frame["id"], "code": code, "message": message}))
            return None
        return frame
    return hook


def _until_sent(page, caught, what):
    """Until the page's table has sent what the hook catches: its frames reach the route only while
    Playwright runs, hence the short waits. HANG bounds a hang: 10 s was not enough for a loaded machine
    running the whole suite."""
    for _ in range(HANG * 40):
        if caught:
            return
        page.wait_for_timeout(25)
    # What the table had checked when it gave up: a close it never passed leaves its bytes unrevealed.
    chain = page.evaluate("""() => { const c = window.talekeeperTable.chain;
        return JSON.stringify({broken: c.broken, problems: c.problems, checked: [...c.seen.keys()],
                               shown: window.talekeeperTable.seqs()}); }""")
    raise AssertionError(f"Alice's table never sent its {what}; its chain: {chain}")


def _host_decides(table):
    """The host lets the witnesses' time run out instead of waiting for them, and decides."""
    from campaign.actions import commands
    from tests.browser.conftest import off_the_loop
    from tests.campaign.test_witnessed_rolls import overdue

    off_the_loop(overdue, table)
    off_the_loop(commands.resolve_overdue, table.campaign.id)


def _alices_note(gm, alice):
    """The GM's roll decided unwitnessed, with the scripted 4, and no note on the GM's screen: the note
    on Alice's line of it."""
    decided = gm.page.locator("#log li.ev-roll", has=gm.page.locator(".badge.witness"))
    expect(decided.locator(".badge.witness")).to_have_text("unwitnessed")
    line = alice.page.locator("#log li.ev-roll", has=alice.page.locator(".badge.witness"))
    expect(line.locator(".outcome")).to_have_text("= 4")
    expect(gm.page.locator(".witness-note")).to_have_count(0)
    return line.locator(".witness-note")


def test_a_players_table_says_so_when_the_roll_is_decided_without_the_contribution_it_sent(table_of, seats,
                                                                                            script_dice):
    """Alice's table commits (which closes the roll's commitments), then reveals: the host's server answers
    her reveal "already decided" and decides the GM's roll without it: the log holds no trace of it, so
    every verifier passes; only Alice's own table knows, and says so."""
    dropped = []
    table, gm, alice = _alice_witnesses_the_gm(table_of, seats, from_page=_answering(
        "witness_roll", "roll_resolved", "That roll was already decided.", dropped))
    script_dice([4])
    gm.roll("1d20", label="ambush")
    _until_sent(alice.page, dropped, "contribution")  # and been told "decided"
    for seat in (gm, alice):  # her commitment closed the commitments: the roll's line says it is revealing
        expect(seat.page.locator("#log li.ev-roll_pending .badge.witness")).to_have_text("rolling… (revealing)")
    _host_decides(table)
    note = _alices_note(gm, alice)
    expect(note).to_contain_text("Your table sent its contribution")
    expect(note).to_contain_text("decided it without yours")


def test_a_players_table_says_so_when_its_commitment_is_answered_already_committed_and_not_stored(
        table_of, seats, script_dice):
    """The host's server answers Alice's commitment "already committed" (as if another of her devices had
    committed) but stores nothing, and decides the GM's roll without her: the close holds no commitment
    of hers, so her table does not take the answer's word for it, and says so on the roll's line."""
    refused = []
    table, gm, alice = _alice_witnesses_the_gm(table_of, seats, from_page=_answering(
        "witness_commit", "already_committed", "You already committed to that roll.", refused))
    script_dice([4])
    gm.roll("1d20", label="ambush")
    _until_sent(alice.page, refused, "commitment")
    _host_decides(table)  # it closes the commitments without hers, and decides
    expect(_alices_note(gm, alice)).to_contain_text(
        "Your table sent its commitment, and the roll was decided without it (the server answered: already_committed)")


def test_a_players_table_reveals_nothing_on_a_close_that_does_not_check_out(table_of, seats, script_dice):
    """The close reaches Alice's table altered (it no longer hashes up): her table raises the alarm and
    keeps its bytes, so the roll is decided without them; revealed on a close it had not checked, they
    would be the host's to grind against."""
    from tests.browser.conftest import off_the_loop

    def alter_close(frame, to_page):
        event = frame.get("event") or {}
        if frame.get("type") == "event" and event.get("type") == "commitments_closed":
            event["created_at"] = "2000-01-01T00:00:00.000000+00:00"
        return frame

    table, gm, alice = _alice_witnesses_the_gm(table_of, seats, from_server=alter_close)
    script_dice([4])
    gm.roll("1d20", label="ambush")
    expect(alice.page.locator("#chain-alarm")).to_be_visible()  # the close is checked, and fails
    expect(alice.page.locator("#log li.ev-roll_pending .badge.witness")).to_have_text("rolling… (revealing)")
    _host_decides(table)  # it waits no longer for a reveal
    for seat in (gm, alice):
        decided = seat.page.locator("#log li.ev-roll", has=seat.page.locator(".badge.witness"))
        expect(decided.locator(".badge.witness")).to_have_text("unwitnessed")
        expect(decided.locator(".outcome")).to_have_text("= 4")

    def reveals():
        from campaign.models import Event

        return Event.objects.filter(campaign=table.campaign, type="roll_witnessed").count()

    assert off_the_loop(reveals) == 0


def test_a_table_open_when_the_gm_switches_signing_on_signs_from_then_on(table_of, seats, real_dice):
    """A campaign made unsigned, Alice's table open: the GM's switch arrives, her page checks it and from
    then on registers her key and signs what she sends (the server takes nothing unsigned any more)."""
    from campaign.models import Event
    from tests.browser.conftest import off_the_loop

    table = table_of("tote")
    alice = seats("alice")
    alice.wait_live()
    alice.roll("1d6", label="before")
    expect(alice.page.locator("#log")).to_contain_text("before")
    off_the_loop(lambda: table.require_signing(keyed=("gm",)))
    expect(alice.page.locator("#log")).to_contain_text("made every member sign their commands from here on")
    alice.roll("1d6", label="after")
    expect(alice.page.locator("#log")).to_contain_text("after")
    expect(alice.page.locator("#log")).to_contain_text("added a key:")

    def stored():
        return {e.payload.get("label"): e.payload.get("signature") for e in
                Event.objects.filter(campaign=table.campaign, type="roll")}

    signatures = off_the_loop(stored)
    assert signatures["before"] is None and signatures["after"]["key"]


def test_a_sock_puppets_roll_for_the_gms_npc_is_bad_on_the_table_and_the_verification_page(table_of, seats, real_dice,
                                                                                         monkeypatch):
    """The host's own server lets Bob, a player it holds, roll for the GM's NPC: signed by his key, its dice
    the seed's, it is no command he could send (an NPC is the GM's; docs/fair-dice.md, "Who may send a
    command"). Alice's table marks it BAD as it arrives, and her verification page names it."""
    from campaign.actions import rolls
    from campaign.models import Character
    from tests.browser.test_chain import expect_first_bad

    table = table_of("tote", signed=True)
    ogre = table.command(table.gm, {"type": "create_character", "name": "Ogre", "npc": True, "shown": "full",
                                    "sheet": table.campaign.rules.example_sheet}).events[0].character_id
    table.command(table.gm, {"type": "start_session"})
    alice = seats("alice")
    with monkeypatch.context() as patched:
        patched.setattr(rolls, "access_character", lambda membership, character_id, read=None:
                        Character.objects.get(pk=character_id))
        seq = table.command(table.bob, {"type": "roll", "notation": "1d20", "character": ogre}).events[0].seq
    said = f"#{seq} is a command for character {ogre}, which its sender may not act for: an NPC is the GM's"
    mark = alice.event(seq).locator(".trust-mark")
    expect(mark).to_have_attribute("data-state", "bad")
    expect(alice.page.locator("#chain-problems")).to_contain_text(said)
    expect(alice.page.locator("#chain-alarm-title")).to_have_text("A member's command does not check out")
    table.command(table.gm, {"type": "end_session"})
    alice.page.goto(f"{alice.base}/campaigns/{table.campaign.slug}/verify/")
    expect_first_bad(alice.page, seq, said)


def test_a_key_added_in_her_name_is_not_vouched_for_until_her_browser_vouches_for_it(table_of, seats, real_dice):
    """docs/fair-dice.md, "Vouching for a new key": a key added in Alice's name while her browser's key is
    live is marked on every member's table and on her verification page; there she says it is hers, her
    browser's key endorses it, and the marks go."""
    import io

    from django.core.management import call_command

    from campaign.models import Event
    from tests.browser.conftest import off_the_loop
    from tests.signing import public_key

    table = table_of("tote", signed=True, keyed=("gm",))
    alice, bob = seats("alice", "bob")
    alice.roll("1d20", label="first")
    expect(bob.page.locator("#log")).to_contain_text("first")
    added = off_the_loop(lambda: table.register(table.alice, device="phone", label="alice's phone").events[0])
    line = bob.event(added.seq).locator(".trust-mark")
    expect(line).to_contain_text("not vouched for by her earlier keys")
    page = alice.page
    page.get_by_role("link", name="Verify the log and the dice").click()
    expect(page.locator("#verify-summary")).to_have_attribute("data-state", "ok", timeout=10000)
    expect(page.locator("#verify-checks")).to_contain_text("not vouched for by her earlier keys")
    phone = page.locator(f"#key-list li[data-key='{public_key('alice', 'phone')}']")
    expect(phone).to_contain_text("not added here")
    expect(phone).to_contain_text("not vouched for by her earlier keys")
    expect(page.locator(f"#member-keys .member-key[data-key='{public_key('alice', 'phone')}']")).to_contain_text(
        "not vouched for")
    phone.get_by_role("button", name="It is mine: the key alice's phone").click()
    expect(phone).not_to_contain_text("not added here", timeout=10000)
    expect(phone).not_to_contain_text("not vouched for")
    expect(page.locator("#verify-checks")).not_to_contain_text("not vouched for")
    expect(line).not_to_contain_text("not vouched for")  # bob's table checked the endorsement as it arrived

    def endorsed():
        event = Event.objects.get(campaign=table.campaign, type="member_key_endorsed")
        err = io.StringIO()
        call_command("verify_log", table.campaign.slug, stdout=io.StringIO(), stderr=err)
        return event.payload["key"], err.getvalue()

    key, warnings = off_the_loop(endorsed)
    assert key == public_key("alice", "phone") and "WARNING" not in warnings


def test_a_device_whose_own_key_is_not_vouched_for_offers_no_vouching(table_of, seats, real_dice):
    """docs/fair-dice.md, "Vouching for a new key": Alice's phone holds her first key, so the key her browser
    adds is not vouched for, and an endorsement it signed would vouch for nothing. Its verification page
    offers no "Vouch for it" for a later key of hers and says why, in a page axe still passes."""
    from campaign.models import Event
    from tests.browser.conftest import off_the_loop
    from tests.browser.test_pages import axe_problems
    from tests.signing import public_key

    table = table_of("tote", signed=True, keyed=("gm",))
    off_the_loop(lambda: table.register(table.alice, device="phone", label="alice's phone"))
    alice = seats("alice")
    alice.roll("1d20", label="first")
    expect(alice.page.locator("#log")).to_contain_text("first")
    off_the_loop(lambda: table.register(table.alice, device="tablet", label="alice's tablet"))
    page = alice.page
    page.get_by_role("link", name="Verify the log and the dice").click()
    expect(page.locator("#verify-summary")).to_have_attribute("data-state", "ok", timeout=10000)
    here = page.locator("#key-list li", has=page.locator(".badge", has_text="this device"))
    expect(here).to_contain_text("not vouched for by her earlier keys")
    tablet = page.locator(f"#key-list li[data-key='{public_key('alice', 'tablet')}']")
    expect(tablet).to_contain_text("not vouched for by her earlier keys")
    expect(tablet).to_contain_text("This device's key is not vouched for yet, so it can't vouch for this one")
    expect(tablet.get_by_role("button", name="Vouch for it")).to_have_count(0)
    assert axe_problems(page) == []
    tablet.get_by_role("button", name="It is mine: the key alice's tablet").click()
    expect(tablet).not_to_contain_text("not added here", timeout=10000)
    expect(tablet).to_contain_text("This device's key is not vouched for yet")
    expect(tablet.get_by_role("button", name="Vouch for it")).to_have_count(0)
    assert off_the_loop(lambda: Event.objects.filter(campaign=table.campaign, type="member_key_endorsed").count()) == 0
