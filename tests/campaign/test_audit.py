"""The GM's audit page: who may open it, the filtered log, sheets as of an event and
their differences, the chain and dice checks, and advancement rebuilt from the log."""

from __future__ import annotations

import json
import re

import pytest
from django.db import connection, transaction
from django.test import Client

from campaign import audit, triggers
from campaign.audit import LogFilter, advancement, flatten, log_page, sheet_diff
from campaign.eventlog import Draft, append, lock_campaign
from campaign.models import Campaign, CharacterProjection, Event
from campaign.projections import state_as_of
from rules import ScriptedDice, get_system
from tests.campaign.served import client_for
from tests.contract.test_systems import EVENINGS, FACES

MARK = "7d13kh6"  # a notation only the hidden rolls use (not hex, so never inside a hash): a leak if seen


def play(table, system: str = "tote"):
    """A played campaign: the contract's evening for ``system`` (session 1, scripted
    dice), then session 2 with the server's own dice, hidden rolls of each kind,
    a reveal, and an award voided as a mistake. Returns ``table`` with
    ``hero``, ``rival``, ``voided_seq``, ``secret_seq``, ``gm_seq``, ``revealed_seq``."""
    rules = get_system(system)
    table.hero = table.create_character(table.alice, "Hero", rules.example_sheet)
    table.rival = table.create_character(table.bob, "Rival", rules.example_sheet)
    for who, action in EVENINGS[system]:
        action = {**action}
        if action["type"] in rules.actions:
            action["character"] = table.hero.id
        table.command(getattr(table, who), action, dice=ScriptedDice(FACES))
    table.command(table.gm, {"type": "start_session"})
    table.command(table.gm, {"type": "start_scene"})
    table.command(table.alice, {"type": "roll", "notation": "3d6+1", "character": table.hero.id})
    table.command(table.bob, {"type": "add_seed", "seed": "bob's lucky socks"})
    table.secret_seq = table.command(table.alice, {"type": "roll", "notation": MARK, "visibility": "secret"}).events[0].seq
    table.gm_seq = table.command(table.gm, {"type": "roll", "notation": MARK, "visibility": "gm"}).events[0].seq
    table.revealed_seq = table.command(table.bob, {"type": "roll", "notation": "2d10", "visibility": "gm"}).events[0].seq
    table.command(table.gm, {"type": "reveal", "seq": table.revealed_seq})
    table.command(table.gm, {"type": "end_scene"})
    award = {"type": "award_points", "character": table.rival.id, "points": 4, "reason": "a mistake"}
    table.voided_seq = table.command(table.gm, award).events[0].seq
    table.command(table.gm, {"type": "void", "seq": table.voided_seq, "reason": "wrong character"})
    table.command(table.gm, {"type": "award_points", "character": table.rival.id, "points": 2, "reason": "good plan"})
    table.command(table.gm, {"type": "end_session"})
    table.campaign.refresh_from_db()
    return table


def url(table, page: str = "") -> str:
    return f"/campaigns/{table.campaign.slug}/audit/{page}"


def text(response) -> str:
    return re.sub(r"\s+", " ", response.content.decode())


def seqs_on(response) -> list[int]:
    return [int(s) for s in re.findall(r'<tr id="seq-(\d+)"', response.content.decode())]


# --- who may open it ------------------------------------------------------------------------

@pytest.mark.parametrize("page", ["", "sheet/", "advancement/"])
def test_only_the_gm_opens_the_audit_pages_members_get_a_403_outsiders_a_404(played, page):
    assert client_for(played.gm).get(url(played, page)).status_code == 200
    outsider = client_for(played.outsider).get(url(played, page))
    assert outsider.status_code == 404
    for who in ("alice", "bob", "watcher"):
        res = client_for(getattr(played, who)).get(url(played, page))
        assert res.status_code == 403, who
        assert "only the campaign&#x27;s GM opens it" in res.content.decode()
        assert MARK not in res.content.decode()
    assert client_for(played.gm).get(f"/campaigns/nowhere/audit/{page}").status_code == 404
    anonymous = Client().get(url(played, page))
    assert anonymous.status_code == 302 and "/login/" in anonymous["Location"]


def test_the_gm_sees_every_event_and_its_hidden_dice(played):
    res = client_for(played.gm).get(url(played) + "?session=2")
    body = res.content.decode()
    assert MARK in body  # the GM sees hidden rolls' dice
    assert "GM only" in body and "secret" in body
    assert f"revealed in #{played.revealed_seq + 1}" in body


# --- the filtered log -----------------------------------------------------------------------

def test_filters_narrow_the_log_in_sql(played):
    gm = client_for(played.gm)
    cases = {
        "session=2": Event.objects.filter(campaign=played.campaign, session=2),
        "scene=2": Event.objects.filter(campaign=played.campaign, scene=2),
        f"character={played.rival.id}": Event.objects.filter(campaign=played.campaign, character=played.rival),
        "type=roll": Event.objects.filter(campaign=played.campaign, type="roll"),
        f"actor={played.bob.id}": Event.objects.filter(campaign=played.campaign, actor=played.bob),
        f"session=2&type=roll&actor={played.alice.id}": Event.objects.filter(
            campaign=played.campaign, session=2, type="roll", actor=played.alice),
    }
    for query, expected in cases.items():
        res = gm.get(url(played) + "?" + query)
        assert res.status_code == 200
        want = sorted(expected.values_list("seq", flat=True))
        assert want and seqs_on(res) == want, query
        assert f"{len(want)} matching event" in text(res)


def test_nonsense_filters_are_ignored_not_errors(played):
    gm = client_for(played.gm)
    for query in ("session=x", "scene=-1", "character=999999", "type=<script>", "actor=abc", "after=-3",
                  "before=zz", "start=0", "session=99999999999999999999", "verify_dice=x", "after=%C2%B2",
                  "verify_dice=%C2%B2", "start=%C2%B2", "session=%C2%B2"):
        res = gm.get(url(played) + "?" + query)
        assert res.status_code == 200, query
        assert "<script>" not in res.content.decode().split("<main", 1)[1].replace("&lt;script&gt;", "")


def test_keyset_pages_cover_the_log_once_in_order(played, monkeypatch):
    monkeypatch.setattr(audit, "PAGE_SIZE", 7)
    gm = client_for(played.gm)
    seen, link = [], url(played)
    while link:
        res = gm.get(link)
        seen += seqs_on(res)
        found = re.search(r'<a href="([^"]+)" rel="next">', res.content.decode())
        link = found.group(1).replace("&amp;", "&") if found else None
    assert seen == list(range(1, played.campaign.last_seq + 1))
    last = gm.get(url(played) + f"?before={played.campaign.last_seq + 1}")
    assert seqs_on(last) == list(range(played.campaign.last_seq - 6, played.campaign.last_seq + 1))
    previous = re.search(r'<a href="([^"]+)" rel="prev">', last.content.decode()).group(1).replace("&amp;", "&")
    assert seqs_on(gm.get(previous)) == list(range(played.campaign.last_seq - 13, played.campaign.last_seq - 6))
    start = gm.get(url(played) + "?start=5")
    assert seqs_on(start)[0] == 5


def test_filtered_pages_keep_the_filter(played):
    page = log_page(played.campaign, LogFilter(session=2), size=3)
    assert page.has_next and not page.has_previous
    second = log_page(played.campaign, LogFilter(session=2), after=page.last_seq, size=3)
    assert second.has_previous
    assert all(e["session"] == 2 for e in page.events + second.events)
    assert page.total == Event.objects.filter(campaign=played.campaign, session=2).count()


def test_voided_events_show_as_voided(played):
    res = client_for(played.gm).get(url(played) + f"?character={played.rival.id}")
    body = text(res)
    row = re.search(rf'<tr id="seq-{played.voided_seq}" class="([^"]*)"', body)
    assert row and "voided" in row.group(1)
    assert "Voided in <a" in body and "wrong character" in body
    page = log_page(played.campaign, LogFilter(character=played.rival.id))
    voided = [e for e in page.events if e.get("voided")]
    assert [e["seq"] for e in voided] == [played.voided_seq]
    assert voided[0]["voided_by"]["reason"] == "wrong character"


def test_a_void_says_what_it_voided_as_the_log_says_it(played):
    """It read "voided #29 (points awarded): wrong character": the voided event's type. The table's
    line names the event by its own line (static/talekeeper/describe.js); so do the audit page and the CSV."""
    void = log_page(played.campaign, LogFilter(), after=played.voided_seq, size=1).events[0]
    assert void["summary"] == f"voided #{played.voided_seq} (earned 4 XP “a mistake”), reason: wrong character"
    assert void["summary"] in text(client_for(played.gm).get(url(played) + f"?after={played.voided_seq}"))


def test_a_reveal_says_what_it_revealed_as_the_log_says_it(played):
    """It read "revealed #31 (roll)": the type's words. The table's line quotes the revealed event's own
    line (static/talekeeper/describe.js); so do the audit page and the CSV."""
    roll = Event.objects.get(campaign=played.campaign, seq=played.revealed_seq)
    reveal = log_page(played.campaign, LogFilter(), after=played.revealed_seq, size=1).events[0]
    assert reveal["summary"] == f"revealed #{played.revealed_seq}: rolled 2d10 = {roll.payload['total']}"
    assert reveal["summary"] in text(client_for(played.gm).get(url(played) + f"?after={played.revealed_seq}"))


@pytest.mark.parametrize("body", [{"type": ["roll"]}, {"type": "roll_revealed"}, {"type": "roll", "payload": [1]}])
def test_a_reveal_no_server_wrote_reads_plainly(played, body):
    with transaction.atomic():
        reveal = append(lock_campaign(played.campaign.id), [Draft("roll_revealed", {"seq": 1, "body": body})],
                        actor=played.gm)[0]
    assert audit.describe(audit.serialize_event(reveal)).startswith("revealed #1")
    assert client_for(played.gm).get(url(played)).status_code == 200


def test_the_filters_use_indexes(played):
    """Each filter is answered from an index on (campaign, <filter>, seq), never a scan of the log."""
    expected = {"session": "campaign_event_audit_session", "scene": "campaign_event_audit_scene",
                "actor": "campaign_event_audit_actor"}
    for field, index in expected.items():
        value = {"session": 2, "scene": 2, "actor": played.bob.id}[field]
        qs = LogFilter(**{field: value}).queryset(played.campaign).order_by("seq")[:50]
        sql, params = qs.query.sql_with_params()
        with transaction.atomic(), connection.cursor() as cursor:
            if connection.vendor == "postgresql":
                cursor.execute("SET LOCAL enable_seqscan = off")
                cursor.execute("EXPLAIN " + sql, params)
            else:
                cursor.execute("EXPLAIN QUERY PLAN " + sql, params)
            plan = " ".join(str(row) for row in cursor.fetchall())
        assert index in plan, (field, plan)


def test_page_cost_does_not_grow_with_the_log(played, django_assert_max_num_queries):
    """A page of the audit log is a bounded number of queries, however long the log."""
    with transaction.atomic():
        campaign = lock_campaign(played.campaign.id)
        drafts = [Draft("roll", {"notation": "1d6", "total": 3, "dice_log": [[6, 3]]}, 1, None) for _ in range(600)]
        append(campaign, drafts, actor=played.gm)
    gm = client_for(played.gm)
    gm.get(url(played))  # warm caches (types, sessions)
    with django_assert_max_num_queries(30):
        res = gm.get(url(played) + "?type=roll&verify=")
    assert res.status_code == 200 and len(seqs_on(res)) == audit.PAGE_SIZE


# --- sheets as of an event, and differences --------------------------------------------------

def test_sheet_as_of_each_event_is_the_state_then(played):
    gm = client_for(played.gm)
    seqs = list(Event.objects.filter(campaign=played.campaign, character=played.hero).values_list("seq", flat=True))
    for seq in seqs[:: max(1, len(seqs) // 5)]:
        res = gm.get(url(played, "sheet/") + f"?character={played.hero.id}&a={seq}")
        assert res.status_code == 200
        state = state_as_of(played.hero, seq)
        body = res.content.decode()
        earned = flatten(state)["points.earned"]
        assert f"<code>points.earned</code></th><td><code>{earned}</code>" in body
        assert f"Hero as of #{seq}" in body


def test_the_log_links_each_event_to_its_sheet_and_its_changes(played):
    res = client_for(played.gm).get(url(played) + f"?character={played.hero.id}")
    body = res.content.decode()
    seq = Event.objects.filter(campaign=played.campaign, character=played.hero).last().seq
    assert f"sheet/?character={played.hero.id}&amp;a={seq}" in body
    assert f"sheet/?character={played.hero.id}&amp;a={seq - 1}&amp;b={seq}" in body


def test_difference_between_two_events_names_key_paths_old_and_new(played):
    award = Event.objects.filter(campaign=played.campaign, character=played.rival, payload__points=2).get()
    res = client_for(played.gm).get(url(played, "sheet/") + f"?character={played.rival.id}&a={award.seq - 1}&b={award.seq}")
    body = text(res)
    assert f"Changes to Rival from #{award.seq - 1} to #{award.seq}" in body
    before = state_as_of(played.rival, award.seq - 1)["points"]["earned"]
    assert re.search(rf"<code>points.earned</code></th> ?<td class=\"old\"><code>{before}</code></td> ?"
                     rf"<td aria-hidden=\"true\">→</td> ?<td class=\"new\"><code>{before + 2}</code>", body)
    same = client_for(played.gm).get(url(played, "sheet/") + f"?character={played.rival.id}&a={award.seq}&b={award.seq}")
    assert "Nothing on Rival's sheet differs" in same.content.decode()


def test_sheet_form_refuses_nonsense_politely(played):
    gm = client_for(played.gm)
    for query in ("character=x", "character=999", f"character={played.hero.id}&a=0",
                  f"character={played.hero.id}&a=99999999", f"character={played.hero.id}&b=abc"):
        res = gm.get(url(played, "sheet/") + "?" + query)
        assert res.status_code == 200, query
    before = gm.get(url(played, "sheet/") + f"?character={played.hero.id}&a=1")
    assert "did not exist yet at #1" in before.content.decode()


def test_sheet_diff_of_nested_states():
    old = {"points": {"earned": 3, "spent": 1}, "skills": [{"name": "Stealth"}], "dice": [1, 2], "gone": True}
    new = {"points": {"earned": 5, "spent": 1}, "skills": [{"name": "Stealth"}, {"name": "Lore"}], "dice": [1, 3],
           "fresh": {"a": 1}}
    changes = {c.path: (c.old_text(), c.new_text(), c.kind) for c in sheet_diff(old, new)}
    assert changes == {
        "dice": ("[1, 2]", "[1, 3]", "changed"),
        "fresh.a": ("—", "1", "added"),
        "gone": ("true", "—", "removed"),
        "points.earned": ("3", "5", "changed"),
        "skills[1].name": ("—", '"Lore"', "added"),
    }
    assert sheet_diff(old, old) == []
    assert [c.path for c in sheet_diff(None, {"x": 1})] == ["x"]


# --- chain and dice checks ----------------------------------------------------------------------

def test_the_chain_result_is_shown_and_a_broken_chain_is_named(played):
    gm = client_for(played.gm)
    assert f"all {played.campaign.last_seq} events are linked and unaltered" in text(gm.get(url(played)))
    target = Event.objects.get(campaign=played.campaign, seq=played.voided_seq)
    triggers.uninstall(connection)
    try:
        with connection.cursor() as cursor:
            cursor.execute("UPDATE campaign_event SET payload = %s WHERE id = %s",
                           [json.dumps({**target.payload, "points": 40}), target.id])
    finally:
        triggers.install(connection)
    body = text(gm.get(url(played)))
    assert f"The hash chain breaks at event #{played.voided_seq}" in body


def test_a_long_log_is_verified_on_request(played, monkeypatch):
    from campaign import audit_views

    monkeypatch.setattr(audit_views, "AUTO_VERIFY_MAX", 3)
    gm = client_for(played.gm)
    assert "checked on request" in text(gm.get(url(played)))
    assert "are linked and unaltered" in text(gm.get(url(played) + "?verify=chain"))


def test_verify_dice_per_finished_session(played):
    gm = client_for(played.gm)
    ok = text(gm.get(url(played) + "?verify_dice=2"))
    assert re.search(r'id="dice-result-2"> ?<span aria-hidden="true">✔</span> ?\d+ dice in \d+ events match', ok)
    # Session 1 was played with scripted test dice: the seed does not give them, and the check says where.
    bad = text(gm.get(url(played) + "?verify_dice=1"))
    assert re.search(r'id="dice-result-1"> ?<span aria-hidden="true">✘</span> ?#\d+: die \d+ \(d\d+\) shows', bad)
    played.command(played.gm, {"type": "start_session"})
    running = text(gm.get(url(played)))
    assert "the seed is secret until the session ends" in running


# --- advancement ---------------------------------------------------------------------------------

@pytest.mark.parametrize("system", sorted(EVENINGS))
def test_advancement_is_rebuilt_from_the_log_for_every_system(table_for, system):
    table = play(table_for(system), system)
    report = {a.character_id: a for a in advancement(Campaign.objects.get(pk=table.campaign.pk))}
    for character in (table.hero, table.rival):
        points = CharacterProjection.objects.get(character=character).state["points"]
        adv = report[character.id]
        assert (adv.earned, adv.spent, adv.available) == (points["earned"], points["spent"],
                                                          points["earned"] - points["spent"])
        counted = [h for h in adv.history if not h.voided]
        assert sum(h.deltas.get("earned", 0) for h in counted) == points["earned"]
        assert sum(h.deltas.get("spent", 0) for h in counted) == points["spent"]
        for h in adv.history:  # each entry agrees with the sheet as of its event
            if not h.voided:
                then = state_as_of(character, h.seq)["points"]
                assert (h.earned, h.spent) == (then["earned"], then["spent"])
    hero = report[table.hero.id]
    assert hero.history and any(h.deltas.get("spent") for h in hero.history), "the evening buys an advance"
    rival = report[table.rival.id]
    voided = [h for h in rival.history if h.voided]
    assert [(h.seq, h.deltas, h.why) for h in voided] == [(table.voided_seq, {"earned": 4}, "a mistake")]
    good = [h for h in rival.history if not h.voided]
    assert [(h.deltas, h.why, h.actor, h.earned) for h in good] == [({"earned": 2}, "good plan", "gm", 2)]


def test_advancement_page_shows_history_with_who_why_and_deltas(played):
    body = text(client_for(played.gm).get(url(played, "advancement/")))
    assert 'id="character-%d"' % played.rival.id in body
    assert "+2 earned" in body and "good plan" in body
    assert "<td>points awarded" in body and "<td>points_awarded" not in body  # the event in words, as the log reads
    assert re.search(r'<tr class="voided">.*?\+4 earned.*?a mistake', body)


def test_the_advancement_card_of_the_gms_npc_says_npc_not_the_gms_name(played):
    """A play-test's find: the GM's NPC's card read "Bandit (gm)", as if the GM played it as a hero."""
    npc = played.command(played.gm, {"type": "create_character", "npc": True, "name": "Bandit",
                                     "quick": {"template": "minion"}}).events[0].character_id
    body = text(client_for(played.gm).get(url(played, "advancement/")))
    assert re.search(r'id="adv-%d">Bandit <span class="muted small">\(NPC\)</span>' % npc, body)
    assert re.search(r'id="adv-%d">[^<]+ <span class="muted small">\(alice\)</span>' % played.hero.id, body)


def test_advancement_follows_new_events_and_voids(played):
    campaign = Campaign.objects.get(pk=played.campaign.pk)
    first = {a.character_id: a.earned for a in advancement(campaign)}
    seq = played.command(played.gm, {"type": "award_points", "character": played.rival.id, "points": 5,
                                     "reason": "late"}).events[0].seq
    campaign.refresh_from_db()
    assert {a.character_id: a.earned for a in advancement(campaign)}[played.rival.id] == first[played.rival.id] + 5
    played.command(played.gm, {"type": "void", "seq": seq, "reason": "no"})
    campaign.refresh_from_db()
    after = {a.character_id: a for a in advancement(campaign)}[played.rival.id]
    assert after.earned == first[played.rival.id]
    assert [h.seq for h in after.history if h.voided] == [played.voided_seq, seq]


def award_form(client, played) -> str:
    """The token of the award form the advancement page shows."""
    body = text(client.get(url(played, "advancement/")))
    return re.search(r'name="token" value="([0-9a-f]{32})"', body).group(1)


@pytest.mark.parametrize("system", sorted(EVENINGS))
def test_the_gm_awards_the_evening_from_the_advancement_page_once(table_for, system):
    """An evening's play-test: awarding meant each character's tab on the table, GM tools, one by one.
    The page's form sends one award_points per character through the pipeline; sent twice, stored once."""
    table = play(table_for(system), system)
    gm = client_for(table.gm)
    spec = table.campaign.rules.actions["award_points"].fields["points"]
    before = {a.character_id: a.earned for a in advancement(Campaign.objects.get(pk=table.campaign.pk))}
    form = {"token": award_form(gm, table), f"points-{table.hero.id}": "2", f"points-{table.rival.id}": "",
            "reason": "the bridge held"}
    for _ in range(2):  # a reload of the answer, a double click
        res = gm.post(url(table, "advancement/award/"), form)
        assert res.status_code == 302 and res["Location"].endswith("/audit/advancement/")
    after = {a.character_id: a for a in advancement(Campaign.objects.get(pk=table.campaign.pk))}
    assert after[table.hero.id].earned == before[table.hero.id] + 2
    assert after[table.rival.id].earned == before[table.rival.id]
    awards = Event.objects.filter(campaign=table.campaign, type="points_awarded", payload__reason="the bridge held")
    assert [(e.character_id, e.payload["points"], e.actor_id) for e in awards] == [(table.hero.id, 2, table.gm.id)]
    page = text(gm.get(url(table, "advancement/")))
    assert f"Awarded {spec.label}: 2 to {table.hero.name}." in page
    assert f'max="{spec.hi}"' in page and f'min="{spec.lo}"' in page  # the rules' own limits


def test_the_award_form_sent_twice_does_not_say_it_awarded_twice(played):
    """The same form sent again stores nothing (its ids replay), so it must not say
    "Awarded" again: a GM reading two "Awarded 2 to Hero" lines believes Hero got 4."""
    gm = client_for(played.gm)
    form = {"token": award_form(gm, played), f"points-{played.hero.id}": "2", "reason": "the bridge held"}
    assert gm.post(url(played, "advancement/award/"), form).status_code == 302
    text(gm.get(url(played, "advancement/")))  # the first answer's message, read
    assert gm.post(url(played, "advancement/award/"), form).status_code == 302
    page = text(gm.get(url(played, "advancement/")))
    assert "Awarded" not in page and f"Already awarded by this form, not again: 2 to {played.hero.name}." in page
    assert Event.objects.filter(campaign=played.campaign, type="points_awarded",
                                payload__reason="the bridge held").count() == 1


def test_the_award_form_sent_again_with_other_points_says_so_in_the_game_s_words(played):
    """A play-test's find: the same form sent again with the points changed answered the pipeline's
    "Command id 'award-…' was already used for a different action." The GM is told the form was sent
    already, what it awarded, and how to award again; nothing is stored twice."""
    gm = client_for(played.gm)
    form = {"token": award_form(gm, played), f"points-{played.hero.id}": "2", "reason": "the bridge held"}
    assert gm.post(url(played, "advancement/award/"), form).status_code == 302
    text(gm.get(url(played, "advancement/")))  # the first answer's message, read
    again = gm.post(url(played, "advancement/award/"), {**form, f"points-{played.hero.id}": "3"})
    page = text(again)
    assert again.status_code == 422
    assert "already used" not in page and "Command id" not in page and "award-" not in page.split("<form")[0]
    assert (f"This form was already sent for {played.hero.name} with other XP or another reason "  # TOTE's word
            f"(it awarded 2): nothing more was awarded.") in page
    assert "open the advancement page again for a new form" in page
    assert [e.payload["points"] for e in Event.objects.filter(campaign=played.campaign, type="points_awarded",
                                                              payload__reason="the bridge held")] == [2]


def test_an_award_the_rules_refuse_stores_nothing_and_says_why(played):
    gm = client_for(played.gm)
    count = Event.objects.filter(campaign=played.campaign).count()
    token = award_form(gm, played)
    too_many = gm.post(url(played, "advancement/award/"), {"token": token, f"points-{played.hero.id}": "100000"})
    assert too_many.status_code == 400 and "less than or equal to" in text(too_many)
    nothing = gm.post(url(played, "advancement/award/"), {"token": token, "reason": "x"})
    assert nothing.status_code == 400 and "at least one character" in text(nothing)
    forged = gm.post(url(played, "advancement/award/"), {"token": "../../x", f"points-{played.hero.id}": "1"})
    assert forged.status_code == 400
    assert Event.objects.filter(campaign=played.campaign).count() == count


def test_only_the_gm_may_award_from_the_page(played):
    for user in (played.alice, played.watcher):
        client = client_for(user)
        assert client.get(url(played, "advancement/")).status_code == 403
        res = client.post(url(played, "advancement/award/"), {"token": "a" * 32, f"points-{played.hero.id}": "5"})
        assert res.status_code == 403
    assert not Event.objects.filter(campaign=played.campaign, command__client_id__startswith="award-").exists()


def test_points_summary_on_the_audit_page(played):
    body = text(client_for(played.gm).get(url(played)))
    points = CharacterProjection.objects.get(character=played.rival).state["points"]
    assert re.search(rf'>Rival</a></th><td>bob</td> ?<td class="num">{points["earned"]}</td>', body)


def test_states_in_one_pass_equal_state_as_of_even_around_voids(played):
    seqs = list(range(1, played.campaign.last_seq + 1))
    for character in (played.hero, played.rival):
        together = audit.states_as_of(character, seqs)
        for seq in seqs:
            alone = state_as_of(character, seq)
            assert together[seq] == (json.loads(json.dumps(alone)) if alone is not None else None), (character, seq)
    # Before the void, the voided award still counted; from the void on, it does not.
    before = audit.states_as_of(played.rival, [played.voided_seq, played.voided_seq + 1])
    assert before[played.voided_seq]["points"]["earned"] == before[played.voided_seq + 1]["points"]["earned"] + 4


def test_event_types_are_every_type_in_the_log(played):
    expected = sorted(set(Event.objects.filter(campaign=played.campaign).values_list("type", flat=True)))
    assert audit.event_types(played.campaign) == expected
    assert audit.event_types(Campaign(pk=987654)) == []


def test_the_audit_numbers_events_as_the_table_does_and_says_utc(played):
    page = text(client_for(played.gm).get(url(played)))
    assert f'<th scope="row" class="num">#{played.voided_seq}</th>' in page
    assert "Started (UTC)" in page and "Time (UTC)" in page


def test_players_find_their_dice_statistics_and_exports_on_the_table(played):
    alice = client_for(played.alice)
    table_page = alice.get(f"/campaigns/{played.campaign.slug}/").content.decode()
    links = re.findall(r'<a href="([^"]+)"[^>]*>(Dice statistics|JSON Lines|CSV)</a>', table_page)
    assert [name for _, name in links] == ["Dice statistics", "JSON Lines", "CSV"]
    assert f"/sessions/{played.campaign.session_count}/dice/" in links[0][0]
    for href, _ in links:
        assert alice.get(href).status_code == 200, href


def alice_tested_in_secret(table_for, target: int):
    """A TOTE table in session whose hero Alice made a secret Strike test (10 with its dice) against ``target``."""
    table = table_for("tote")
    hero = table.create_character(table.alice, "Hero", get_system("tote").example_sheet)
    table.command(table.gm, {"type": "start_session"})
    table.command(table.alice, {"type": "skill_test", "character": hero.id, "skill": "Strike", "target": target,
                                "visibility": "secret"}, dice=ScriptedDice([5, 2, 5]))
    return table, hero


def test_a_gm_decision_a_player_reads_says_whom_on_the_audit_page(table_for):
    """Stored ``gm`` with its readers in the payload (campaign/visibility/readers.py), it says whom, as the table does."""
    table, hero = alice_tested_in_secret(table_for, target=9)
    grant = table.command(table.gm, {"type": "grant_resolve", "character": hero.id}).events[0]
    assert grant.visibility == "gm"
    row = re.search(rf'<tr id="seq-{grant.seq}".*?</tr>', text(client_for(table.gm).get(url(table))))
    assert row and ">shared with alice</span>" in row.group(0)


def test_a_players_action_on_her_own_secret_roll_reads_secret_on_the_audit_page(table_for):
    """Stored ``gm`` naming her alone (campaign/visibility/readers.py), it is a secret roll to its readers."""
    table, hero = alice_tested_in_secret(table_for, target=11)  # short of it: Resolve to spend
    spent = table.command(table.alice, {"type": "spend_resolve", "character": hero.id, "totem": "Bear"}).events[0]
    assert spent.visibility == "gm" and spent.payload["shared_with"][0]["username"] == "alice"
    row = re.search(rf'<tr id="seq-{spent.seq}".*?</tr>', text(client_for(table.gm).get(url(table))))
    assert row and ">secret</span>" in row.group(0) and "shared with" not in row.group(0)


@pytest.mark.parametrize("seq, said", [([1], "a list"), ({"seq": 1}, "an object")])
def test_the_audit_page_reads_a_void_whose_seq_is_no_number(played, seq, said):
    """A payload no server wrote (``seq`` a list): its line says it as it is; the page was a 500
    (``voided_events`` put it in a set)."""
    with transaction.atomic():
        void = append(lock_campaign(played.campaign.id), [Draft("event_voided", {"seq": seq, "type": "roll"})],
                      actor=played.gm)[0]
    res = client_for(played.gm).get(url(played))
    assert res.status_code == 200
    assert audit.describe(audit.serialize_event(void)).startswith(f"voided #{said} (roll event)")


def test_a_revealed_voided_roll_reads_voided_with_its_void_in_a_members_csv(played):
    """The GM voids a roll while only the GM reads it (the void is the GM's too), then reveals it: its
    void comes out with it, and Bob's CSV reads both (before: the roll public, its void sealed)."""
    import csv
    import io

    void = played.command(played.gm, {"type": "void", "seq": played.gm_seq, "reason": "hush"}).events[0]
    played.command(played.gm, {"type": "reveal", "seq": played.gm_seq})
    res = client_for(played.bob).get(f"/api/campaigns/{played.campaign.slug}/export.csv")
    rows = {int(r["seq"]): r for r in csv.DictReader(io.StringIO(b"".join(res.streaming_content).decode()))}
    assert rows[void.seq]["hidden"] == "false" and rows[played.gm_seq]["hidden"] == "false"
    assert rows[played.gm_seq]["voided"] == "true" and "hush" in rows[void.seq]["summary"]
