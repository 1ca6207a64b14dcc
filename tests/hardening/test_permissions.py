"""Who may do what: every URL, every socket, every action, for every kind of person.

Personas: ``anonymous``; ``outsider`` (logged in, not at this table); ``watcher``
(spectator); ``alice`` (player, owns Hero; Rival is bob's) and ``gm``.

The rules, checked everywhere:

* nobody reads a campaign they are not in: an outsider gets exactly the 404 of a
  campaign that does not exist; anonymous pages redirect to the login, the
  anonymous API answers 401;
* nobody acts for a character they do not own (the GM may act for any);
* nobody sees a hidden roll they may not see (not its nonce, notation or dice),
  on any page, in any API answer or export, or on the socket;
* nobody but the GM does a GM's job: sessions, scenes, void, reveal,
  request_roll, add_member and every rule system's ``gm_actions``.

The matrices are built from ``campaign/urls.py`` and the action vocabularies:
a new URL or action without a row fails ``test_every_url_has_a_row`` /
``test_every_action_has_a_row`` until someone says who may use it. The
``test_every_campaign_url_*`` tests are parametrized straight from the URL
patterns, so a new campaign URL (an export, an audit page) is covered before
anyone writes its row.
"""

from __future__ import annotations

import itertools
import json
import re
from dataclasses import dataclass, field

import pytest
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver

from campaign.actions import PLATFORM_ACTIONS
from campaign.models import Membership
from rules import SYSTEM_MODULES, get_system
from tests.conftest import HANG

from .conftest import SYSTEMS, Cast, log_snapshot, token_for

COMMAND_IDS = itertools.count(1)
PERSONAS = ("anonymous", "outsider", "watcher", "alice", "gm")
MEMBERS = ("watcher", "alice", "gm")
ABSENT = "no-such-campaign"

# --- the URL matrix --------------------------------------------------------------------------------
# route -> (method, query, {persona: expected}); expected is one of
#   "ok"          2xx (or a documented redirect inside the site for a member, see "table")
#   "login"       302 to the login page (pages) -- anonymous only
#   "401"         the API's {"error": {"code": "unauthenticated"}}
#   "404"         exactly the 404 of a campaign that does not exist
#   "403"         {"error": {"code": "forbidden"}}
#   "table"       302 to the campaign's table (join links of members)
#   "admin-login" 302 to the admin's login (nobody here is staff)
#   "405"         the method is not allowed
LOGIN, OK, E401, E403, E404 = "login", "ok", "401", "403", "404"
PAGE403 = "page-403"  # the product's 403 page (templates/403.html): a member on a page that is the GM's
PAGE = {"anonymous": LOGIN, "outsider": OK, "watcher": OK, "alice": OK, "gm": OK}
PUBLIC = {p: OK for p in PERSONAS}
MEMBER_PAGE = {"anonymous": LOGIN, "outsider": E404, "watcher": OK, "alice": OK, "gm": OK}
# A member is told a GM-only page is the GM's (403); an outsider learns nothing of the campaign (404).
GM_PAGE = {"anonymous": LOGIN, "outsider": E404, "watcher": PAGE403, "alice": PAGE403, "gm": OK}
MEMBER_API = {"anonymous": E401, "outsider": E404, "watcher": OK, "alice": OK, "gm": OK}
ACT_API = {"anonymous": E401, "outsider": E404, "watcher": E403, "alice": OK, "gm": OK}


@dataclass
class Row:
    expect: dict
    method: str = "get"
    query: str = ""
    body: dict | None = None  # for POST; "HERO"/"RIVAL" are replaced by the characters' ids
    also: list = field(default_factory=list)  # more (method, query, body, expect) to check on the same URL


URL_ROWS: dict[str, Row] = {
    "": Row(PAGE),
    "login/": Row(PUBLIC),
    "logout/": Row({p: "405" for p in PERSONAS}),  # Django's LogoutView is POST-only
    "signup/": Row(PUBLIC),
    "profile/": Row(PAGE),
    "password/": Row(PAGE),
    "password/done/": Row(PAGE),
    # A forgotten password: anyone may ask (the same answer whoever the address is) and follow a
    # link; a wrong link is a page saying so (tests/campaign/test_password_reset.py).
    "password/reset/": Row(PUBLIC, also=[("post", "", {"email": "someone@example.org"}, PUBLIC)]),
    "password/reset/done/": Row(PUBLIC),
    "password/reset/<uidb64>/<token>/": Row(PUBLIC),
    "password/reset/complete/": Row(PUBLIC),
    "campaigns/<slug:slug>/settings/": Row(GM_PAGE),
    "join/<str:code>/": Row({"anonymous": LOGIN, "outsider": OK, "watcher": "table", "alice": "table", "gm": "table"}),
    "campaigns/<slug:slug>/": Row(MEMBER_PAGE),
    "campaigns/<slug:slug>/verify/": Row(MEMBER_PAGE),  # the page only; its checks run in the browser
    "campaigns/<slug:slug>/audit/": Row(GM_PAGE, query="verify_dice=1"),
    "campaigns/<slug:slug>/audit/sheet/": Row(GM_PAGE, query="character=HERO&a=1&b=LAST"),
    "campaigns/<slug:slug>/audit/advancement/": Row(GM_PAGE),
    # The award form (a form post: without its token the GM's is a 400; tests/campaign/test_audit.py awards).
    "campaigns/<slug:slug>/audit/advancement/award/": Row({**GM_PAGE, "gm": "any"}, "post"),
    "campaigns/<slug:slug>/sessions/<int:number>/dice/": Row(MEMBER_PAGE),
    "api/campaigns/<slug:slug>/commands": Row(
        ACT_API, "post", body={"type": "roll", "notation": "1d6", "character": "HERO"},
        also=[("post", "", {"type": "roll", "notation": "1d6", "character": "RIVAL"},
               {"anonymous": E401, "outsider": E404, "watcher": E403, "alice": E403, "gm": OK}),
              ("post", "", {"type": "start_session"},
               {"anonymous": E401, "outsider": E404, "watcher": E403, "alice": E403, "gm": "any"})]),
    "api/campaigns/<slug:slug>/events": Row(MEMBER_API, query="after=0&limit=500"),
    "api/campaigns/<slug:slug>/preview": Row(
        ACT_API, "post", body={"type": "skill_test", "skill": "Strike", "target": 10, "character": "HERO"},
        also=[("post", "", {"type": "skill_test", "skill": "Strike", "target": 10, "character": "RIVAL"},
               {"anonymous": E401, "outsider": E404, "watcher": E403, "alice": E403, "gm": OK})]),
    "api/openapi.json": Row(PUBLIC),
    "api/systems/<str:name>": Row(PUBLIC),  # a rule system's declarations describe the API, not a campaign
    "api/actions": Row(PUBLIC),  # so do the platform's
    "api/key": Row(PUBLIC),  # the checkpoint key is public: anyone may check a receipt
    "healthz": Row(PUBLIC),  # the probes: no login, nothing an outsider should not read (campaign/health.py)
    "readyz": Row(PUBLIC),
    # Off unless METRICS_TOKEN is set, and then only for its bearer, whoever is logged in (tests/campaign/test_metrics.py).
    "metrics": Row({p: E404 for p in PERSONAS}),
    # The standalone verifier: public code, the same bytes `make verifier` builds (campaign/verifier.py).
    "talekeeper-verify.pyz": Row(PUBLIC),
    # Every member (spectators too) may list signed receipts of the log; players and the GM ask for them.
    # Paged like the events: in seq order, and the newest first (the table's list).
    "api/campaigns/<slug:slug>/checkpoints": Row(MEMBER_API, query="after=0&limit=500", also=[
        ("get", "order=newest&limit=10", None, MEMBER_API), ("post", "", None, ACT_API)]),
    "api/campaigns/<slug:slug>/keys": Row(MEMBER_API),  # members' keys: every member checks every signature
    "api/campaigns/<slug:slug>/characters": Row(MEMBER_API),  # the table's tabs: what a member may know of
    "api/campaigns/<slug:slug>/characters/<int:character_id>": Row(
        MEMBER_API, also=[("get", "as_of=LAST", None, MEMBER_API)]),  # every member reads every sheet
    "api/campaigns/<slug:slug>/export.jsonl": Row(
        MEMBER_API, query="header=1", also=[("get", "session=1", None, MEMBER_API)]),
    "api/campaigns/<slug:slug>/export.csv": Row(MEMBER_API, also=[("get", "session=1", None, MEMBER_API)]),
    "api/campaigns/<slug:slug>/dice-stats": Row(MEMBER_API, also=[("get", "session=1&character=HERO", None,
                                                                   MEMBER_API)]),
    "admin/": Row({p: "admin-login" for p in PERSONAS}),
}


def all_routes() -> list[str]:
    routes = []
    for pattern in get_resolver().url_patterns:
        assert isinstance(pattern, (URLPattern, URLResolver))
        routes.append(str(pattern.pattern))
    return routes


def campaign_routes() -> list[str]:
    return [r for r in all_routes() if "<slug:slug>" in r]


# --- the world ---------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Hidden:
    """A hidden roll and everything that would give it away."""

    seq: int
    notation: str
    sides: int
    nonce: str
    seen_by: frozenset

    def given_away_in(self, text: str) -> str | None:
        if self.nonce in text:
            return f"the nonce of hidden roll {self.seq}"
        if self.notation in text:
            return f"the notation {self.notation} of hidden roll {self.seq}"
        if re.search(rf"\bd{self.sides}\b", text) or re.search(rf'"sides":\s*{self.sides}\b', text):
            return f"the d{self.sides} dice of hidden roll {self.seq}"
        return None


class World:
    """The tote table with characters, a session, public and hidden rolls, and a client for every persona."""

    def __init__(self, table):
        self.table = table
        self.cast = Cast(table)
        self.hero, self.rival = self.cast.hero, self.cast.rival
        self.users = {name: getattr(table, name) for name in ("outsider", "watcher", "alice", "gm", "bob")}
        table.command(table.alice, {"type": "roll", "notation": "2d6", "character": self.hero.id})
        self.hidden = [
            self._hide(table.alice, "7d13kh6", 13, "gm", {"gm"}),
            self._hide(table.alice, "5d17kl4", 17, "secret", {"gm", "alice"}),
            self._hide(table.gm, "3d19kh2", 19, "secret", {"gm"}),
        ]
        table.command(table.bob, {"type": "roll", "notation": "1d6", "character": self.rival.id})
        self.tokens = {name: token_for(user) for name, user in self.users.items()}
        self.clients = {"anonymous": Client()}
        for name in ("outsider", "watcher", "alice", "gm"):
            self.clients[name] = Client()
            self.clients[name].force_login(self.users[name])
        table.campaign.refresh_from_db()

    def _hide(self, user, notation, sides, visibility, seen_by) -> Hidden:
        event = self.table.command(user, {"type": "roll", "notation": notation, "visibility": visibility}).events[0]
        return Hidden(event.seq, notation, sides, event.payload["nonce"], frozenset(seen_by))

    @property
    def last_seq(self) -> int:
        return log_snapshot(self.table.campaign)[1]

    def path(self, route: str, slug: str = "torn-road") -> str:
        def fill(match):
            name = match.group(2)
            values = {"slug": slug, "character_id": self.hero.id, "number": 1, "uidb64": "MQ", "token": "no-such-token",
                      "code": self.table.campaign.invite_code, "name": self.table.campaign.system}
            assert name in values, f"{route}: teach tests/hardening/test_permissions.py how to fill <{name}>"
            return str(values[name])

        return "/" + re.sub(r"<(\w+:)?(\w+)>", fill, route)

    def fill(self, text: str) -> str:
        return (text.replace("HERO", str(self.hero.id)).replace("RIVAL", str(self.rival.id))
                .replace("LAST", str(self.last_seq)))

    def request(self, persona: str, method: str, url: str, body: dict | None = None):
        """(status, headers, text). API writes use the persona's bearer token; everything else its session."""
        client = self.clients[persona]
        headers = {}
        if method == "post" and url.startswith("/api/") and persona != "anonymous":
            headers["HTTP_AUTHORIZATION"] = f"Bearer {self.tokens[persona]}"
        if body is not None:
            body = json.loads(json.dumps(body).replace('"HERO"', str(self.hero.id)).replace('"RIVAL"', str(self.rival.id)))
            if url.endswith("/commands"):
                body = {"id": f"perm-{next(COMMAND_IDS)}", "action": body}
            else:
                body = {"action": body}
            res = getattr(client, method)(url, data=json.dumps(body), content_type="application/json", **headers)
        else:
            res = getattr(client, method)(url, **headers)
        content = b"".join(res.streaming_content) if res.streaming else res.content
        return res.status_code, res, content.decode("utf-8", "replace")

    def leaks(self, persona: str, text: str) -> list[str]:
        found = [h.given_away_in(text) for h in self.hidden if persona not in h.seen_by]
        found = [f for f in found if f]
        for name, token in self.tokens.items():
            if name != persona and token in text:
                found.append(f"{name}'s API token")
        return found


@pytest.fixture
def world(table, high_rate_limits):
    return World(table)


def check(world: World, persona: str, expected: str, method: str, url: str, body=None) -> tuple[int, str]:
    status, res, text = world.request(persona, method, url, body)
    where = f"{persona} {method.upper()} {url} -> {status}"
    if expected == OK:
        assert 200 <= status < 300, f"{where}: expected success: {text[:300]}"
    elif expected == "any":
        assert status < 500 and status not in (401, 403, 404), f"{where}: {text[:300]}"
    elif expected == LOGIN:
        assert status == 302 and res["Location"].startswith("/login/?next="), where
    elif expected == "admin-login":
        assert status == 302 and res["Location"].startswith("/admin/login/"), where
    elif expected == "table":
        assert status == 302 and res["Location"] == "/campaigns/torn-road/", where
    elif expected == "405":
        assert status == 405, where
    elif expected == E401:
        assert status == 401 and json.loads(text)["error"]["code"] == "unauthenticated", where
    elif expected == E403:
        assert status == 403 and json.loads(text)["error"]["code"] == "forbidden", f"{where}: {text[:300]}"
    elif expected == PAGE403:
        assert status == 403 and "Not yours to open" in text, f"{where}: {text[:300]}"
    elif expected == E404:
        assert status == 404, f"{where}: {text[:300]}"
        absent = url.replace("/torn-road/", f"/{ABSENT}/")
        a_status, _, a_text = world.request(persona, method, absent, body)
        assert (a_status, a_text) == (status, text), f"{where}: an outsider can tell this campaign exists"
    else:
        raise AssertionError(f"unknown expectation {expected!r}")
    leaks = world.leaks(persona, text)
    assert not leaks, f"{where} gives away {leaks}"
    return status, text


# --- URLs ----------------------------------------------------------------------------------------------

def test_every_url_has_a_row():
    missing = [r for r in all_routes() if r not in URL_ROWS]
    assert not missing, (f"campaign/urls.py has URLs the permission matrix does not cover: {missing}. "
                         "Add a row to URL_ROWS in tests/hardening/test_permissions.py saying who may use them.")
    stale = sorted(set(URL_ROWS) - set(all_routes()))
    assert not stale, f"URL_ROWS has rows for URLs that no longer exist: {stale}"


@pytest.mark.parametrize("route", [r for r in URL_ROWS if r in all_routes()])
def test_url_matrix(world, route):
    row = URL_ROWS[route]
    url = world.path(route)
    checks = [(row.method, row.query, row.body, row.expect), *row.also]
    for method, query, body, expect in checks:
        for persona in PERSONAS:
            full = f"{url}?{world.fill(query)}" if query else url
            before = log_snapshot(world.table.campaign)
            status, _ = check(world, persona, expect[persona], method, full, body)
            if status >= 400:
                assert log_snapshot(world.table.campaign) == before, f"{persona} {method} {full}: a refusal wrote"


@pytest.mark.parametrize("route", campaign_routes())
def test_every_campaign_url_refuses_anonymous_and_outsiders_alike(world, route):
    """Parametrized from campaign/urls.py: any campaign URL, present or future, with or without a row."""
    url = world.path(route)
    method = URL_ROWS[route].method if route in URL_ROWS else "get"
    body = URL_ROWS[route].body if route in URL_ROWS else None
    check(world, "anonymous", E401 if route.startswith("api/") else LOGIN, method, url, body)
    check(world, "outsider", E404, method, url, body)
    # A member of another campaign is an outsider here too.
    from campaign.actions import do_create_campaign

    do_create_campaign(world.users["outsider"], "Elsewhere", "tote", slug="elsewhere")
    check(world, "outsider", E404, method, url, body)


@pytest.mark.parametrize("route", [r for r in campaign_routes()])
def test_every_campaign_url_never_shows_a_hidden_roll(world, route):
    """Parametrized from campaign/urls.py: every GET-able campaign URL, as every member, with the queries the
    row names (and ``session=1``, ``header=1``), gives away no hidden roll the member may not see."""
    row = URL_ROWS.get(route, Row(MEMBER_API))
    url = world.path(route)
    queries = {"", "session=1", "header=1", "after=0&limit=500", row.query,
               *(q for m, q, _, _ in row.also if m == "get")}
    if row.method != "get":
        return
    for persona in MEMBERS:
        for query in sorted(queries):
            full = f"{url}?{world.fill(query)}" if query else url
            status, _, text = world.request(persona, "get", full)
            assert status < 500, f"{persona} GET {full} -> {status}"
            leaks = world.leaks(persona, text)
            assert not leaks, f"{persona} GET {full} gives away {leaks}"


def test_the_gm_sees_every_hidden_roll(world):
    """The leak detector works: the GM's export holds every hidden roll, alice's holds her secret one only."""
    _, _, text = world.request("gm", "get", world.path("api/campaigns/<slug:slug>/export.jsonl"))
    assert all(h.nonce in text for h in world.hidden)
    _, _, text = world.request("alice", "get", world.path("api/campaigns/<slug:slug>/export.jsonl"))
    assert [h.nonce in text for h in world.hidden] == ["alice" in h.seen_by for h in world.hidden]


def test_session_auth_writes_need_the_csrf_token(world):
    client = Client(enforce_csrf_checks=True)
    client.force_login(world.users["gm"])
    for route, body in (("api/campaigns/<slug:slug>/commands", {"id": "c1", "action": {"type": "start_scene"}}),
                        ("api/campaigns/<slug:slug>/preview", {"action": {"type": "skill_test"}})):
        res = client.post(world.path(route), data=json.dumps(body), content_type="application/json")
        assert res.status_code == 403 and res.json()["error"]["code"] == "csrf"


def test_a_bad_token_is_401_everywhere_on_the_api(world):
    for route in all_routes():
        if route.startswith("api/campaigns/"):
            res = Client().generic(URL_ROWS[route].method.upper(), world.path(route), data="{}",
                                   content_type="application/json", HTTP_AUTHORIZATION="Bearer forged")
            assert res.status_code == 401 and res.json()["error"]["code"] == "unauthenticated", route


def test_joining_again_never_changes_a_role(world):
    code = world.table.campaign.invite_code
    for persona in ("watcher", "alice", "gm"):
        before = Membership.objects.get(campaign=world.table.campaign, user=world.users[persona]).role
        world.clients[persona].post(f"/join/{code}/")
        assert Membership.objects.get(campaign=world.table.campaign, user=world.users[persona]).role == before
    assert world.clients["outsider"].get("/join/not-a-code/").status_code == 404


def test_only_the_gm_sees_the_invite_link(world):
    code = world.table.campaign.invite_code
    for persona in MEMBERS:
        _, _, text = world.request(persona, "get", "/campaigns/torn-road/")
        assert (code in text) == (persona == "gm"), persona


def test_nobody_sees_another_member_s_tokens_or_campaigns(world):
    _, _, text = world.request("outsider", "get", "/")
    assert "The Torn Road" not in text and "torn-road" not in text
    for persona in ("outsider", "watcher", "alice", "gm"):
        _, _, text = world.request(persona, "get", "/profile/")
        assert not world.leaks(persona, text)


# --- actions ---------------------------------------------------------------------------------------------
# "member": anyone at the table, spectators too; "player": any player or the GM, never a spectator;
# "owner": the character's player or the GM; "gm": the GM.

TABLE_ROWS = {
    "roll": "player", "add_seed": "player", "create_character": "player", "post_message": "member",
    "start_session": "gm", "end_session": "gm", "start_scene": "gm", "end_scene": "gm",
    "void": "gm", "reveal": "gm", "request_roll": "gm", "add_member": "gm",
    "remove_member": "gm", "change_role": "gm", "rename_campaign": "gm",
    "configure_campaign": "gm", "adjust_sheet": "gm", "show_npc": "gm", "require_signed_commands": "gm",
    "start_encounter": "gm", "add_combatant": "gm", "set_turn_order": "gm", "end_encounter": "gm",
    "advance_turn": "player",  # the GM, or the acting character's player (tests/campaign/test_evening_tools.py)
    "start_fight": "gm", "end_fight": "gm",
    "choose_in_fight": "owner",  # each side's choice is its controller's (tests/campaign/test_fights.py)
    "apply_damage": "gm",
    # each member's own keys, spectators' too
    "add_member_key": "member", "revoke_member_key": "member", "endorse_member_key": "member",
    # Any member's table witnesses, spectators' too; who is a listed witness of which roll is
    # tests/campaign/test_witnessed_rolls.py's.
    "witness_commit": "member", "witness_roll": "member",
}
# Sub-permissions inside an action: (action, expectation).
EXTRA_ROWS = [
    ({"type": "roll", "notation": "1d6", "character": "CHARACTER"}, "owner"),
    ({"type": "create_character", "name": "Minion", "owner": "bob"}, "gm"),
    ({"type": "request_roll", "character": "CHARACTER", "action": {"type": "roll", "notation": "1d6"}}, "gm"),
    ({"type": "create_character", "name": "Minion", "npc": True, "quick": {"rating": 1}}, "gm"),
    ({"type": "create_character", "name": "Veteran", "override_limits": True}, "gm"),
    ({"type": "post_message", "text": "hello", "to": ["bob"]}, "member"),
    ({"type": "post_message", "text": "I speak", "kind": "ic", "character": "CHARACTER"}, "owner"),
]
SYSTEM_ROWS = {
    "tote": {"skill_test": "owner", "spend_resolve": "owner", "invoke_aspect": "owner", "effect_test": "owner",
             "buy_advance": "owner", "gm_invoke_aspect": "gm", "grant_resolve": "gm", "mark_injury": "gm",
             "heal_injury": "gm", "award_points": "gm", "end_tale": "gm",
             "apply_condition": "gm", "remove_condition": "gm"},
    "wyrm": {"check": "owner", "damage": "owner", "spend_fate": "owner", "buy_advance": "owner",
             "automatic_success": "gm", "approve_fate": "gm", "deny_fate": "gm", "grant_fate": "gm",
             "award_points": "gm", "mark_harm": "gm", "heal_harm": "gm",
             "apply_condition": "gm", "remove_condition": "gm"},
    "tale": {"straight_roll": "owner", "hide": "owner", "start_contest": "owner", "iterated_round": "owner",
             "end_contest": "owner", "start_combat": "owner", "combat_round": "owner", "assign_damage": "owner",
             "rest": "owner", "buy_advance": "owner", "award_points": "gm", "take_damage": "gm",
             "impose_penalty": "gm",
             "apply_condition": "gm", "remove_condition": "gm"},
    "mdt": {"test": "owner", "opposed_test": "owner", "contest_round": "owner", "end_contest": "owner",
            "project_roll": "owner", "abandon_project": "owner", "buy_advance": "owner", "start_contest": "gm",
            "start_project": "gm", "say_yes": "gm", "award_points": "gm", "mark_harm": "gm", "heal_harm": "gm",
            "apply_condition": "gm", "remove_condition": "gm"},
}
# (persona, whose character) -> may act, per kind of row.
MAY = {
    "member": {("watcher", "hero"): True, ("alice", "hero"): True, ("gm", "hero"): True},
    "player": {("watcher", "hero"): False, ("alice", "hero"): True, ("alice", "rival"): True,
               ("gm", "hero"): True, ("gm", "rival"): True},
    "owner": {("watcher", "hero"): False, ("alice", "hero"): True, ("alice", "rival"): False,
              ("gm", "hero"): True, ("gm", "rival"): True},
    "gm": {("watcher", "hero"): False, ("alice", "hero"): False, ("alice", "rival"): False,
           ("gm", "hero"): True, ("gm", "rival"): True},
}


def vocabulary(system: str) -> set[str]:
    """Every action type the server knows for ``system``, as it says itself when refusing an unknown one."""
    from campaign.actions import ActionError
    from tests.conftest import Table

    table = Table(system)
    try:
        table.command(table.gm, {"type": "no-such-action"})
    except ActionError as e:
        known = e.message.split("Known actions:", 1)[1].strip().rstrip(".")
        return {name.strip() for name in known.split(",")}
    raise AssertionError("an unknown action was accepted")


@pytest.mark.parametrize("system", SYSTEMS)
def test_every_action_has_a_row(db, system):
    rules = get_system(system)
    assert set(SYSTEM_ROWS) == set(SYSTEM_MODULES), "add the new rule system to SYSTEM_ROWS"
    assert set(SYSTEM_ROWS[system]) == set(rules.actions), f"{system}: add a row for each new action"
    assert {a for a, who in SYSTEM_ROWS[system].items() if who == "gm"} == set(rules.gm_actions), \
        f"{system}: the rows and the system's gm_actions disagree about who may act"
    assert set(TABLE_ROWS) == set(PLATFORM_ACTIONS)
    assert {a for a, who in TABLE_ROWS.items() if who == "gm"} == {t for t, s in PLATFORM_ACTIONS.items() if s.gm_only}, \
        "the rows and the platform's declarations disagree about who may act"
    assert {a for a, who in TABLE_ROWS.items() if who == "member"} == {
        t for t, s in PLATFORM_ACTIONS.items() if s.spectators}, "the rows and the declarations disagree about spectators"
    assert vocabulary(system) == set(TABLE_ROWS) | set(SYSTEM_ROWS[system]), \
        f"{system}: the server knows actions the matrix does not (or the other way round)"


def action_cases(system: str):
    """(action, kind of row) for every action of the table and of ``system``."""
    for kind, who in {**TABLE_ROWS, **SYSTEM_ROWS[system]}.items():
        yield ({"type": kind} if who in ("player", "member") else {"type": kind, "character": "CHARACTER"}), who
    yield from EXTRA_ROWS


def decide(allowed: bool, status: int, code: str, where: str) -> None:
    if allowed:
        assert code not in ("forbidden", "not_found", "unauthenticated", "server_error") and status < 500, where
    else:
        assert code == "forbidden", where


@pytest.mark.parametrize("system", SYSTEMS)
def test_action_matrix_over_http(table_for, high_rate_limits, system):
    cast = Cast(table_for(system))
    table = cast.table
    tokens = {name: token_for(getattr(table, name)) for name in ("watcher", "alice", "gm")}
    client = Client()
    n = 0
    for action, who in action_cases(system):
        for (persona, whose), allowed in MAY[who].items():
            n += 1
            character = cast.hero if whose == "hero" else cast.rival
            body = json.loads(json.dumps(action).replace('"CHARACTER"', str(character.id)))
            before = log_snapshot(table.campaign)
            res = client.post(f"/api/campaigns/{table.campaign.slug}/commands", content_type="application/json",
                              data=json.dumps({"id": f"m{n}", "action": body}),
                              HTTP_AUTHORIZATION=f"Bearer {tokens[persona]}")
            code = res.json().get("error", {}).get("code", "") if res.status_code >= 400 else ""
            decide(allowed, res.status_code, code, f"{system}: {persona} {body} -> {res.status_code} {code}")
            if not allowed:
                assert log_snapshot(table.campaign) == before


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("system", SYSTEMS)
async def test_action_matrix_over_the_socket(table_for, high_rate_limits, system):
    from channels.db import database_sync_to_async

    from tests.sessions.test_table_consumer import connect, receive, until_ready

    cast = await database_sync_to_async(lambda: Cast(table_for(system)))()
    table = cast.table
    sockets = {}
    for persona in ("watcher", "alice", "gm"):
        sockets[persona] = await connect(table, getattr(table, persona))
        await until_ready(sockets[persona])
    snapshot = database_sync_to_async(lambda: log_snapshot(table.campaign))
    n = 0
    try:
        for action, who in action_cases(system):
            for (persona, whose), allowed in MAY[who].items():
                n += 1
                character = cast.hero if whose == "hero" else cast.rival
                body = json.loads(json.dumps(action).replace('"CHARACTER"', str(character.id)))
                before = await snapshot()
                await sockets[persona].send_json_to({"type": "command", "id": f"w{n}", "action": body})
                # Events and the idle heartbeat (the matrix runs longer than its interval) come between.
                while (frame := await receive(sockets[persona]))["type"] in ("event", "heartbeat"):
                    pass
                assert frame["type"] in ("ack", "error"), frame
                code = frame.get("code", "") if frame["type"] == "error" else ""
                decide(allowed, 200, code, f"{system} socket: {persona} {body} -> {frame}")
                if not allowed:
                    assert await snapshot() == before
    finally:
        for comm in sockets.values():
            await comm.disconnect()


# --- the socket: connecting and reading ---------------------------------------------------------------------

@pytest.mark.django_db(transaction=True)
async def test_socket_matrix_and_backlogs_hide_what_they_must(transactional_table, high_rate_limits):
    from channels.db import database_sync_to_async

    from tests.sessions.test_table_consumer import connect, until_ready

    world = await database_sync_to_async(World)(transactional_table)
    table = world.table
    # anonymous and a forged token: 4401; outsider: 4404, word for word the same as an absent campaign.
    for user, token, slug, close in ((None, None, "torn-road", 4401), (None, "forged", "torn-road", 4401),
                                     (table.outsider, None, "torn-road", 4404), (table.outsider, None, ABSENT, 4404)):
        comm = await connect(table, user, token=token, slug=slug)
        frame = await comm.receive_json_from(timeout=HANG)
        closed = await comm.receive_output(timeout=HANG)
        assert frame["type"] == "error" and closed == {"type": "websocket.close", "code": close}, (user, slug, frame)
        if close == 4404:
            assert frame == {"type": "error", "id": None, "code": "not_found",
                             "message": "There is no campaign here that you are a member of."}
    for persona in MEMBERS:
        comm = await connect(table, getattr(table, persona))
        backlog, ready = await until_ready(comm)
        assert ready["you"]["role"] == {"watcher": "spectator", "alice": "player", "gm": "gm"}[persona]
        assert len(backlog) == world.table.campaign.last_seq
        leaks = world.leaks(persona, json.dumps(backlog))
        assert not leaks, f"{persona}'s backlog gives away {leaks}"
        await comm.disconnect()


# --- bugs this suite found, fixed: kept as regression tests ----------------------------------------------

def test_fixed_bug_a_hidden_skill_test_does_not_show_through_the_character_sheet(world):
    table = world.table
    before = world.request("alice", "get", f"/api/campaigns/torn-road/characters/{world.rival.id}")[2]
    table.command(table.bob, {"type": "skill_test", "skill": "Strike", "target": 12, "visibility": "gm",
                              "character": world.rival.id})
    for persona in ("watcher", "alice"):
        after = world.request(persona, "get", f"/api/campaigns/torn-road/characters/{world.rival.id}")[2]
        assert json.loads(after)["state"] == json.loads(before)["state"], f"{persona} sees the hidden test's result"


def test_fixed_bug_a_hidden_roll_cannot_be_recomputed_from_the_published_seed(world):
    from campaign.fairdice import derive_face

    table = world.table
    table.command(table.gm, {"type": "end_scene"})
    table.command(table.gm, {"type": "end_session"})
    _, _, text = world.request("watcher", "get", "/api/campaigns/torn-road/events?limit=500")
    events = json.loads(text)["events"]
    seed = next(e for e in events if e["type"] == "session_ended")["payload"]["dice_seed"]
    hidden = world.hidden[0]  # 7d13kh6, visibility gm: the watcher may not see it
    stub = next(e for e in events if e["seq"] == hidden.seq)
    assert stub.get("hidden") is True
    # Dice v2 key on the roller's command id, which only the sealed body holds (docs/fair-dice.md):
    # with the seed, the actor and anything else the stub shows, the watcher still can't rebuild them.
    actual = [face for _, face in table.campaign.events.get(seq=hidden.seq).payload["dice_log"]]
    for guess in (str(stub["seq"]), stub["hash"], stub["body_digest"], ""):
        guessed = [derive_face(seed, table.campaign.id, stub["session"], stub["actor_id"], guess, i, 13)
                   for i in range(7)]
        assert guessed != actual, "the watcher recomputed every die of a roll only the GM may see"
