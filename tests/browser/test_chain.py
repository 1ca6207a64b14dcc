"""The log in players' hands: the table checks every event, keeps the head it verified, and
raises the alarm when the server's log does not extend it; the verification page checks the
chain, the dice and the reveals in the browser; receipts download from the table.

The checks run in the page (static/talekeeper/chain.js and verify.js); these tests compare
them with the server's Python (campaign.canonical, campaign.eventlog, campaign.fairdice).
"""

from __future__ import annotations

import base64
import hashlib
import json

import pytest
from playwright.sync_api import expect

from campaign.canonical import jcs
from campaign.checkpoints import message, signature_ok, signing_key
from campaign.eventlog import canonical_json
from campaign.fairdice import derive_face, derive_nonce
from campaign.models import GENESIS_HASH, Event
from rules import ScriptedDice
from tests.browser.conftest import SLUG, off_the_loop

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

HEAD_KEY = f"talekeeper:head:{SLUG}"


def newest(table) -> dict:
    event = Event.objects.filter(campaign=table.campaign).order_by("-seq").first()
    return {"seq": event.seq, "hash": event.hash}


def stored_head(seat) -> dict | None:
    return seat.page.evaluate(f"JSON.parse(localStorage.getItem('{HEAD_KEY}'))")


def reload_with_stored_head(seat, head: dict):
    seat.page.evaluate(f"localStorage.setItem('{HEAD_KEY}', JSON.stringify({json.dumps(head)}))")
    seat.page.reload()
    seat.wait_live()


def test_the_table_keeps_the_verified_head_and_sounds_the_alarm_when_the_log_does_not_extend_it(table_of, seats):
    table = table_of("tote")
    table.command(table.alice, {"type": "roll", "notation": "2d6"},
                  dice=ScriptedDice([2, 3]))  # outside a session: not verifiable
    alice = seats("alice")
    head = newest(table)
    alarm = alice.page.locator("#chain-alarm")
    expect(alice.page.locator("#chain-head")).to_have_text(f"verified to #{head['seq']} · {head['hash'][:12]}")
    assert stored_head(alice) == head
    expect(alarm).to_be_hidden()
    expect(alice.event(head["seq"]).locator(".badge.unverifiable")).to_have_text("not verifiable")

    # An honest reload: the log extends the stored head, no alarm.
    alice.page.reload()
    alice.wait_live()
    expect(alice.page.locator("#chain-head")).to_contain_text(f"verified to #{head['seq']}")
    expect(alarm).to_be_hidden()

    # The event at the stored seq is not the one this browser verified (rewritten, rehashed).
    reload_with_stored_head(alice, {"seq": head["seq"], "hash": "f" * 64})
    expect(alarm).to_be_visible()
    expect(alarm).to_have_attribute("role", "alert")
    expect(alarm.locator("li")).to_contain_text(f"verified #{head['seq']} as ffffffffffff")
    expect(alice.page.locator("#chain-head")).to_have_text(f"log problem at #{head['seq']}")
    assert stored_head(alice) == {"seq": head["seq"], "hash": "f" * 64}  # the evidence is kept, not overwritten
    assert alice.seqs() == list(range(1, head["seq"] + 1))  # the page shows the log; no restart from 0

    # The server's log is shorter than the one this browser verified (truncated).
    reload_with_stored_head(alice, {"seq": head["seq"] + 3, "hash": "e" * 64})
    expect(alarm).to_be_visible()
    expect(alarm.locator("li")).to_contain_text(f"ends at #{head['seq']}")
    expect(alarm.locator("li")).to_contain_text(f"verified it up to #{head['seq'] + 3}")


def test_a_member_shown_another_log_is_warned(table_of, seats):
    table = table_of("tote")
    alice, bob = seats("alice", "bob")
    head = newest(table)
    expect(bob.page.locator("#chain-head")).to_contain_text(f"verified to #{head['seq']}")
    # Each table reports the head it verified; presence passes it on to the others.
    expect(bob.page.locator("#members li", has_text="alice")).to_have_attribute("data-head-hash", head["hash"])
    expect(alice.page.locator("#members li", has_text="bob")).to_have_attribute("data-head-seq", str(head["seq"]))
    # A server showing Alice another log relays the head her browser verified there: presence
    # comes through the server, so here it is the server's frame that says so (a forged one).
    forged = [{"username": "alice", "role": "player", "head": {"seq": head["seq"], "hash": "d" * 64}},
              {"username": "bob", "role": "player", "head": head}]
    bob.page.evaluate("""(members) => window.talekeeperTable.socket.dispatchEvent(
        new MessageEvent("message", {data: JSON.stringify({type: "presence", members})}))""", forged)
    alarm = bob.page.locator("#chain-alarm")
    expect(alarm).to_be_visible()
    expect(alarm.locator("h2")).to_have_text("Another member is shown a different log")
    expect(alarm.locator("li")).to_contain_text(f"alice's log differs from yours at #{head['seq']}")


def test_a_member_who_reports_a_false_head_alarms_nobody(table_of, seats):
    """Any member's script could send a head this log does not have, and every other page said "the
    server is showing you different logs". The server checks it now: refused, and never relayed."""
    table = table_of("tote")
    alice, bob = seats("alice", "bob")
    head = newest(table)
    expect(bob.page.locator("#members li", has_text="alice")).to_have_attribute("data-head-hash", head["hash"])
    alice.page.evaluate("""(head) => window.talekeeperTable.socket.send(JSON.stringify({type: "head", head}))""",
                        {"seq": head["seq"], "hash": "d" * 64})
    # The sender is told; the refusal is decided before anything is relayed, so from here on nothing can be.
    expect(alice.page.locator("#notice")).to_contain_text(f"Event #{head['seq']} of this log has another hash")
    expect(bob.page.locator("#chain-alarm")).to_be_hidden()
    expect(bob.page.locator("#members li", has_text="alice")).to_have_attribute("data-head-hash", head["hash"])


AWKWARD = [
    1e-7, 1e21, 1e-6, 123e-20, 0.1 + 0.2, 5e-324, 1.7976931348623157e308, -0.0, 1.0, 100, -7, 2**53, 0.5, 1e16,
    "héllo \u2028 wörld", "tab\tnew\nline \"quoted\" back\\slash \u0000 \u001f \u007f", "😀 emoji", "",
    {"b": 1, "a": [True, False, None], "é": {"z": 0.375, "\U0001F600": 1, "\uffff": 2, "A": "x"}},
    [[], {}, [{}]],
]


def test_the_pages_jcs_and_sha256_agree_with_the_servers_python(table_of, seats):
    table_of("tote")
    alice = seats("alice")
    got = alice.page.evaluate("""async (values) => {
      const c = await import("/static/talekeeper/chain.js");
      const hex = (bytes) => c.toHex(bytes);
      const out = [];
      for (const value of values) {
        const text = c.jcs(value);
        out.push({ jcs: text, webcrypto: hex(await c.webCrypto.sha256(c.utf8(text))),
                   pure: hex(await c.pure.sha256(c.utf8(text))) });
      }
      return out;
    }""", AWKWARD)
    for value, page in zip(AWKWARD, got):
        want = jcs(value)
        assert page["jcs"].encode("utf-8") == want, value
        assert page["webcrypto"] == page["pure"] == hashlib.sha256(want).hexdigest(), value

    # Format 1 (old events): Python's own json text, floats such as 1.0 and 1e-07 included.
    old = {"odds": {"success": {"p": "1/1", "float": 1.0}, "tiny": {"float": 1e-07}}, "big": 1e16, "n": 3, "é": "ü",
           "\U0001F600": 1, "\uffff": 2}
    text = json.dumps(old)
    assert alice.page.evaluate("""async (text) => {
      const c = await import("/static/talekeeper/chain.js");
      return c.pythonJSON(c.parseJSON(text));
    }""", text) == canonical_json(old).decode("utf-8")

    # HMAC and the dice: the page derives the same faces and nonce as the server.
    seed = "ab" * 32
    faces = alice.page.evaluate("""async (seed) => {
      const c = await import("/static/talekeeper/chain.js");
      const faces = [];
      for (const sides of [2, 6, 10, 20, 100, 3]) for (let i = 0; i < 4; i++) faces.push(await c.deriveFace(seed, 7, 2, 3, "cmd-x", i, sides));
      const key = c.utf8("key");
      return { faces, nonce: await c.deriveNonce(seed, 7, 2, 3, "cmd-x"),
               hmacs: [c.toHex(await c.webCrypto.hmac(key, c.utf8("msg"))), c.toHex(await c.pure.hmac(key, c.utf8("msg")))] };
    }""", seed)
    assert faces["faces"] == [derive_face(seed, 7, 2, 3, "cmd-x", i, sides) for sides in (2, 6, 10, 20, 100, 3)
                              for i in range(4)]
    assert faces["nonce"] == derive_nonce(seed, 7, 2, 3, "cmd-x")
    import hmac as hmac_lib
    assert faces["hmacs"] == [hmac_lib.new(b"key", b"msg", hashlib.sha256).hexdigest()] * 2


def test_the_table_checks_the_log_without_webcrypto(table_of, seats):
    """A plain-http LAN origin has no crypto.subtle: the vendored SHA-256 does the same work."""
    table = table_of("tote")
    table.command(table.alice, {"type": "roll", "notation": "2d6", "visibility": "secret"},
                  dice=ScriptedDice([2, 3]))  # sealed from bob
    bob = seats("bob")
    bob.context.add_init_script("Object.defineProperty(Crypto.prototype, 'subtle', { get: () => undefined })")
    bob.page.evaluate("localStorage.clear()")
    bob.page.reload()
    bob.wait_live()
    head = newest(table)
    assert bob.page.evaluate("""async () => (await import("/static/talekeeper/chain.js")).webCrypto""") is None
    expect(bob.page.locator("#chain-head")).to_have_text(f"verified to #{head['seq']} · {head['hash'][:12]}")
    reload_with_stored_head(bob, {"seq": head["seq"], "hash": "f" * 64})
    expect(bob.page.locator("#chain-alarm")).to_be_visible()


def forged_hash(ev: dict, campaign_id: int) -> str:
    """A format-2 event's hash from its prev_hash and visible body, as a forger computes it (from the contract)."""
    digest = ev["body_digest"] if ev.get("hidden") else hashlib.sha256(jcs(
        {"type": ev["type"], "version": ev["version"], "character": ev["character"], "payload": ev["payload"]})).hexdigest()
    ev["body_digest"] = digest
    envelope = {"format": 2, "campaign": campaign_id, "seq": ev["seq"], "actor": ev["actor_id"], "session": ev["session"],
                "scene": ev["scene"], "visibility": ev["visibility"], "created_at": ev["created_at"], "body": digest}
    return hashlib.sha256(ev["prev_hash"].encode("ascii") + jcs(envelope)).hexdigest()


def rehash(events: list[dict], campaign_id: int, start: int) -> None:
    """Recompute the chain from seq ``start`` on, so every link and hash after a change holds again."""
    prev = events[start - 2]["hash"] if start > 1 else GENESIS_HASH
    for ev in events[start - 1:]:
        ev["prev_hash"] = prev
        ev["hash"] = prev = forged_hash(ev, campaign_id)


def test_the_table_catches_a_forged_reveal(table_of, seats):
    table = table_of("tote")
    table.command(table.gm, {"type": "start_session"})
    hidden = table.command(table.gm, {"type": "roll", "notation": "2d20", "visibility": "gm"},
                           dice=ScriptedDice([11, 17])).events[0].seq
    alice = seats("alice")
    expect(alice.event(hidden)).to_contain_text("sealed: ")

    # From now on the server lies to Alice's page: the reveal it sends shows another total, rehashed
    # so the reveal event itself hashes up.
    def forge(ws):
        server = ws.connect_to_server()

        def from_server(message):
            frame = json.loads(message)
            if frame.get("type") == "event" and frame["event"]["type"] == "roll_revealed":
                ev = frame["event"]
                ev["payload"]["body"]["payload"]["total"] += 1
                ev["hash"] = forged_hash(ev, table.campaign.id)
            ws.send(json.dumps(frame))

        server.on_message(from_server)

    alice.route_sockets(forge)
    alice.page.reload()
    alice.wait_live()
    expect(alice.page.locator("#chain-alarm")).to_be_hidden()
    reveal = table.command(table.gm, {"type": "reveal", "seq": hidden}).events[0].seq
    alarm = alice.page.locator("#chain-alarm")
    expect(alarm).to_be_visible()
    expect(alarm.locator(f"li[data-seq='{reveal}']").first).to_contain_text(
        f"Forged reveal: the body revealed in #{reveal} is not the one #{hidden} was sealed with")


def test_the_verification_page_passes_a_finished_session_and_names_a_tampered_seq(table_of, seats, real_dice):
    table = table_of("tote")
    table.command(table.gm, {"type": "start_session"})
    table.command(table.alice, {"type": "roll", "notation": "3d6"})
    hidden = table.command(table.gm, {"type": "roll", "notation": "2d20", "visibility": "gm"}).events[0].seq
    rolled = table.command(table.bob, {"type": "roll", "notation": "4d8"}).events[0].seq
    table.command(table.gm, {"type": "reveal", "seq": hidden})
    # Alice's blind roll, revealed: its nonce is drawn, not derived (docs/fair-dice.md, section 4).
    blind = table.command(table.alice, {"type": "roll", "notation": "1d6", "visibility": "gm"}).events[0].seq
    table.command(table.gm, {"type": "reveal", "seq": blind})
    table.command(table.alice, {"type": "roll", "notation": "1d4", "visibility": "secret"})  # stays sealed from bob
    # An NPC the GM keeps hidden: sealed from Bob too, and no roll (the page must not call it one).
    table.command(table.gm, {"type": "create_character", "npc": True, "name": "The Spy", "quick": {"rating": 2}})
    table.command(table.gm, {"type": "end_session"})
    bob = seats("bob")
    page = bob.page
    page.get_by_role("link", name="Verify the log and the dice").click()
    summary = page.locator("#verify-summary")
    expect(summary).to_have_attribute("data-state", "ok", timeout=10000)
    expect(page.locator("#verify-checks")).to_contain_text("Dice:")
    expect(page.locator("#verify-checks")).to_contain_text(
        "session 1: 10 dice, 2 events sealed from you (not checked: you may not see them)")
    expect(page.locator("#verify-checks")).to_contain_text("2 reveals checked")

    # A server that changes one of Bob's dice and rehashes the whole chain after it: the chain
    # hashes up, but the die no longer comes from the seed (and the head Bob verified at the table,
    # and the session end's receipt, no longer match).
    campaign_id = table.campaign.id

    def tamper(route):
        body = route.fetch().json()
        events = body["events"]
        if events and events[0]["seq"] == 1:
            target = events[rolled - 1]
            sides, face = target["payload"]["dice_log"][0]
            target["payload"]["dice_log"][0] = [sides, face % sides + 1]
            rehash(events, campaign_id, rolled)
        route.fulfill(json=body)

    page.route("**/api/campaigns/*/events*", tamper)
    page.get_by_role("button", name="Verify again").click()
    expect(summary).to_have_attribute("data-state", "bad")
    expect(summary).to_have_attribute("data-first-bad", str(rolled))
    expect(summary).to_contain_text(f"the first bad event is #{rolled}")
    problems = page.locator(f"#verify-problems li[data-seq='{rolled}']")
    expect(problems.filter(has_text="the seed gives")).to_have_count(1)
    # The dice shown (the roll's terms) are no longer the dice_log's either.
    expect(problems.filter(has_text="but the dice rolled (dice_log) are")).to_have_count(1)


def test_the_verification_page_counts_one_in_the_singular(table_of, seats, real_dice):
    """It said "1 dice match their sessions' revealed seeds" (and "1 reveals checked against the rolls they unseal")."""
    table = table_of("tote")
    table.command(table.gm, {"type": "start_session"})
    hidden = table.command(table.gm, {"type": "roll", "notation": "1d6", "visibility": "gm"}).events[0].seq
    table.command(table.gm, {"type": "reveal", "seq": hidden})
    table.command(table.gm, {"type": "end_session"})
    page = seats("bob").page
    page.get_by_role("link", name="Verify the log and the dice").click()
    expect(page.locator("#verify-summary")).to_have_attribute("data-state", "ok", timeout=10000)
    checks = page.locator("#verify-checks")
    expect(checks).to_contain_text("Dice: 1 die matches its session's revealed seed (session 1: 1 die).")
    expect(checks).to_contain_text("Reveals: 1 reveal checked against the roll it unseals.")
    expect(checks).to_contain_text("Receipts: 1 signed checkpoint (0 from your files); the log extends it.")


def test_seeds_with_a_no_break_space_and_emoji_verify_in_the_browser(table_of, seats, real_dice):
    """Seeds follow the one text rule (docs/fair-dice.md): the page hashes them as the server did
    (JCS, UTF-8) at the table and on the verification page, and the session's dice still check."""
    from tests.campaign.test_fairdice import TEXT_SEEDS

    table = table_of("tote")
    table.command(table.gm, {"type": "start_session"})
    for seed in TEXT_SEEDS:
        table.command(table.bob, {"type": "add_seed", "seed": seed})
    table.command(table.alice, {"type": "roll", "notation": "3d6"})
    table.command(table.gm, {"type": "end_session"})
    page = seats("bob").page
    page.get_by_role("link", name="Verify the log and the dice").click()
    expect(page.locator("#verify-summary")).to_have_attribute("data-state", "ok", timeout=10000)
    expect(page.locator("#verify-checks")).to_contain_text(
        "Dice: 3 dice match their sessions' revealed seeds (session 1: 3 dice).")


def test_a_receipt_downloads_from_the_table_signed_by_the_server(table_of, seats):
    table = table_of("tote")
    alice = seats("alice")
    head = newest(table)
    with alice.page.expect_download() as download:
        alice.page.get_by_role("button", name="Get a signed receipt").click()
    receipt = json.loads(open(download.value.path()).read())
    assert download.value.suggested_filename == f"talekeeper-{SLUG}-receipt-{head['seq']}.json"
    assert {k: receipt[k] for k in ("campaign", "seq", "hash")} == {"campaign": SLUG, **head}
    assert off_the_loop(signature_ok, receipt)
    expect(alice.page.locator("#receipt-list li")).to_have_count(1)
    expect(alice.page.locator("#receipt-list")).to_contain_text(f"#{head['seq']} · {head['hash'][:12]}")
    expect(alice.page.locator("#chain-alarm")).to_be_hidden()

    # The verification page checks receipts the member kept, even ones the server no longer lists.
    page = alice.page
    page.goto(f"{alice.base}/campaigns/{SLUG}/verify/")
    summary = page.locator("#verify-summary")
    expect(summary).to_have_attribute("data-state", "ok", timeout=10000)
    page.locator("#verify-receipts").set_input_files(download.value.path())
    expect(page.locator("#verify-checks")).to_contain_text("2 signed checkpoints (1 from your files)")
    expect(summary).to_have_attribute("data-state", "ok")
    forged = {**receipt, "hash": "0" * 64}
    page.locator("#verify-receipts").set_input_files(
        files=[{"name": "forged.json", "mimeType": "application/json", "buffer": json.dumps(forged).encode()}])
    expect(summary).to_have_attribute("data-state", "bad")
    expect(page.locator(f"#verify-problems li[data-seq='{head['seq']}']")).to_contain_text("not signed by the server's key")


def test_an_old_format_1_log_still_verifies_in_the_browser(table_of, seats, monkeypatch):
    from rules import get_system

    monkeypatch.setattr("campaign.eventlog.store.CURRENT_FORMAT", 1)  # appended as before format 2 existed
    table = table_of("tote")
    hero = table.create_character(table.alice, "Ayasha", get_system("tote").example_sheet)
    for target in (2, 12):  # odds of exactly 1.0 and small floats: Python writes them its own way
        table.command(table.alice, {"type": "skill_test", "skill": "Strike", "target": target, "character": hero.id},
                      dice=ScriptedDice([2, 4, 5]))
    events = list(Event.objects.filter(campaign=table.campaign).order_by("seq"))
    assert {e.format for e in events} == {1}
    assert any(":1.0" in canonical_json(e.payload).decode() for e in events)
    alice = seats("alice")
    expect(alice.page.locator("#chain-head")).to_have_text(f"verified to #{events[-1].seq} · {events[-1].hash[:12]}")
    expect(alice.page.locator("#chain-alarm")).to_be_hidden()
    alice.page.goto(f"{alice.base}/campaigns/{SLUG}/verify/")
    expect(alice.page.locator("#verify-summary")).to_have_attribute("data-state", "ok", timeout=10000)
    expect(alice.page.locator("#verify-checks")).to_contain_text(f"{len(events)} events, {len(events)} hashes recomputed")


def test_earlier_events_paged_in_are_checked_too(table_of, seats):
    from tests.conftest import Table

    table = table_of("tote")
    off_the_loop(lambda: [Table.command(table, table.bob, {"type": "roll", "notation": "1d20", "label": f"roll {i}"},
                                        dice=ScriptedDice([i % 20 + 1])) for i in range(205)])
    alice = seats("alice")
    target = alice.seqs()[0] - 1  # the page starts with the newest 200; this one comes on demand

    def tamper(route):
        body = route.fetch().json()
        for ev in body["events"]:
            if ev["seq"] == target:
                ev["payload"]["label"] = "forged"
        route.fulfill(json=body)

    alice.page.route("**/api/campaigns/*/events*", tamper)
    alice.page.get_by_role("button", name="Show earlier events").click()
    expect(alice.event(target)).to_contain_text("forged")
    expect(alice.page.locator(f"#chain-alarm li[data-seq='{target}']")).to_contain_text(f"#{target} was altered")


def expect_first_bad(page, seq: int, problem: str) -> None:
    """The verification page says the log does not check out, first at ``seq``, for ``problem``."""
    summary = page.locator("#verify-summary")
    expect(summary).to_have_attribute("data-state", "bad", timeout=10000)
    expect(summary).to_have_attribute("data-first-bad", str(seq))
    expect(page.locator(f"#verify-problems li[data-seq='{seq}']").filter(has_text=problem)).to_have_count(1)


def verify_a_forged_log(seat, campaign_id: int, forge):
    """``seat``'s verification page on a log the server forged as it went: ``forge(events)`` changes the
    events API's whole log in place and returns the first seq it changed; the chain is rehashed from
    there, and the session end's receipt signed on the forged log."""
    served = {}

    def forged(route):
        body = route.fetch().json()
        events = body["events"]
        if events and events[0]["seq"] == 1:
            rehash(events, campaign_id, forge(events))
            served.update((ev["seq"], ev["hash"]) for ev in events)
        route.fulfill(json=body)

    def signed(route):
        body = route.fetch().json()
        for receipt in body["checkpoints"]:
            receipt["hash"] = served[receipt["seq"]]
            receipt["signature"] = base64.b64encode(signing_key().sign(message(receipt))).decode("ascii")
        route.fulfill(json=body)

    page = seat.page
    page.evaluate("localStorage.clear()")  # the table page verified the honest log: a live forger's it would not
    page.route("**/api/campaigns/*/events*", forged)
    page.route("**/api/campaigns/*/checkpoints*", signed)
    page.get_by_role("link", name="Verify the log and the dice").click()


def test_the_verification_page_names_a_roll_stamped_outside_the_session_it_was_rolled_in(table_of, seats, real_dice):
    """A host's server could aim a die while a session ran by answering with dice of its choosing,
    stamped as rolled outside any session (``verifiable: false``): the page checked a session's dice by
    their session stamp, so it never looked at that roll, and said the dice matched."""
    table = table_of("tote")
    table.command(table.gm, {"type": "start_session"})
    rolled = table.command(table.alice, {"type": "roll", "notation": "1d20"}).events[0].seq
    table.command(table.bob, {"type": "roll", "notation": "1d20"})
    table.command(table.gm, {"type": "end_session"})

    def aim(events):
        target = events[rolled - 1]
        target["payload"].pop("dice_scheme")
        target["payload"].update(verifiable=False, dice_log=[[20, 20]], total=20)
        target["session"] = target["scene"] = None
        return rolled

    bob = seats("bob")
    verify_a_forged_log(bob, table.campaign.id, aim)
    expect_first_bad(bob.page, rolled, "outside any session")


def test_the_verification_page_names_a_session_whose_start_the_host_sealed(table_of, seats, real_dice):
    """A host's server aims Alice's die and stores the session's start for the GM alone: Bob's page read it
    sealed, found no start of session 1, and so checked none of its dice, and said they matched."""
    from tests.campaign import host

    table = table_of("tote")
    start = table.command(table.gm, {"type": "start_session"}).events[0].seq
    aimed = table.command(table.alice, {"type": "roll", "notation": "1d20"}).events[0]
    face = aimed.payload["dice_log"][0][1] % 20 + 1
    host.edit_payload(table.campaign, aimed.seq, {**aimed.payload, "dice_log": [[20, face]], "total": face})
    host.seal(table.campaign, start)
    table.command(table.gm, {"type": "end_session"})  # its receipt signs the log as the host made it
    page = seats("bob").page
    page.get_by_role("link", name="Verify the log and the dice").click()
    expect_first_bad(page, start, "is not session 1's start")


def store_under(seat, chosen: str) -> None:
    """A host's relay from now on (the page reloads through it): the server stores each command of
    ``seat``'s under the id ``chosen`` and answers the page with the id it sent."""
    sent = {}

    def swap_id(frame, to_page):
        if frame.get("type") == "command":
            sent["id"], frame["id"] = frame["id"], chosen
        return frame

    def swap_back(frame, to_page):
        if frame.get("type") == "ack" and frame.get("id") == chosen:
            frame["id"] = sent["id"]
        return frame

    seat.tamper_sockets(swap_id, swap_back)
    seat.page.reload()
    seat.wait_live()


def test_the_table_names_a_roll_the_server_stored_under_a_command_id_of_its_own(table_of, seats, real_dice):
    """A host's server that receives Alice's roll, tries command ids of its own until the seed gives the
    dice it wants and stores her roll under that one: every die matches the seed for the id stored, so
    every verifier said OK. Only her browser knows the id it sent; it checks the stored one now."""
    table = table_of("tote")
    table.command(table.gm, {"type": "start_session"})
    alice = seats("alice")
    chosen = "c" * 32
    store_under(alice, chosen)
    stored = newest(table)["seq"] + 1
    alice.roll("1d20")
    expect(alice.event(stored)).to_be_visible()
    assert Event.objects.get(campaign=table.campaign, seq=stored).payload["command_id"] == chosen
    alarm = alice.page.locator("#chain-alarm")
    expect(alarm).to_be_visible()
    expect(alarm.locator("h2")).to_have_text("The server may have chosen your dice")
    expect(alarm.locator(f"li[data-seq='{stored}']")).to_contain_text(f"but the server stored it as {chosen[:12]}")

    # An honest roll raises nothing.
    alice.tamper_sockets()
    alice.page.reload()
    alice.wait_live()
    alice.roll("1d20")
    expect(alice.page.locator("#chain-head")).to_contain_text(f"verified to #{stored + 1}")
    expect(alarm).to_be_hidden()


def test_the_verification_page_names_a_public_roll_served_sealed(table_of, seats, real_dice):
    """A host's server that aims Bob's public roll can show it at the table and serve it sealed to the
    verification page: its hash checks through its body digest, so the page counted it among the events
    sealed from this member and checked none of its dice. A public event is every member's to read."""
    table = table_of("tote")
    table.command(table.gm, {"type": "start_session"})
    public = table.command(table.bob, {"type": "roll", "notation": "1d20"}).events[0].seq
    table.command(table.gm, {"type": "end_session"})

    def seal(route):
        body = route.fetch().json()
        for ev in body["events"]:
            if ev["seq"] == public:
                ev.update(hidden=True, type="sealed", version=1, character=None, character_name=None,
                          payload={"hidden": True, "commitment": ev["body_digest"]})
        route.fulfill(json=body)

    page = seats("alice").page
    page.route("**/api/campaigns/*/events*", seal)
    page.get_by_role("link", name="Verify the log and the dice").click()
    expect_first_bad(page, public, "the server sent it sealed")


def test_the_verification_page_names_a_new_session_started_under_the_old_dice_scheme(table_of, seats, real_dice):
    """Scheme v1 keyed a die on its seq and on seeds anyone could add, so a host could aim it. The page
    left a v1 session's dice to verify_dice with a note and said everything checked out: a host's server
    that started a new session as v1 could roll what it liked. v1 sessions predate hash format 2."""
    table = table_of("tote")
    start = table.command(table.gm, {"type": "start_session"}).events[0].seq
    table.command(table.alice, {"type": "roll", "notation": "1d20"})
    table.command(table.gm, {"type": "end_session"})

    def downgrade(events):
        events[start - 1]["payload"]["dice_scheme"] = "talekeeper-hmac-sha256-v1"
        return start

    bob = seats("bob")
    verify_a_forged_log(bob, table.campaign.id, downgrade)
    expect_first_bad(bob.page, start, "under an old dice scheme")


def test_the_table_names_a_roll_the_server_stored_with_another_action(table_of, seats, real_dice):
    """The same id rolls the same dice, so a server that kept Alice's id but stored another action (a
    bonus she never asked for, a lower target) made her dice say something else, and every die still
    matched the seed. Her browser checks that what it sent is what was stored."""
    table = table_of("tote")
    table.command(table.gm, {"type": "start_session"})
    alice = seats("alice")

    def bonus(frame, to_page):
        if frame.get("type") == "command":
            frame["action"]["notation"] += "+5"
        return frame

    alice.tamper_sockets(bonus)
    alice.page.reload()
    alice.wait_live()
    stored = newest(table)["seq"] + 1
    alice.roll("1d20")
    expect(alice.event(stored)).to_be_visible()
    assert Event.objects.get(campaign=table.campaign, seq=stored).payload["action"]["notation"] == "1d20+5"
    alarm = alice.page.locator("#chain-alarm")
    expect(alarm.locator(f"li[data-seq='{stored}']")).to_contain_text("the server stored another action")


def test_a_blind_roll_stored_under_another_id_is_named_once_it_is_revealed(table_of, seats, real_dice):
    """Alice's roll only the GM sees reaches her sealed, so her table could not read the id it was stored
    under: a host's server could aim it (an id of its own) unseen. Her browser keeps the ids it sent,
    and checks them when the GM reveals the roll, at the table and on the verification page."""
    table = table_of("tote")
    table.command(table.gm, {"type": "start_session"})
    alice = seats("alice")
    chosen = "b" * 32
    store_under(alice, chosen)
    blind = newest(table)["seq"] + 1
    alice.roll("1d20", visibility="gm")
    expect(alice.event(blind)).to_contain_text("sealed: ")
    alarm = alice.page.locator("#chain-alarm")
    expect(alarm).to_be_hidden()  # sealed from her: nothing to read yet
    table.command(table.gm, {"type": "reveal", "seq": blind})
    expect(alarm.locator(f"li[data-seq='{blind}']")).to_contain_text(f"but the server stored it as {chosen[:12]}")

    table.command(table.gm, {"type": "end_session"})
    alice.page.goto(f"{alice.base}/campaigns/{SLUG}/verify/")
    expect(alice.page.locator("#verify-summary")).to_have_attribute("data-first-bad", str(blind), timeout=10000)
    expect(alice.page.locator(f"#verify-problems li[data-seq='{blind}']")).to_contain_text("sent as")


def test_the_verification_page_names_a_command_id_stored_twice(table_of, seats, real_dice):
    """A host's server that stored Alice's later roll under the id of her earlier fumble got the fumble's
    dice again, each matching the seed: a member's id is used once, and the page says so now."""
    table = table_of("tote")
    table.command(table.gm, {"type": "start_session"})
    fumble = table.command(table.alice, {"type": "roll", "notation": "1d20"}).events[0].seq
    later = table.command(table.alice, {"type": "roll", "notation": "1d20"}).events[0].seq
    table.command(table.gm, {"type": "end_session"})

    def replay(events):
        first = events[fumble - 1]["payload"]
        events[later - 1]["payload"].update(command_id=first["command_id"], dice_log=first["dice_log"],
                                            total=first["total"])
        return later

    bob = seats("bob")
    verify_a_forged_log(bob, table.campaign.id, replay)
    expect_first_bad(bob.page, later, f"under the command id of #{fumble}")
