"""Hidden rolls don't leak through what the server decides next (docs/hidden-information.md).

Each test replays one leak: a decision, refusal message,
preview or public payload that was computed from an event the member may not
see. Members read the table through the HTTP API, as a client would.
"""

from __future__ import annotations

import json

import pytest

from campaign.models import CharacterProjection, Event
from rules import ScriptedDice, get_system
from tests.campaign.served import client_for, command as send, seen

pytestmark = pytest.mark.django_db

SLUG = "torn-road"


def preview(user, action) -> dict:
    res = client_for(user).post(f"/api/campaigns/{SLUG}/preview", content_type="application/json",
                                data=json.dumps({"action": action}))
    return {"status": res.status_code, **res.json()}


def setup(table_for, system: str, sheet: dict | None = None):
    table = table_for(system)
    table.hero = table.create_character(table.alice, "Hero", sheet or get_system(system).example_sheet)
    table.command(table.gm, {"type": "start_session"})
    table.command(table.gm, {"type": "start_scene"})
    return table


def sealed_for_everyone_but_the_gm(table, seq: int) -> None:
    for user in (table.alice, table.bob, table.watcher):
        event = seen(user, seq)
        assert event["hidden"] is True and event["type"] == "sealed" and set(event["payload"]) == {
            "hidden", "commitment"}, user.username
    assert seen(table.gm, seq).get("hidden") is None


# --- TOTE ------------------------------------------------------------------------------------

def tote_table(table_for):
    sheet = {**get_system("tote").example_sheet, "resolve": 3}
    return setup(table_for, "tote", sheet)


def test_tote_spend_resolve_after_a_gm_only_test_says_nothing_of_it(table_for):
    table = tote_table(table_for)
    # The GM's hidden Strike test for Alice's hero: 5 + Paragon 5 = 10 against T14, a failure.
    hidden = send(table, table.gm, {"type": "skill_test", "character": table.hero.id, "skill": "Strike",
                                    "target": 14, "visibility": "gm"}, [5, 2, 5])
    assert hidden.status == 201 and hidden.json()["payload"]["total"] == 10
    # Before: a 422 "Adding Bear (1) makes 11, still short of T14" told Alice the hidden total.
    res = send(table, table.alice, {"type": "spend_resolve", "character": table.hero.id, "totem": "Bear"})
    assert res.status == 201, res.json()
    assert res.json()["hidden"] is True and set(res.json()["payload"]) == {"hidden", "commitment"}
    stored = Event.objects.get(campaign=table.campaign, seq=res.json()["seq"])
    assert (stored.type, stored.visibility) == ("refused", "gm")
    assert "still short of T14" in stored.payload["message"]  # the GM reads what the rules said
    sealed_for_everyone_but_the_gm(table, stored.seq)


def test_tote_spend_resolve_that_succeeds_on_a_hidden_test_is_hidden_too(table_for):
    table = tote_table(table_for)
    send(table, table.gm, {"type": "skill_test", "character": table.hero.id, "skill": "Strike", "target": 11,
                           "visibility": "gm"}, [5, 2, 5])
    res = send(table, table.alice, {"type": "spend_resolve", "character": table.hero.id, "totem": "Bear"})
    assert res.status == 201
    stored = Event.objects.get(campaign=table.campaign, seq=res.json()["seq"])
    # Before: a public resolve_spent showing everyone total_before 10.
    assert (stored.type, stored.visibility, stored.payload["total_before"]) == ("resolve_spent", "gm", 10)
    sealed_for_everyone_but_the_gm(table, stored.seq)


def test_a_player_cannot_open_her_own_sealed_command_once_the_seed_is_out(table_for):
    """An attack on the sealed refusal: its nonce came from the seed,
    her user id and her command id, all hers once the session ended and published the seed, so she
    tried each message the rules can give against the digest and read the hidden test's total
    ("makes 11, still short of T14"). Her sealed command's nonce is drawn now."""
    import hashlib

    from campaign.canonical import jcs
    from campaign.fairdice import derive_nonce
    from tests.campaign.served import send as send_as

    table = tote_table(table_for)
    send(table, table.gm, {"type": "skill_test", "character": table.hero.id, "skill": "Strike", "target": 14,
                           "visibility": "gm"}, [5, 2, 5])
    res = send_as(table.membership(table.alice), "alices-own-id", {"type": "spend_resolve", "character": table.hero.id,
                                                                   "totem": "Bear"})
    digest = res.json()["body_digest"]
    table.command(table.gm, {"type": "end_scene"})
    ended = table.command(table.gm, {"type": "end_session"}).events[0]
    stored = Event.objects.get(campaign=table.campaign, seq=res.json()["seq"])
    body = {"type": stored.type, "version": stored.version, "character": table.hero.id}
    assert hashlib.sha256(jcs({**body, "payload": stored.payload})).hexdigest() == digest  # the true body
    # Her best guess: the true message (one of the few the rules can give), the nonce from the seed.
    derived = derive_nonce(ended.payload["dice_seed"], table.campaign.id, 1, table.alice.pk, "alices-own-id")
    guess = {key: value for key, value in stored.payload.items() if key != "nonce_drawn"}
    for payload in ({**guess, "nonce": derived}, {**guess, "nonce": derived, "nonce_drawn": True}):
        assert hashlib.sha256(jcs({**body, "payload": payload})).hexdigest() != digest
    assert stored.payload["nonce_drawn"] is True


def test_the_gms_answer_on_top_of_a_players_secret_roll_is_shared_with_her_so_she_keeps_her_character(table_for):
    """The GM's grant on a character with Alice's secret
    roll was stored ``gm``, so the character was hidden-shaped for Alice, and her own next public test
    came back sealed to her. Now she reads it too (she saw everything it read): stored ``gm``, naming
    her in its payload; the table still sees it sealed, and her character stays hers."""
    table = tote_table(table_for)
    secret = send(table, table.alice, {"type": "skill_test", "character": table.hero.id, "skill": "Strike",
                                       "target": 9, "visibility": "secret"}, [5, 2, 5])
    assert secret.status == 201
    grant = send(table, table.gm, {"type": "grant_resolve", "character": table.hero.id, "amount": 2})
    stored = Event.objects.get(campaign=table.campaign, seq=grant.json()["seq"])
    assert stored.visibility == "gm"
    assert stored.payload["shared_with"] == [{"user_id": table.alice.pk, "username": "alice"}]
    assert seen(table.alice, stored.seq)["payload"]["amount"] == 2  # Alice reads it...
    for user in (table.bob, table.watcher):  # ...the others get a sealed stub
        assert seen(user, stored.seq)["hidden"] is True, user.username
    mine = send(table, table.alice, {"type": "skill_test", "character": table.hero.id, "skill": "Strike",
                                     "target": 9}, [6, 6, 6])
    assert mine.status == 201 and mine.json().get("hidden") is None, mine.json()  # before: sealed from Alice
    # Her sheet shows the Resolve granted, as the GM's does; Bob's leaves out both hidden events.
    sheets = {user.username: client_for(user).get(f"/api/campaigns/{SLUG}/characters/{table.hero.id}").json()
              for user in (table.gm, table.alice, table.bob)}
    assert sheets["alice"]["state"]["resolve"] == sheets["gm"]["state"]["resolve"] == 5
    assert sheets["bob"]["state"]["resolve"] == 3


def test_the_gms_sheet_adjustment_on_top_of_a_players_secret_roll_is_shared_with_her(table_for):
    table = tote_table(table_for)
    send(table, table.alice, {"type": "skill_test", "character": table.hero.id, "skill": "Strike", "target": 9,
                              "visibility": "secret"}, [5, 2, 5])
    res = send(table, table.gm, {"type": "adjust_sheet", "character": table.hero.id, "changes": {"resolve": 4},
                                 "reason": "a gift"})
    stored = Event.objects.get(campaign=table.campaign, seq=res.json()["seq"])
    assert (stored.visibility, stored.payload["shared_with"]) == ("gm", [{"user_id": table.alice.pk,
                                                                          "username": "alice"}])
    assert seen(table.alice, stored.seq)["payload"]["reason"] == "a gift"
    assert seen(table.bob, stored.seq)["hidden"] is True


# The parts of a sealed stub that differ from one event to the next whatever it was (its place in the
# chain and its digest): the rest must be the same for every GM-only event.
PER_EVENT = ("seq", "created_at", "prev_hash", "hash", "body_digest", "payload")


def test_a_gm_decision_some_members_read_is_to_everyone_else_any_gm_only_event(table_for):
    """Its envelope said ``shared`` (in the stub and in the hash), so the table could tell "a player
    reads this GM decision", i.e. it touched someone's secret roll. Its readers are named inside
    the body now, and the stub is a GM-only event's like any other."""
    from campaign.eventlog import FORMAT_2, event_hash

    table = tote_table(table_for)
    rival = table.create_character(table.bob, "Rival", get_system("tote").example_sheet).id
    send(table, table.alice, {"type": "skill_test", "character": table.hero.id, "skill": "Strike", "target": 9,
                              "visibility": "secret"}, [5, 2, 5])
    read_by_alice = send(table, table.gm, {"type": "grant_resolve", "character": table.hero.id, "amount": 2})
    gm_only = send(table, table.gm, {"type": "grant_resolve", "character": rival, "amount": 2, "visibility": "gm"})
    shared, plain = (Event.objects.get(campaign=table.campaign, seq=r.json()["seq"]) for r in (read_by_alice, gm_only))
    assert (shared.visibility, plain.visibility) == ("gm", "gm") and "shared_with" in shared.payload
    for user in (table.bob, table.watcher):
        stubs = [seen(user, e.seq) for e in (shared, plain)]
        assert set(stubs[0]) == set(stubs[1]) and set(stubs[0]["payload"]) == set(stubs[1]["payload"]), user.username
        assert ({k: v for k, v in stubs[0].items() if k not in PER_EVENT}
                == {k: v for k, v in stubs[1].items() if k not in PER_EVENT}), user.username
        assert stubs[0]["visibility"] == "gm" and stubs[0]["hidden"] is True
        # ... and it still hashes from the stub alone.
        fields = {**stubs[0], "campaign": table.campaign.id, "actor": stubs[0]["actor_id"]}
        assert event_hash(stubs[0]["prev_hash"], fields, FORMAT_2, stubs[0]["body_digest"]) == stubs[0]["hash"]
    assert seen(table.alice, shared.seq)["payload"]["amount"] == 2  # her reader still reads it
    assert seen(table.alice, plain.seq)["hidden"] is True


def test_a_decision_stored_shared_before_still_reads_and_verifies(table_for):
    """The last session stored these decisions with visibility ``shared`` (its hash covers it, so it
    stays): its members still read it, the others get it sealed, and the log verifies."""
    from io import StringIO

    from django.core.management import call_command
    from django.db import transaction

    from campaign.eventlog import Draft, lock_campaign, record

    table = tote_table(table_for)
    send(table, table.alice, {"type": "skill_test", "character": table.hero.id, "skill": "Strike", "target": 9,
                              "visibility": "secret"}, [5, 2, 5])
    with transaction.atomic():  # as the old server stored the GM's grant on top of Alice's secret test
        legacy = record(lock_campaign(table.campaign.id), [Draft(
            "resolve_granted", {"amount": 1, "requested": 1, "resolve": 4, "reason": "", "nonce": "ab" * 16,
                                "shared_with": [{"user_id": table.alice.pk, "username": "alice"}]},
            1, table.hero, "shared")], actor=table.gm)[0]
    assert Event.objects.get(pk=legacy.pk).visibility == "shared"
    assert seen(table.alice, legacy.seq)["payload"]["amount"] == 1
    for user in (table.bob, table.watcher):
        assert seen(user, legacy.seq)["hidden"] is True, user.username
    sheets = {user.username: client_for(user).get(f"/api/campaigns/{SLUG}/characters/{table.hero.id}").json()
              for user in (table.gm, table.alice, table.bob)}
    assert sheets["alice"]["state"]["resolve"] == sheets["gm"]["state"]["resolve"] == 4
    assert sheets["bob"]["state"]["resolve"] == 3
    # Alice still sees all her character is folded from: her own next test is public.
    mine = send(table, table.alice, {"type": "skill_test", "character": table.hero.id, "skill": "Strike",
                                     "target": 9}, [6, 6, 6])
    assert mine.status == 201 and mine.json().get("hidden") is None, mine.json()
    # A new GM decision on top of it names her as its reader, stored ``gm``.
    grant = send(table, table.gm, {"type": "grant_resolve", "character": table.hero.id, "amount": 1})
    assert grant.status == 201, grant.json()
    stored = Event.objects.get(campaign=table.campaign, seq=grant.json()["seq"])
    assert (stored.visibility, stored.payload["shared_with"]) == ("gm", [{"user_id": table.alice.pk,
                                                                          "username": "alice"}])
    out = StringIO()
    call_command("verify_log", table.campaign.slug, stdout=out)
    assert out.getvalue().startswith("OK"), out.getvalue()


def test_a_rules_payload_cannot_name_its_own_readers(table_for, monkeypatch):
    """Only the server names who reads a ``gm`` event: a ``shared_with`` the rules (or anything an
    action could slip into their payload) put there is dropped, so it opens the event to nobody."""
    from rules import Event as RulesEvent

    table = tote_table(table_for)
    rules = type(table.campaign.rules)
    decide = rules.decide

    def echoing(self, state, action, dice):
        return [RulesEvent(e.type, {**e.payload, "shared_with": [{"user_id": table.bob.pk, "username": "bob"}]},
                           e.version) for e in decide(self, state, action, dice)]

    monkeypatch.setattr(rules, "decide", echoing)
    res = send(table, table.gm, {"type": "grant_resolve", "character": table.hero.id, "amount": 1, "visibility": "gm"})
    stored = Event.objects.get(campaign=table.campaign, seq=res.json()["seq"])
    assert stored.visibility == "gm" and "shared_with" not in stored.payload
    assert seen(table.bob, stored.seq)["hidden"] is True


def test_the_gms_answer_on_top_of_their_own_hidden_roll_stays_the_gms(table_for):
    table = tote_table(table_for)
    send(table, table.gm, {"type": "skill_test", "character": table.hero.id, "skill": "Strike", "target": 9,
                           "visibility": "gm"}, [5, 2, 5])
    grant = send(table, table.gm, {"type": "grant_resolve", "character": table.hero.id, "amount": 1})
    stored = Event.objects.get(campaign=table.campaign, seq=grant.json()["seq"])
    assert (stored.visibility, "shared_with" in stored.payload) == ("gm", False)
    sealed_for_everyone_but_the_gm(table, stored.seq)


def test_a_request_answered_by_a_roll_she_may_not_see_is_still_hers_to_answer(table_for):
    """A refusal "That request was already answered in #19" would tell
    a player that the sealed #19 answered it, and so what it was and on whom."""
    table = tote_table(table_for)
    test = {"type": "skill_test", "character": table.hero.id, "skill": "Strike", "target": 9}
    request = send(table, table.gm, {"type": "request_roll", "character": table.hero.id, "action": test})
    # (A plain roll, which changes no state: so Alice's own answer is hers to see, as below.)
    gm_answer = send(table, table.gm, {"type": "roll", "notation": "3d6", "character": table.hero.id,
                                       "visibility": "gm", "request": request.json()["seq"]}, [5, 2, 5])
    assert gm_answer.status == 201
    mine = send(table, table.alice, {**test, "request": request.json()["seq"]}, [6, 6, 6])
    assert mine.status == 201 and mine.json().get("hidden") is None, mine.json()  # before: a 422 naming the sealed event
    again = send(table, table.alice, {**test, "request": request.json()["seq"]}, [6, 6, 6])
    assert again.status == 422 and f"#{mine.json()['seq']}" in again.json()["error"]["message"]


def test_tote_hidden_aspect_penalty_and_injuries_stay_out_of_previews_and_public_tests(table_for):
    table = tote_table(table_for)
    test = {"type": "skill_test", "character": table.hero.id, "skill": "Strike", "target": 8}
    before = preview(table.alice, test)
    send(table, table.gm, {"type": "gm_invoke_aspect", "character": table.hero.id, "visibility": "gm"})
    send(table, table.gm, {"type": "mark_injury", "character": table.hero.id, "count": 2, "visibility": "gm"})
    # Her odds must not drop (125/216 to 11/72) while her sheet shows nothing.
    assert preview(table.alice, test) == before
    assert preview(table.gm, test) != before  # the GM sees what the rules will use
    res = send(table, table.alice, test, [4, 5, 3])
    stored = Event.objects.get(campaign=table.campaign, seq=res.json()["seq"])
    # Before: a public test printing "aspect_penalty -2, blocked [4, 5]".
    assert stored.payload["aspect_penalty"] == -2 and stored.visibility == "gm"
    sealed_for_everyone_but_the_gm(table, stored.seq)


def test_a_players_public_action_on_her_own_secret_roll_is_hers_and_the_gms_and_looks_gm_only(table_for):
    """What only Alice (and the GM) may see shapes the result: only they see it. Stored ``gm`` naming her,
    not ``secret``: to the rest of the table it is one more GM-only event, as the same action on a
    character with a change the GM keeps from her is (the envelope told them which it was)."""
    table = tote_table(table_for)
    strike = {"type": "skill_test", "character": table.hero.id, "skill": "Strike", "visibility": "secret"}
    send(table, table.alice, {**strike, "target": 14}, [5, 2, 5])
    refused = send(table, table.alice, {"type": "spend_resolve", "character": table.hero.id, "totem": "Bear"})
    assert refused.status == 422 and "short of T14" in refused.json()["error"]["message"]  # hers to know
    send(table, table.alice, {**strike, "target": 11}, [5, 2, 5])
    res = send(table, table.alice, {"type": "spend_resolve", "character": table.hero.id, "totem": "Bear"})
    stored = Event.objects.get(campaign=table.campaign, seq=res.json()["seq"])
    assert stored.visibility == "gm"
    assert stored.payload["shared_with"] == [{"user_id": table.alice.pk, "username": "alice"}]
    assert seen(table.alice, stored.seq)["payload"]["total_before"] == 10
    for user in (table.bob, table.watcher):
        stub = seen(user, stored.seq)
        assert stub["hidden"] is True and stub["visibility"] == "gm"


def test_bad_input_is_still_a_clear_error_when_the_result_would_be_hidden(table_for):
    table = tote_table(table_for)
    send(table, table.gm, {"type": "mark_injury", "character": table.hero.id, "visibility": "gm"})
    res = send(table, table.alice, {"type": "skill_test", "character": table.hero.id, "skill": "Juggle",
                                    "target": 8})
    assert res.status == 400 and res.json()["error"]["code"] == "invalid"
    assert not Event.objects.filter(campaign=table.campaign, type="refused").exists()


# --- Tale --------------------------------------------------------------------------------------

def tale_contest(table):
    """Alice's public contest: brawn 4 + skill 3 = 7 dice against 3."""
    send(table, table.alice, {"type": "start_contest", "character": table.hero.id, "vs_pool": 3})


def blind_round(table):
    """A round of it only the GM sees: her seven 1s lose to three 6s, she loses dice, the contest goes on."""
    res = send(table, table.alice, {"type": "iterated_round", "character": table.hero.id, "visibility": "gm"},
               [1] * 7 + [6] * 3)
    stored = Event.objects.get(campaign=table.campaign, seq=res.json()["seq"])
    assert stored.payload["mine_after"] < 7 and CharacterProjection.objects.get(
        character=table.hero).state["contest"] is not None
    return stored


def test_tale_preview_does_not_show_the_pools_a_hidden_round_left(table_for):
    table = setup(table_for, "tale")
    round_action = {"type": "iterated_round", "character": table.hero.id}
    tale_contest(table)
    before = preview(table.alice, round_action)
    blind_round(table)
    # Before: the odds were those of the pools after the hidden round.
    assert preview(table.alice, round_action) == before
    assert preview(table.gm, round_action)["odds"] != before["odds"]


def test_tale_public_end_contest_after_a_hidden_round_is_hidden(table_for):
    table = setup(table_for, "tale")
    tale_contest(table)
    hidden_round = blind_round(table)
    res = send(table, table.alice, {"type": "end_contest", "character": table.hero.id})
    stored = Event.objects.get(campaign=table.campaign, seq=res.json()["seq"])
    # Before: a public end_contest publishing the hidden count.
    assert stored.type == "contest_ended" and stored.visibility == "gm"
    assert stored.payload != {} and hidden_round.seq < stored.seq
    sealed_for_everyone_but_the_gm(table, stored.seq)


@pytest.mark.parametrize("faces, events", [([6] * 8 + [1] * 8, 2), ([1] * 8 + [6] * 8, 1)])
def test_tale_hidden_hide_appends_one_event_whether_it_succeeds_or_not(table_for, faces, events):
    sheet = {**get_system("tale").example_sheet,
             "skills": {"Hide": {"characteristics": ["deft", "clever"], "dice": 0}}}
    table = setup(table_for, "tale", sheet)
    head = table.campaign.__class__.objects.get(pk=table.campaign.pk).last_seq
    res = send(table, table.alice, {"type": "hide", "character": table.hero.id, "place": "open_space",
                                    "seeker_pool": 2, "visibility": "gm"}, faces)
    assert res.status == 201, res.json()
    stored = list(Event.objects.filter(campaign=table.campaign, seq__gt=head))
    # Before: a second start_contest placeholder only when the hiding succeeded.
    assert len(stored) == 1 and len(res.json()["events"]) == 1
    rule_events = stored[0].payload["events"] if stored[0].type == "bundle" else [stored[0].payload]
    assert len(rule_events) == events
    assert (CharacterProjection.objects.get(character=table.hero).state["contest"] is not None) == (events == 2)
    sealed_for_everyone_but_the_gm(table, stored[0].seq)


def test_tale_void_of_damage_already_spread_takes_it_back(table_for):
    table = setup(table_for, "tale")
    taken = table.command(table.gm, {"type": "take_damage", "character": table.hero.id, "dice": 2})
    table.command(table.alice, {"type": "assign_damage", "character": table.hero.id,
                                "damage": {"brawn": 1, "skill": 1}})
    table.command(table.gm, {"type": "void", "seq": taken.events[0].seq, "reason": "wrong hero"})
    state = CharacterProjection.objects.get(character=table.hero).state
    # Before: unassigned_damage -1 per die, and every later roll and rest refused.
    assert state["unassigned_damage"] == 0 and not any(state["damage"].values())
    res = table.command(table.alice, {"type": "straight_roll", "character": table.hero.id, "target": 5},
                        dice=ScriptedDice([3] * 20))
    assert res.events[0].type == "straight_rolled"


# --- MdT and WYRM ------------------------------------------------------------------------------

def test_mdt_public_abandon_project_after_a_hidden_roll_is_hidden(table_for):
    table = setup(table_for, "mdt")
    send(table, table.gm, {"type": "start_project", "character": table.hero.id, "name": "Tome", "target": 9,
                           "attribute": "intelligence"})
    send(table, table.alice, {"type": "project_roll", "character": table.hero.id, "project": "Tome",
                              "visibility": "gm"}, [10, 9, 8, 8, 8, 8, 8, 1, 1, 1])
    res = send(table, table.alice, {"type": "abandon_project", "character": table.hero.id, "project": "Tome"})
    stored = Event.objects.get(campaign=table.campaign, seq=res.json()["seq"])
    # Before: a public abandon_project publishing the hidden progress.
    assert stored.type == "project_abandoned" and stored.payload["progress"] > 0 and stored.visibility == "gm"
    sealed_for_everyone_but_the_gm(table, stored.seq)


def test_wyrm_gm_approval_of_fate_on_a_hidden_check_is_hidden(table_for):
    table = setup(table_for, "wyrm")
    send(table, table.alice, {"type": "check", "character": table.hero.id, "attribute": "rogue", "dl": 12,
                              "visibility": "secret"}, [4])
    asked = send(table, table.alice, {"type": "spend_fate", "character": table.hero.id, "use": "plus_two"})
    assert Event.objects.get(campaign=table.campaign, seq=asked.json()["seq"]).visibility == "gm"
    res = send(table, table.gm, {"type": "approve_fate", "character": table.hero.id})
    stored = Event.objects.get(campaign=table.campaign, seq=res.json()["seq"])
    # Before: a public fate_spent carrying the hidden original_total. Then ``gm``, which hid the answer
    # from Alice, whose roll and request it answers; now she reads it too (she saw all it read).
    assert "original_total" in stored.payload and stored.visibility == "gm"
    assert stored.payload["shared_with"] == [{"user_id": table.alice.pk, "username": "alice"}]
    assert seen(table.alice, stored.seq)["payload"]["original_total"] == stored.payload["original_total"]
    for user in (table.bob, table.watcher):
        assert seen(user, stored.seq)["hidden"] is True, user.username


def test_a_sheet_does_not_say_which_character_a_sealed_event_concerned(table_for):
    table = tote_table(table_for)
    head = type(table.campaign).objects.get(pk=table.campaign.pk).last_seq
    hidden = send(table, table.gm, {"type": "mark_injury", "character": table.hero.id, "visibility": "gm"})
    for user in (table.alice, table.bob, table.watcher):
        sheet = client_for(user).get(f"/api/campaigns/{SLUG}/characters/{table.hero.id}").json()
        # Before: "seq" was the sealed event's, which the placeholder's "character": null hides.
        assert sheet["seq"] == head and sheet["state"]["injuries"] == 0, user.username
    assert client_for(table.gm).get(f"/api/campaigns/{SLUG}/characters/{table.hero.id}").json()["seq"] == \
        hidden.json()["seq"]


def test_a_void_does_not_name_the_type_of_a_sealed_event(table_for):
    table = tote_table(table_for)
    public = send(table, table.gm, {"type": "mark_injury", "character": table.hero.id})
    hidden = send(table, table.gm, {"type": "heal_injury", "character": table.hero.id, "visibility": "gm"})
    for target in (hidden, public):
        table.command(table.gm, {"type": "void", "seq": target.json()["seq"], "reason": "oops"})
    voids = Event.objects.filter(campaign=table.campaign, type="event_voided").order_by("seq")
    # Before: the public void said "injury_marked" of the event sealed for everyone else.
    assert [v.payload["type"] for v in voids] == ["sealed", "injury_marked"]


def test_a_void_is_read_by_its_targets_readers_only(table_for):
    """The void of a sealed event was public and named
    its character (with that character's sheet), which the sealed stub keeps from the table."""
    table = tote_table(table_for)
    rival = table.create_character(table.bob, "Rival", get_system("tote").example_sheet).id
    secret = send(table, table.alice, {"type": "skill_test", "character": table.hero.id, "skill": "Strike",
                                       "target": 9, "visibility": "secret"}, [5, 2, 5])
    public = send(table, table.gm, {"type": "grant_resolve", "character": rival})
    hidden = send(table, table.gm, {"type": "mark_injury", "character": rival, "visibility": "gm"})
    voids = {name: send(table, table.gm, {"type": "void", "seq": target.json()["seq"], "reason": "oops"}).json()["seq"]
             for name, target in (("hidden", hidden), ("secret", secret), ("public", public))}
    stored = {name: Event.objects.get(campaign=table.campaign, seq=seq) for name, seq in voids.items()}
    assert {name: e.visibility for name, e in stored.items()} == {"hidden": "gm", "secret": "gm", "public": "public"}
    assert stored["secret"].payload["shared_with"] == [{"user_id": table.alice.pk, "username": "alice"}]
    assert "shared_with" not in stored["hidden"].payload
    for user in (table.alice, table.bob, table.watcher):
        assert seen(user, voids["hidden"])["character"] is None, user.username
    assert seen(table.alice, voids["secret"])["character"] == table.hero.id
    assert seen(table.bob, voids["secret"])["character"] is None
    assert seen(table.alice, voids["public"])["character"] == rival
    # Its targets voided, nothing of the character is hidden any more: Alice's next test is public.
    mine = send(table, table.alice, {"type": "skill_test", "character": table.hero.id, "skill": "Strike",
                                     "target": 9}, [6, 6, 6])
    assert mine.status == 201 and mine.json().get("hidden") is None, mine.json()


def test_revealing_a_voided_roll_reveals_its_void_with_it(table_for):
    """The GM voids her GM-only grant (the void is hers too)
    and reveals it. The table read the grant, not its void, and so a sheet without it: what the log
    said and what the sheet counted disagreed. The reveal now brings its void out too."""
    from campaign.eventlog import events_after
    from campaign.visibility import Viewer
    from sessions.consumers import event_frame

    table = tote_table(table_for)
    resolve = CharacterProjection.objects.get(character=table.hero).state["resolve"]
    grant = send(table, table.gm, {"type": "grant_resolve", "character": table.hero.id, "amount": 2,
                                   "visibility": "gm"}).json()["seq"]
    void = send(table, table.gm, {"type": "void", "seq": grant, "reason": "hush"}).json()["seq"]
    reveal = send(table, table.gm, {"type": "reveal", "seq": grant}).json()
    assert [e["payload"]["seq"] for e in reveal["events"]] == [grant, void]
    for user in (table.alice, table.bob, table.watcher):
        assert seen(user, grant)["voided"] is True, user.username
        assert seen(user, void).get("hidden") is None and seen(user, void)["payload"]["reason"] == "hush"
    assert CharacterProjection.objects.get(character=table.hero).state["resolve"] == resolve  # as the log says
    # The socket's backlog (one frame per visibility class, kept): the flag without its private voids.
    (data,), revealed = events_after(table.campaign.id, grant - 1, 1)
    frame = json.loads(event_frame(data, Viewer.of(table.membership(table.alice)), revealed))["event"]
    assert frame["voided"] is True and "voids" not in frame


def test_a_void_revealed_before_its_roll_is_not_revealed_twice(table_for):
    table = tote_table(table_for)
    roll = send(table, table.gm, {"type": "roll", "notation": "1d6", "visibility": "gm"}, [3]).json()["seq"]
    void = send(table, table.gm, {"type": "void", "seq": roll, "reason": "hush"}).json()["seq"]
    assert [e["payload"]["seq"] for e in send(table, table.gm, {"type": "reveal", "seq": void}).json()["events"]] == [void]
    assert [e["payload"]["seq"] for e in send(table, table.gm, {"type": "reveal", "seq": roll}).json()["events"]] == [roll]
    assert Event.objects.filter(campaign=table.campaign, type="roll_revealed", payload__seq=void).count() == 1


def test_a_void_of_an_npcs_roll_the_gm_hid_again_marks_nothing_for_the_table(table_for):
    """The other way a void is sealed from who reads its target: the NPC's roll was public, its void
    (after the GM hid the NPC again) is the GM's."""
    table = setup(table_for, "wyrm")
    foe = npc(table, "full")
    roll = send(table, table.gm, {"type": "roll", "notation": "1d6", "character": foe}, [5]).json()["seq"]
    assert send(table, table.gm, {"type": "show_npc", "character": foe, "shown": "hidden"}).status == 201
    void = send(table, table.gm, {"type": "void", "seq": roll, "reason": "never happened"}).json()["seq"]
    assert Event.objects.get(campaign=table.campaign, seq=void).visibility == "gm"
    assert seen(table.gm, roll)["voided"] is True
    assert "voided" not in seen(table.bob, roll) and seen(table.bob, void)["hidden"] is True
    # Shown fully again, the table reads its sheet, which leaves the voided roll out: the void comes
    # out with it (before, the players' row of the roll went on not saying voided).
    shown = send(table, table.gm, {"type": "show_npc", "character": foe, "shown": "full"}).json()
    assert [(e["type"], e["payload"].get("seq")) for e in shown["events"]][-1:] == [("roll_revealed", void)]
    for user in (table.alice, table.bob, table.watcher):
        assert seen(user, roll)["voided"] is True and seen(user, void)["payload"]["reason"] == "never happened"
    # Hidden and shown once more: nothing is revealed a second time.
    send(table, table.gm, {"type": "show_npc", "character": foe, "shown": "hidden"})
    again = send(table, table.gm, {"type": "show_npc", "character": foe, "shown": "full"}).json()
    assert [e["type"] for e in again["events"]] == ["npc_shown"]


def test_an_npc_shown_again_brings_out_the_voids_of_its_public_events(table_for):
    """A rule event, not a plain roll: the GM awards a fully shown NPC in public, hides it, voids the
    award (the void is the GM's) and shows the NPC in full again. Every member read the award, not
    voided, and a sheet that left it out (earned 0 after +3): the sheet told them the GM had voided
    it. Shown in full again, the NPC's sealed voids of events the table reads come out with it."""
    table = setup(table_for, "tote")
    foe = npc(table, "full", {"rating": 3})
    award = send(table, table.gm, {"type": "award_points", "character": foe, "points": 3, "reason": "brave"})
    assert award.status == 201 and award.json()["visibility"] == "public"
    public_roll = send(table, table.gm, {"type": "roll", "notation": "1d6", "character": foe}, [2]).json()["seq"]
    assert send(table, table.gm, {"type": "show_npc", "character": foe, "shown": "name"}).status == 201
    void = send(table, table.gm, {"type": "void", "seq": award.json()["seq"], "reason": "wrong NPC"}).json()["seq"]
    assert Event.objects.get(campaign=table.campaign, seq=void).visibility == "gm"
    # A void of one of its rolls made while it was kept: its target stays sealed, and so does the void.
    gm_roll = send(table, table.gm, {"type": "roll", "notation": "1d6", "character": foe}, [4]).json()["seq"]
    gm_void = send(table, table.gm, {"type": "void", "seq": gm_roll, "reason": "hush"}).json()["seq"]
    shown = send(table, table.gm, {"type": "show_npc", "character": foe, "shown": "full"}).json()
    assert [(e["type"], e["payload"].get("seq")) for e in shown["events"]] == [("npc_shown", None),
                                                                             ("roll_revealed", void)]
    for user in (table.alice, table.bob, table.watcher):
        sheet = client_for(user).get(f"/api/campaigns/{SLUG}/characters/{foe}").json()
        assert sheet["state"]["points"]["earned"] == 0, user.username
        assert seen(user, award.json()["seq"])["voided"] is True, user.username  # what the sheet says
        assert seen(user, void)["payload"]["reason"] == "wrong NPC"
        assert seen(user, gm_void)["hidden"] is True and seen(user, gm_roll)["hidden"] is True
        assert "voided" not in seen(user, public_roll)


def test_dice_stats_count_sealed_events_whether_or_not_they_rolled(table_for):
    """A hidden decision is a roll or a refusal depending on hidden state: the count must not tell."""
    table = tote_table(table_for)
    send(table, table.gm, {"type": "mark_injury", "character": table.hero.id, "visibility": "gm"})  # no dice
    send(table, table.gm, {"type": "skill_test", "character": table.hero.id, "skill": "Strike", "target": 9,
                           "visibility": "gm"}, [3, 3, 3])
    stats = client_for(table.bob).get(f"/api/campaigns/{SLUG}/dice-stats").json()
    assert stats["hidden_events"] == 2 and stats["dice"] == 0
    by_hero = client_for(table.bob).get(f"/api/campaigns/{SLUG}/dice-stats?character={table.hero.id}").json()
    assert by_hero["hidden_events"] == 0  # a sealed event shows no character to filter on



def test_dice_stats_count_a_gm_decisions_dice_for_the_members_who_read_it(table_for):
    """Dice statistics read their rows without the payload and left out whom a GM's decision names
    as its readers: Alice read the GM's reroll on top of her secret check, but her statistics
    counted it sealed and without its die."""
    table = setup(table_for, "wyrm")
    send(table, table.alice, {"type": "check", "character": table.hero.id, "attribute": "rogue", "dl": 12,
                              "visibility": "secret"}, [4])
    send(table, table.alice, {"type": "spend_fate", "character": table.hero.id, "use": "reroll"})
    res = send(table, table.gm, {"type": "approve_fate", "character": table.hero.id}, [6])
    stored = Event.objects.get(campaign=table.campaign, seq=res.json()["seq"])
    assert stored.payload["shared_with"][0]["username"] == "alice" and stored.payload["dice_log"] == [[6, 6]]
    stats = {user.username: client_for(user).get(f"/api/campaigns/{SLUG}/dice-stats").json()
             for user in (table.gm, table.alice, table.bob)}
    assert (stats["alice"]["dice"], stats["alice"]["hidden_events"]) == (2, 0) == (stats["gm"]["dice"], 0)
    assert (stats["bob"]["dice"], stats["bob"]["hidden_events"]) == (0, 3)

# --- NPCs, contests and chat (the evening's new surfaces) --------------------------------------

def npc(table, shown: str, system_quick=None, name="Lurker") -> int:
    """A GM's NPC (quick template), shown to the players as ``shown``; its id."""
    res = send(table, table.gm, {"type": "create_character", "npc": True, "name": name, "shown": shown,
                                 "quick": system_quick or {"template": "veteran"}})
    assert res.status == 201, res.json()
    return res.json()["character"]


@pytest.mark.parametrize("action", [
    {"type": "roll", "notation": "1d6"},
    {"type": "check", "attribute": "warrior", "dl": 5},
    {"type": "post_message", "kind": "ic", "text": "Who goes there?"},
])
def test_a_player_acting_for_a_hidden_npc_hears_what_an_unknown_id_hears(table_for, action):
    table = setup(table_for, "wyrm")
    hidden_id = npc(table, "hidden")
    unknown_id = hidden_id + 1000
    answers = []
    for character in (hidden_id, unknown_id):
        res = send(table, table.alice, {**action, "character": character}, [3, 4])
        body = res.json()
        answers.append((res.status, json.dumps(body).replace(str(character), "<id>")))
    # Before: a 403 "You can't act for Lurker" told Alice the hidden NPC exists, and its name.
    assert answers[0] == answers[1]
    assert "Lurker" not in json.dumps(answers)
    res = preview(table.alice, {"type": "check", "character": hidden_id, "attribute": "warrior", "dl": 5})
    assert res["status"] == 404 and "Lurker" not in json.dumps(res)


def test_a_player_naming_a_shown_npc_does_not_publish_what_the_gm_did_to_it_unseen(table_for):
    table = setup(table_for, "wyrm")
    foe = npc(table, "hidden", {"rating": 2})
    # While it was hidden, the GM made its mage 6 (stored for the GM); then showed it to the table.
    adjusted = send(table, table.gm, {"type": "adjust_sheet", "character": foe, "changes": {"attributes.mage": 6},
                                      "reason": "the lich"})
    assert adjusted.status == 201, adjusted.json()
    sealed_for_everyone_but_the_gm(table, adjusted.json()["seq"])
    assert send(table, table.gm, {"type": "show_npc", "character": foe, "shown": "full"}).status == 201
    # Alice reads the sheet she may see: mage 2.
    sheet = client_for(table.alice).get(f"/api/campaigns/{SLUG}/characters/{foe}").json()
    assert sheet["state"]["attributes"]["mage"] == 2
    check = {"type": "check", "character": table.hero.id, "attribute": "rogue", "vs_character": foe,
             "vs_attribute": "mage"}
    refused = send(table, table.alice, check, [3, 4])  # its sheet holds what she may not see
    assert refused.status == 422 and "6" not in json.dumps(refused.json()), refused.json()
    # The GM may run it, asked in public: it reads the whole sheet, so it is the GM's to see.
    res = send(table, table.gm, check, [3, 4])
    assert res.status == 201, res.json()
    # Before: a public check whose opposition was the hidden mage 6, for the whole table to read.
    assert seen(table.gm, res.json()["seq"])["payload"]["opposition"]["attribute"] == 6
    sealed_for_everyone_but_the_gm(table, res.json()["seq"])


def test_a_players_round_against_a_kept_npc_says_nothing_of_what_the_gm_did_to_it_since(table_for):
    """The GM pits Alice's hero against a name-only bandit in public (her disclosure of the numbers
    the fight reads then) and, mid-fight, deals the bandit hidden damage (stored for the GM). A combat
    round or an end decides for the bandit's side too, which is the GM's: Alice is refused with the
    same words before and after the hidden damage (who owns the bandit decides, never its sheet); the
    end is the GM's, whose numbers of a kept NPC are hers to disclose."""
    table = setup(table_for, "tale")
    bandit = npc(table, "name", {"template": "veteran"}, name="Bandit")  # brawn 3 + skill 3
    start = send(table, table.gm, {"type": "start_combat", "character": table.hero.id, "vs_character": bandit})
    assert start.status == 201 and start.json()["visibility"] == "public"
    fight = {"type": "combat_round", "character": table.hero.id, "attack": 3, "defence": 1, "their_attack": 1,
             "their_defence": 3}
    end = {"type": "end_contest", "character": table.hero.id, "winner": "mine"}
    before = [send(table, table.alice, action).json() for action in (fight, end)]
    assert all(answer["error"]["code"] == "forbidden" for answer in before), before
    assert send(table, table.gm, fight, [6, 6, 6, 6, 1, 1, 1, 1]).json().get("hidden") is None  # 3 dealt
    hurt = send(table, table.gm, {"type": "take_damage", "character": bandit, "dice": 5, "reason": "a trap"})
    sealed_for_everyone_but_the_gm(table, hurt.json()["seq"])
    assert [send(table, table.alice, action).json() for action in (fight, end)] == before
    ended = send(table, table.gm, end)
    assert ended.status == 201, ended.json()
    stored = Event.objects.get(campaign=table.campaign, seq=ended.json()["seq"])
    assert stored.payload["sides"][str(bandit)]["damage_to_assign"] == 1  # the GM's sheet holds it


# --- previews of actions naming an opponent -----------------------------------------------------

def test_a_preview_naming_an_opponent_reads_both_sheets_for_the_gm_and_players(table_for):
    table = setup(table_for, "wyrm")
    rival = table.create_character(table.bob, "Rival", {"attributes": {"warrior": 4, "rogue": 0, "mage": 5},
                                                        "skills": [{"name": "Awareness", "attribute": "mage"}]})
    named = {"type": "check", "character": table.hero.id, "attribute": "rogue", "vs_character": rival.id,
             "vs_attribute": "mage", "vs_skills": ["Awareness"]}
    by_numbers = {"type": "check", "character": table.hero.id, "attribute": "rogue",
                  "vs": {"attribute": 5, "skills": 1, "static": False}}
    expected = preview(table.alice, by_numbers)
    assert expected["status"] == 200, expected
    # Before: a 400, the preview knew no 'vs_character'.
    for user in (table.gm, table.alice):
        assert preview(user, named) == expected, user.username
    # Bob may not act for Alice's hero (nor preview for it), whoever the opponent.
    assert preview(table.bob, named)["status"] == 403
    # The same refusals as the command: an opponent the sheet does not know, one named twice.
    for action in ({**named, "vs_skills": ["Stealth"]}, {**named, "dl": 5}):
        command = send(table, table.alice, action, [3, 4])
        assert preview(table.alice, action) == {"status": command.status, **command.json()}


def test_a_preview_naming_an_npc_answers_as_the_command_does(table_for):
    table = setup(table_for, "wyrm")
    check = {"type": "check", "character": table.hero.id, "attribute": "rogue", "vs_attribute": "mage"}
    hidden_id, named_only = npc(table, "hidden"), npc(table, "name", name="Stranger")
    shown = npc(table, "hidden", {"rating": 2}, name="Lich")
    adjusted = send(table, table.gm, {"type": "adjust_sheet", "character": shown, "changes": {"attributes.mage": 6},
                                      "reason": "the lich"})
    assert adjusted.status == 201, adjusted.json()
    assert send(table, table.gm, {"type": "show_npc", "character": shown, "shown": "full"}).status == 201
    answers = {}
    for opponent in (hidden_id, hidden_id + 1000, named_only, shown):
        action = {**check, "vs_character": opponent}
        got = preview(table.alice, action)
        command = send(table, table.alice, action, [3, 4])
        assert got == {"status": command.status, **command.json()}, opponent
        answers[opponent] = (got["status"], json.dumps(got["error"]).replace(f"character {opponent}", "<id>"))
    # A hidden NPC answers like an unknown id; the shown one's unseen mage 6 stays unsaid.
    assert answers[hidden_id] == answers[hidden_id + 1000] and answers[hidden_id][0] == 404
    assert "Lurker" not in json.dumps(answers)
    assert answers[named_only][0] == 403 and answers[shown][0] == 422 and "6" not in answers[shown][1]
    # The GM previews against the whole sheet, as the GM's command decides.
    gm = preview(table.gm, {**check, "vs_character": shown})
    by_numbers = preview(table.gm, {**check, "vs": {"attribute": 6, "skills": 0, "static": False}})
    assert gm["status"] == 200 and gm == by_numbers


def test_a_tale_combat_preview_takes_the_opponent_s_pool_from_its_sheet(table_for):
    table = setup(table_for, "tale")
    rival = table.create_character(table.bob, "Rival", get_system("tale").example_sheet)
    named = preview(table.alice, {"type": "start_combat", "character": table.hero.id, "vs_character": rival.id})
    assert named["status"] == 200, named
    table.command(table.gm, {"type": "take_damage", "character": rival.id, "dice": 2, "visibility": "gm"})
    # Whether the hidden damage left Rival a damage to spread must not show (the command's refusal).
    command = send(table, table.alice, {"type": "start_combat", "character": table.hero.id, "vs_character": rival.id})
    refused = preview(table.alice, {"type": "start_combat", "character": table.hero.id, "vs_character": rival.id})
    assert refused == {"status": command.status, **command.json()} and refused["status"] == 422


def test_a_hidden_contest_shapes_the_sheet_of_the_opponent_it_names_on_every_database(table_for):
    """A hidden event concerns the characters its payload makes sides of, not only its own.
    The command's lock asks whether its character has any hidden change (campaign.eventlog.lock_stream);
    on SQLite the sides test is compiled into a JSON path that holds the character's id, which the
    lock's prepared query must fill in like the others (before: it kept its stand-in id, the lock
    answered "none" and Bob heard why the rules refused, from a fight only the GM may see)."""
    table = setup(table_for, "tale")
    rival = table.create_character(table.bob, "Rival", get_system("tale").example_sheet)
    fight = table.command(table.gm, {"type": "start_combat", "character": table.hero.id, "vs_character": rival.id,
                                     "visibility": "gm"}).events[0]
    assert fight.character_id == table.hero.id and str(rival.id) in fight.payload["sides"]
    assert CharacterProjection.objects.get(character=rival).state["contest"] is not None
    res = table.command(table.bob, {"type": "start_contest", "character": rival.id, "vs_pool": 3})
    assert [(e.type, e.visibility) for e in res.events] == [("refused", "gm")]
    sealed_for_everyone_but_the_gm(table, res.events[0].seq)


def test_an_npc_hidden_and_shown_again_can_be_opposed_by_a_player(table_for):
    """Hiding an NPC is the GM's note (``npc_shown`` stored
    ``gm``), and it counted as a hidden change of the NPC's state, which it is not: shown again, the
    NPC kept a sheet "holding what she may not see", and Alice's opposed check against it was refused."""
    table = setup(table_for, "wyrm")
    foe = npc(table, "full", {"rating": 2})
    hid = send(table, table.gm, {"type": "show_npc", "character": foe, "shown": "hidden"}).json()["seq"]
    assert Event.objects.get(campaign=table.campaign, seq=hid).visibility == "gm"
    assert send(table, table.gm, {"type": "show_npc", "character": foe, "shown": "full"}).status == 201
    check = {"type": "check", "character": table.hero.id, "attribute": "rogue", "vs_character": foe,
             "vs_attribute": "mage"}
    res = send(table, table.alice, check, [3, 4])
    assert res.status == 201, res.json()
    assert seen(table.bob, res.json()["seq"])["payload"]["opposition"]["attribute"] == 2


# --- contests on a player's own secret roll ----------------------------------------------------

def readers(stored: Event) -> list[str]:
    """Whom a ``gm`` event names as its readers besides the GM."""
    return [r["username"] for r in stored.payload.get("shared_with", [])]


def wyrm_rivals(table_for):
    """Alice's hero and Bob's rival (mage 5), and an opposed check of the hero's rogue against it."""
    table = setup(table_for, "wyrm")
    table.rival = table.create_character(table.bob, "Rival", {"attributes": {"warrior": 4, "rogue": 0, "mage": 5},
                                                              "skills": []})
    table.opposed = {"type": "check", "character": table.hero.id, "attribute": "rogue",
                     "vs_character": table.rival.id, "vs_attribute": "mage"}
    return table


def test_a_players_contest_on_her_own_secret_roll_is_hers_to_read(table_for):
    """Alice's opposed check on top of her own secret check
    was stored for the GM alone (naming an opponent dropped her as its reader), so she could not read
    her own contest. It read her secret roll, which she sees, and Rival's public sheet: hers and the
    GM's, and to the rest of the table one more GM-only event."""
    table = wyrm_rivals(table_for)
    send(table, table.alice, {"type": "check", "character": table.hero.id, "attribute": "rogue", "dl": 5,
                              "visibility": "secret"}, [3, 4])
    res = send(table, table.alice, table.opposed, [3, 4])
    assert res.status == 201 and res.json().get("hidden") is None, res.json()  # before: sealed from Alice
    stored = Event.objects.get(campaign=table.campaign, seq=res.json()["seq"])
    assert (stored.visibility, readers(stored)) == ("gm", ["alice"])
    assert seen(table.alice, stored.seq)["payload"]["opposition"]["attribute"] == 5
    for user in (table.bob, table.watcher):
        stub = seen(user, stored.seq)
        assert stub["hidden"] is True and stub["visibility"] == "gm", user.username


@pytest.mark.parametrize("bobs_secret, expected", [(False, ["alice"]), (True, [])])
def test_the_gms_contest_is_read_by_whoever_may_read_all_it_read(table_for, bobs_secret, expected):
    """The GM's opposed check of Alice's hero (with her secret roll) against Bob's rival: Alice reads it
    when Rival's sheet is public (before: the GM's alone), no one but the GM when Rival's sheet holds
    Bob's secret roll too (Alice may not read that, Bob may not read hers)."""
    table = wyrm_rivals(table_for)
    send(table, table.alice, {"type": "check", "character": table.hero.id, "attribute": "rogue", "dl": 5,
                              "visibility": "secret"}, [3, 4])
    if bobs_secret:
        send(table, table.bob, {"type": "check", "character": table.rival.id, "attribute": "mage", "dl": 5,
                                "visibility": "secret"}, [5, 6])
    res = send(table, table.gm, table.opposed, [3, 4])
    assert res.status == 201, res.json()
    stored = Event.objects.get(campaign=table.campaign, seq=res.json()["seq"])
    assert (stored.visibility, readers(stored)) == ("gm", expected)
    for user in (table.alice, table.bob, table.watcher):
        assert (seen(user, stored.seq).get("hidden") is None) == (user.username in expected), user.username


def test_a_players_contest_against_her_own_secret_roll_looks_gm_only(table_for):
    """Her opponent's sheet holds her own secret roll (her second character): hers to read, stored
    ``gm`` naming her, as on her own character's (it was stored ``secret``: the envelope told the table
    which it was)."""
    table = wyrm_rivals(table_for)
    second = table.create_character(table.alice, "Twin", {"attributes": {"warrior": 4, "rogue": 0, "mage": 5},
                                                          "skills": []})
    send(table, table.alice, {"type": "check", "character": second.id, "attribute": "mage", "dl": 5,
                              "visibility": "secret"}, [5, 6])
    res = send(table, table.alice, {**table.opposed, "vs_character": second.id}, [3, 4])
    assert res.status == 201 and res.json().get("hidden") is None, res.json()
    stored = Event.objects.get(campaign=table.campaign, seq=res.json()["seq"])
    assert (stored.visibility, readers(stored)) == ("gm", ["alice"])
    assert seen(table.bob, stored.seq)["hidden"] is True


# --- an MdT race reads nothing of its opponent after it starts -----------------------------------

def mdt_race(table, opponent: int) -> dict:
    """The GM starts Alice's public race (presence, to 9) against ``opponent``; a round of it."""
    start = send(table, table.gm, {"type": "start_contest", "character": table.hero.id, "attribute": "presence",
                                   "vs_character": opponent, "target": 9})
    assert start.status == 201 and start.json()["visibility"] == "public", start.json()
    return {"type": "contest_round", "character": table.hero.id}


def test_a_players_race_round_against_a_kept_npc_stays_hers_after_a_change_it_does_not_read(table_for):
    """After any hidden change of the name-only bandit Alice races, every later
    round of hers was sealed from her. A round reads her race (the bandit's pool as the GM named it,
    docs/rules.md MdT 17) and her sheet, nothing of the bandit's: the GM raising its presence unseen
    shapes none of it. A round the GM rolled unseen from the bandit's side changed her race: after
    it, her rounds are the GM's again."""
    table = setup(table_for, "mdt")
    bandit = npc(table, "name", {"rating": 2}, name="Bandit")  # presence 2: 3 dice
    round_ = mdt_race(table, bandit)
    hurt = send(table, table.gm, {"type": "adjust_sheet", "character": bandit,
                                  "changes": {"sheet.attributes.presence": 5}, "reason": "the moon rises"})
    assert hurt.status == 201, hurt.json()
    sealed_for_everyone_but_the_gm(table, hurt.json()["seq"])
    res = send(table, table.alice, round_, [1] * 7)
    assert res.status == 201 and res.json().get("hidden") is None, res.json()  # before: sealed from Alice
    stored = Event.objects.get(campaign=table.campaign, seq=res.json()["seq"])
    assert stored.visibility == "public" and stored.payload["vs_pool"] == 3  # the pool as named
    assert seen(table.bob, stored.seq)["payload"]["round"] == 1
    theirs = send(table, table.gm, {"type": "contest_round", "character": bandit}, [1] * 10)
    sealed_for_everyone_but_the_gm(table, theirs.json()["seq"])
    after = send(table, table.alice, round_, [1] * 7)
    assert after.status == 201 and after.json()["hidden"] is True
    sealed_for_everyone_but_the_gm(table, after.json()["seq"])


def test_a_players_race_round_against_a_sheet_with_a_secret_roll_is_public(table_for):
    """Bob's secret test on his rival shapes nothing Alice's round reads: it is the table's, as asked
    (before: stored for Alice and the GM)."""
    table = setup(table_for, "mdt")
    rival = table.create_character(table.bob, "Rival", get_system("mdt").example_sheet)
    round_ = mdt_race(table, rival.id)
    send(table, table.bob, {"type": "test", "character": rival.id, "attribute": "wits", "visibility": "secret"},
         [8, 8, 8])
    res = send(table, table.alice, round_, [1] * 8)
    stored = Event.objects.get(campaign=table.campaign, seq=res.json()["seq"])
    assert stored.visibility == "public", res.json()
    assert seen(table.watcher, stored.seq)["payload"]["round"] == 1


def test_the_character_ids_a_player_reads_do_not_count_the_hidden_npcs_made_between_them(table_for):
    """Character ids counted up: Alice read Hero 3 and Bob's Scout 5, so a character 4 existed that she
    may not know of: a hidden NPC, made between the two. Its creation reaches her as a sealed stub that
    says who and when, never what (the GM's secret roll reads the same); the gap said what, and how many.
    Ids are drawn at random now, so two characters made in a row are no nearer than any other two (a
    chance of about 2**-52 that this test fails by luck)."""
    table = setup(table_for, "wyrm")
    npc(table, "hidden")
    scout = send(table, table.bob, {"type": "create_character", "name": "Scout",
                                    "sheet": get_system("wyrm").example_sheet}).json()["character"]
    spy = send(table, table.bob, {"type": "create_character", "name": "Spy",
                                  "sheet": get_system("wyrm").example_sheet}).json()["character"]
    listed = client_for(table.alice).get(f"/api/campaigns/{SLUG}/characters").json()["characters"]
    assert [c["id"] for c in listed] == [table.hero.id, scout, spy]  # in the order they were made, as before
    assert scout - table.hero.id != 2  # one hidden NPC between them
    assert spy - scout != 1  # none between them


# --- a sealed contest's opponent, whatever the rules decided ------------------------------------

@pytest.mark.parametrize("gms_hidden_action", [
    {"type": "start_contest", "vs_pool": 3},  # a contest of Alice's hero already runs: hers is refused
    {"type": "straight_roll", "target": 5},  # nothing in her way: hers starts
])
def test_whether_a_sealed_contest_was_refused_does_not_reach_its_opponent(table_for, gms_hidden_action):
    """Alice's contest naming Bob's rival, on top of the
    GM's hidden action on her hero, is sealed from her. Started, it was a side of Rival (a change Bob
    may not see: his next roll of Rival sealed); refused by what the GM hid, it was not (his roll
    public). So the table, from Bob's roll, learned what the GM did to Alice's hero. Whether the rules
    refused a sealed decision is hidden; whom it concerns is not: Rival is its side either way."""
    table = setup(table_for, "tale")
    rival = table.create_character(table.bob, "Rival", get_system("tale").example_sheet)
    hidden = send(table, table.gm, {**gms_hidden_action, "character": table.hero.id, "visibility": "gm"}, [3] * 10)
    assert hidden.status == 201, hidden.json()
    start = send(table, table.alice, {"type": "start_contest", "character": table.hero.id, "skill": "Ride",
                                      "vs_character": rival.id, "vs_skill": "Ride"})
    assert start.status == 201 and start.json()["hidden"] is True, start.json()
    bobs = send(table, table.bob, {"type": "straight_roll", "character": rival.id, "skill": "Ride", "target": 5},
                [3] * 10)
    assert bobs.status == 201 and bobs.json().get("hidden") is True, bobs.json()  # before: public after a refusal
    sealed_for_everyone_but_the_gm(table, bobs.json()["seq"])


@pytest.mark.parametrize("their_pool", [30, 5])  # past the largest pool with her modifier, or not
def test_whether_a_sealed_race_round_was_refused_does_not_reach_the_opponents_round(table_for, their_pool):
    """The same through an MdT race, whose rounds read nothing of the opponent: after the GM's hidden
    change of the pool Alice's race holds for Bob's rival, her round is sealed, refused or rolled; Bob's
    round after it was public after a refused one (his race untouched), sealed after a rolled one."""
    table = setup(table_for, "mdt")
    rival = table.create_character(table.bob, "Rival", get_system("mdt").example_sheet)
    round_ = mdt_race(table, rival.id)
    send(table, table.gm, {"type": "test", "character": table.hero.id, "attribute": "wits", "visibility": "gm"},
         [8, 8, 8])
    kept = send(table, table.gm, {"type": "adjust_sheet", "character": table.hero.id,
                                  "changes": {"contest.vs_pool": their_pool}, "reason": "help arrives"})
    sealed_for_everyone_but_the_gm(table, kept.json()["seq"])
    hers = send(table, table.alice, {**round_, "vs_modifier": 5}, [1] * 40)
    assert hers.status == 201 and hers.json()["hidden"] is True, hers.json()
    bobs = send(table, table.bob, {"type": "contest_round", "character": rival.id}, [1] * 40)
    assert bobs.status == 201 and bobs.json().get("hidden") is True, bobs.json()  # before: public after a refusal
