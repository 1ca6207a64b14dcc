"""Dice statistics: the chi-square test done exactly, counting only the dice a viewer
may see, the chart, the members' session page and the API."""

from __future__ import annotations

import math
import re

import pytest
from django.test import Client
from hypothesis import given, settings, strategies as st

from campaign.models import ApiToken, Event
from campaign.stats import DieStats, chi2_sf, chi_square, count_dice, dice_stats, svg_chart
from campaign.visibility import Viewer
from tests.campaign.test_audit import MARK

# (x, df, P(X >= x)): textbook critical values of the chi-square distribution.
CRITICAL = [
    (3.841458820694124, 1, 0.05),
    (6.634896601021214, 1, 0.01),
    (5.991464547107979, 2, 0.05),
    (11.070497693516351, 5, 0.05),
    (15.08627246938899, 5, 0.01),
    (16.918977604620448, 9, 0.05),
    (30.14352720564616, 19, 0.05),
    (123.22522145336181, 99, 0.05),
    (1.1454762260617692, 5, 0.95),
]


@pytest.mark.parametrize("x, df, p", CRITICAL)
def test_chi2_survival_matches_critical_values(x, df, p):
    assert chi2_sf(x, df) == pytest.approx(p, rel=1e-9)


@settings(max_examples=200, deadline=None)
@given(x=st.floats(0.001, 400), k=st.integers(1, 60))
def test_chi2_survival_agrees_with_its_closed_forms(x, k):
    # df = 2: exp(-x/2). Any even df: e^(-x/2) * sum (x/2)^i / i!. df = 1: erfc(sqrt(x/2)).
    assert chi2_sf(x, 2) == pytest.approx(math.exp(-x / 2), rel=1e-12, abs=1e-300)
    y = x / 2
    poisson = sum(math.exp(-y) * y**i / math.factorial(i) for i in range(k)) if y < 700 else None
    if poisson is not None:
        assert chi2_sf(x, 2 * k) == pytest.approx(poisson, rel=1e-9, abs=1e-300)
    assert chi2_sf(x, 1) == pytest.approx(math.erfc(math.sqrt(y)), rel=1e-12, abs=1e-300)
    assert 0.0 <= chi2_sf(x, k) <= 1.0
    assert chi2_sf(x, k) >= chi2_sf(x + 1, k) - 1e-14  # a larger statistic is never more likely
    assert chi2_sf(x, k + 1) >= chi2_sf(x, k) - 1e-14  # more freedom, more room


def test_chi2_edges():
    assert chi2_sf(0, 5) == 1.0
    assert chi2_sf(float("inf"), 5) == 0.0
    assert chi2_sf(1e6, 5) == 0.0
    for bad in ((1, 0), (1, -1), (1, 2.5), (-1, 3), (float("nan"), 3), (1, True)):
        with pytest.raises(ValueError):
            chi2_sf(*bad)


def test_chi_square_of_counts():
    assert chi_square([10, 10, 10, 10, 10, 10]) == (0.0, 5, 1.0)
    statistic, df, p = chi_square([60, 0, 0, 0, 0, 0])
    assert (statistic, df) == (300.0, 5) and p < 1e-60
    assert chi_square([]) == (0.0, 0, 1.0)
    assert chi_square([0, 0]) == (0.0, 1, 1.0)


def test_verdicts():
    fair = DieStats(6, [98, 103, 101, 95, 104, 99])
    assert fair.enough and not fair.unusual and fair.verdict.startswith("nothing unusual")
    loaded = DieStats(6, [30, 30, 30, 30, 30, 150])
    assert loaded.unusual and "1 time in" in loaded.verdict
    few = DieStats(20, [1] * 20)
    assert not few.enough and few.verdict.startswith("too few to judge: 20 of the 100")


def rolls(*entries):
    """Serialized events: (seq, visibility, actor_id, dice_log)."""
    return [{"seq": s, "visibility": v, "actor_id": a, "payload": {"dice_log": log, "commitment": "c"}}
            for s, v, a, log in entries]


def test_hidden_dice_count_only_for_who_may_see_them():
    events = rolls((1, "public", 2, [[6, 1], [6, 2]]), (2, "secret", 2, [[6, 6]]), (3, "gm", 2, [[20, 20]]),
                   (4, "gm", 3, [[8, 8]]), (5, "public", 3, []))
    revealed = {4}
    gm, roller, other = Viewer(1, "gm"), Viewer(2, "player"), Viewer(3, "player")
    watcher = Viewer(4, "spectator")
    assert count_dice(events, gm, revealed).total == 5
    seen = count_dice(events, roller, revealed)
    assert (seen.total, seen.hidden) == (4, 1)  # her public and secret dice and the revealed d8; not the GM-only d20
    assert {d.sides for d in seen.dice} == {6, 8}
    assert count_dice(events, other, revealed).total == 3
    w = count_dice(events, watcher, revealed)
    assert (w.total, w.hidden, w.events) == (3, 2, 2)
    assert count_dice(events, watcher).total == 2


def test_dice_stats_from_the_log_match_every_dice_log(played):
    gm = Viewer(played.gm.id, "gm")
    stats = dice_stats(played.campaign, gm)
    expected: dict[int, list[int]] = {}
    for event in Event.objects.filter(campaign=played.campaign):
        for sides, face in event.payload.get("dice_log", []):
            expected.setdefault(sides, [0] * sides)[face - 1] += 1
    assert {d.sides: d.counts for d in stats.dice} == expected
    session2 = dice_stats(played.campaign, gm, session=2)
    assert session2.total == sum(len(e.payload.get("dice_log", []))
                                 for e in Event.objects.filter(campaign=played.campaign, session=2))
    hero = dice_stats(played.campaign, gm, character=played.hero.id)
    assert 0 < hero.total < stats.total


def test_players_stats_leave_out_dice_they_may_not_see(played):
    gm = dice_stats(played.campaign, Viewer(played.gm.id, "gm"), session=2).total
    alice = dice_stats(played.campaign, Viewer(played.alice.id, "player"), session=2)
    bob = dice_stats(played.campaign, Viewer(played.bob.id, "player"), session=2)
    # 7d13 secret by alice, 7d13 GM-only by the GM; bob's GM-only 2d10 was revealed.
    assert gm - alice.total == 7 and alice.hidden == 1
    assert gm - bob.total == 14 and bob.hidden == 2
    assert 13 in {d.sides for d in alice.dice} and 13 not in {d.sides for d in bob.dice}


def test_the_chart_is_an_accessible_svg():
    die = DieStats(6, [10, 12, 8, 9, 11, 10])
    svg = svg_chart(die, "t1")
    assert svg.startswith("<svg") and 'role="img"' in svg and 'aria-labelledby="t1-title t1-desc"' in svg
    assert '<title id="t1-title">d6: 60 dice' in svg and "p = " in svg
    assert "face 3: 8" in svg  # the description says every number
    assert svg.count('<rect class="bar') == 6
    assert 'class="expected"' in svg
    ys = [float(y) for y in re.findall(r'<rect class="bar" x="[\d.]+" y="([\d.]+)"', svg)]
    assert ys[1] == min(ys)  # the tallest bar (12) is highest up
    assert "&lt;b&gt;" in svg_chart(DieStats(2, [1, 1]), "t2", caption="<b>")


def test_members_see_the_session_page_with_their_dice(played):
    for who in ("gm", "alice", "bob", "watcher"):
        client = Client()
        client.force_login(getattr(played, who))
        res = client.get(f"/campaigns/{played.campaign.slug}/sessions/2/dice/")
        assert res.status_code == 200, who
        body = res.content.decode()
        assert "Were the dice fair in session 2?" in body and "<svg" in body
        assert ("d13" in body) == (who in ("gm", "alice")), who
    outsider = Client()
    outsider.force_login(played.outsider)
    assert outsider.get(f"/campaigns/{played.campaign.slug}/sessions/2/dice/").status_code == 404
    gm = Client()
    gm.force_login(played.gm)
    assert gm.get(f"/campaigns/{played.campaign.slug}/sessions/9/dice/").status_code == 404
    one = gm.get(f"/campaigns/{played.campaign.slug}/sessions/2/dice/?character={played.hero.id}")
    assert "Hero's dice" in one.content.decode()


def test_the_audit_page_shows_stats_for_the_filtered_events(played):
    gm = Client()
    gm.force_login(played.gm)
    body = gm.get(f"/campaigns/{played.campaign.slug}/audit/?session=2").content.decode()
    assert "Were the dice fair?" in body and "(session 2)" in body
    assert body.count('<svg class="dice-chart"') == len(dice_stats(played.campaign, Viewer(played.gm.id, "gm"),
                                                                   session=2).dice)


def test_dice_stats_api_per_role(played):
    def get(user, query=""):
        key = ApiToken.objects.create(user=user).key
        return Client().get(f"/api/campaigns/{played.campaign.slug}/dice-stats{query}",
                            HTTP_AUTHORIZATION=f"Bearer {key}")

    gm = get(played.gm, "?session=2").json()
    alice = get(played.alice, "?session=2").json()
    watcher = get(played.watcher, "?session=2").json()
    assert gm["dice"] - alice["dice"] == 7 and gm["dice"] - watcher["dice"] == 14
    assert {"answer", "by_sides", "hidden_events"} <= set(gm)
    d6 = next(d for d in gm["by_sides"] if d["sides"] == 6)
    assert {"counts", "expected", "chi_square", "df", "p_value", "verdict"} <= set(d6) and d6["df"] == 5
    assert get(played.outsider).status_code == 404
    assert get(played.gm, "?session=77").status_code == 404
    assert get(played.gm, "?session=x").status_code == 400
    assert get(played.gm, "?character=x").status_code == 400
    assert get(played.gm, "?character=%C2%B2").status_code == 400  # '²' is a digit to str.isdigit(), not to int()
    assert get(played.gm, "?session=%C2%B2").status_code == 400
    assert Client().get(f"/api/campaigns/{played.campaign.slug}/dice-stats").status_code == 401
    assert MARK not in str(watcher)
