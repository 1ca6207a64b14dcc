"""Operating commands: demo, create_token, export_log, odds."""

from __future__ import annotations

import io
import json
from fractions import Fraction

import pytest
from django.contrib.auth import authenticate
from django.core.management import call_command
from django.core.management.base import CommandError

from campaign.models import ApiToken, Campaign, Character, Event, Membership, token_digest


def run(*args) -> str:
    out = io.StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


def test_demo_json_is_idempotent_and_its_logins_work(db):
    first = json.loads(run("demo", "--json"))
    second = json.loads(run("demo", "--json"))

    def without_tokens(demo):
        return {**demo, "members": [{k: v for k, v in m.items() if k != "token"} for m in demo["members"]]}

    assert without_tokens(first) == without_tokens(second)
    # Only digests are stored, so each run prints fresh tokens and revokes the previous run's.
    assert not ApiToken.objects.filter(digest__in=[token_digest(m["token"]) for m in first["members"]]).exists()
    first = second
    assert first["campaign"] == "demo"
    roles = sorted(m["role"] for m in first["members"])
    assert roles == ["gm", "player", "player", "player"]
    for member in first["members"]:
        user = authenticate(username=member["username"], password=member["password"])
        assert user is not None
        assert ApiToken.objects.get(digest=token_digest(member["token"])).user == user
        assert Membership.objects.get(campaign__slug="demo", user=user).role == member["role"]
    assert Campaign.objects.count() == 1
    assert Event.objects.filter(type="member_joined").count() == 3
    heroes = Character.objects.filter(campaign__slug="demo")
    assert sorted(c.owner.username for c in heroes) == ["alice", "bob", "carol"]


def test_demo_prints_logins(db):
    out = run("demo")
    assert "gm" in out and "alice" in out and "password" in out


def test_demo_makes_one_campaign_per_system(db):
    tote = json.loads(run("demo", "--json"))
    wyrm = json.loads(run("demo", "--json", "--system", "wyrm"))
    assert (tote["campaign"], wyrm["campaign"]) == ("demo", "demo-wyrm")
    assert Campaign.objects.get(slug="demo").system == "tote"
    assert Campaign.objects.get(slug="demo-wyrm").system == "wyrm"
    again = json.loads(run("demo", "--json", "--system", "wyrm"))

    def without_tokens(logins):  # every run prints fresh tokens (a token is shown only once)
        return {**logins, "members": [{k: v for k, v in m.items() if k != "token"} for m in logins["members"]]}

    assert without_tokens(again) == without_tokens(wyrm)  # still idempotent
    assert sorted(c.owner.username for c in Character.objects.filter(campaign__slug="demo-wyrm")) == ["alice", "bob", "carol"]


def test_demo_refuses_an_unknown_system_clearly(db):
    with pytest.raises(CommandError, match="Unknown rule system 'dnd': choose one of tote, wyrm, tale, mdt"):
        run("demo", "--system", "dnd")
    assert not Campaign.objects.exists()


def test_demo_says_so_when_its_slug_plays_another_system(table):
    from campaign.actions import do_create_campaign

    do_create_campaign(table.gm, "Not the demo", "mdt", slug="demo")
    with pytest.raises(CommandError, match="'demo' exists and plays mdt, not tote"):
        run("demo")


def test_create_token(table):
    key = run("create_token", "alice", "--name", "dice bot").strip()
    token = ApiToken.objects.get(digest=token_digest(key))
    assert (token.user, token.name) == (table.alice, "dice bot")
    assert key not in {value for row in ApiToken.objects.values_list() for value in row}  # only the digest is stored
    with pytest.raises(CommandError):
        run("create_token", "nobody")


def test_export_log_is_the_whole_log_as_json_lines(table):
    table.command(table.alice, {"type": "roll", "notation": "1d6"})
    lines = run("export_log", table.campaign.slug).splitlines()
    events = [json.loads(line) for line in lines]
    assert [e["seq"] for e in events] == list(range(1, Event.objects.count() + 1))
    assert events[-1]["type"] == "roll" and events[-1]["hash"] == Event.objects.order_by("-seq")[0].hash


@pytest.mark.parametrize("system, action, outcome", [
    ("mdt", {"type": "test", "dice": 5, "difficulty": 2}, "success"),
    ("wyrm", {"type": "check", "attribute": 3, "skills": 1, "dl": 9}, "success"),
])
def test_odds_prints_exact_fractions(system, action, outcome):
    data = json.loads(run("odds", system, json.dumps(action)))
    entry = data["odds"][outcome]
    p = Fraction(entry["p"])
    assert 0 < p < 1 and abs(float(p) - entry["float"]) < 1e-12


@pytest.mark.parametrize("args, message", [
    (("odds", "chess", "{}"), "Unknown system"),
    (("odds", "mdt", "{not json"), "not valid JSON"),
    (("odds", "mdt", "[]"), "JSON object"),
])
def test_odds_refuses_bad_input(args, message):
    with pytest.raises(CommandError, match=message):
        run(*args)
