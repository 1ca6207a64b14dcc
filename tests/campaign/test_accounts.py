"""Accounts and the campaign's own settings, as an attacker and as a GM would use them.

Sign-up and login (redirects, races, password rules, throttling), API tokens
(stored as digests, shown once, named, revoked, last use), the GM's settings
(members removed, roles changed, the campaign renamed, invite links rotated and
expiring), and the headers every page carries.
"""

from __future__ import annotations

import json
import threading
from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.db import connection, connections
from django.test import Client
from django.utils import timezone

from campaign.actions import ActionError, do_create_campaign
from campaign.models import ApiToken, Campaign, Event, Membership, token_digest

User = get_user_model()


def logged_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def events_of(campaign, kind: str) -> list[dict]:
    return list(Event.objects.filter(campaign=campaign, type=kind).order_by("seq").values_list("payload", flat=True))


# --- sign-up and login ----------------------------------------------------------------------

SIGNUP = {"username": "newcomer", "password1": "a long walk at dusk", "password2": "a long walk at dusk"}


@pytest.mark.parametrize("target, lands", [
    ("https://evil.example/phish", "/"), ("//evil.example/phish", "/"), ("javascript:alert(1)", "/"),
    ("foo", "/"), ("/campaigns/torn-road/", "/campaigns/torn-road/"), ("", "/"),
])
def test_signup_only_follows_next_to_a_page_of_this_site(db, target, lands):
    res = Client().post(f"/signup/?next={target}", SIGNUP)
    assert res.status_code == 302 and res["Location"] == lands
    assert User.objects.filter(username="newcomer").exists()


@pytest.mark.parametrize("target", ["https://evil.example/phish", "javascript:alert(1)", "//evil.example"])
def test_login_never_redirects_off_site(table, target):
    res = Client().post(f"/login/?next={target}", {"username": "alice", "password": "pw-alice-123456"})
    assert res.status_code == 302 and res["Location"] == "/"


@pytest.mark.parametrize("password", ["password", "12345678", "newcomer1", "short"])
def test_signup_refuses_weak_passwords(db, password):
    res = Client().post("/signup/", {**SIGNUP, "password1": password, "password2": password})
    assert res.status_code == 200 and not User.objects.filter(username="newcomer").exists()
    assert "password" in res.content.decode().lower()


def test_a_player_changes_their_password_and_the_validators_apply(table):
    client = logged_in(table.alice)
    weak = client.post("/password/", {"old_password": "pw-alice-123456", "new_password1": "12345678",
                                      "new_password2": "12345678"})
    assert weak.status_code == 200
    ok = client.post("/password/", {"old_password": "pw-alice-123456", "new_password1": "a quiet harbour at noon",
                                    "new_password2": "a quiet harbour at noon"})
    assert ok.status_code == 302 and ok["Location"] == "/password/done/"
    table.alice.refresh_from_db()
    assert table.alice.check_password("a quiet harbour at noon")


def test_logins_are_throttled_per_address(table, settings):
    settings.LOGIN_FAILURES_PER_5_MINUTES = 5
    client = Client()
    for _ in range(5):
        assert client.post("/login/", {"username": "alice", "password": "wrong"}).status_code == 200
    # From this address the right password no longer works for a while, for any account.
    res = client.post("/login/", {"username": "alice", "password": "pw-alice-123456"})
    assert res.status_code == 200 and "Too many failed attempts" in res.content.decode()
    assert "_auth_user_id" not in client.session
    res = client.post("/login/", {"username": "bob", "password": "pw-bob-123456"})
    assert "Too many failed attempts" in res.content.decode()
    # Alice herself, elsewhere, is not locked out by them.
    assert Client(REMOTE_ADDR="10.0.0.9").post("/login/", {"username": "alice",
                                                           "password": "pw-alice-123456"}).status_code == 302


def test_guessing_one_account_from_many_addresses_never_locks_out_its_owners_devices(table, settings):
    settings.LOGIN_FAILURES_PER_5_MINUTES = 3
    settings.LOGIN_ACCOUNT_FAILURES_PER_HOUR = 4
    laptop = Client(REMOTE_ADDR="10.0.0.1")  # alice logged in here before: a known device
    assert laptop.post("/login/", {"username": "alice", "password": "pw-alice-123456"}).status_code == 302
    laptop.post("/logout/")
    for n in range(4):  # a stranger, from addresses of its own, under each address's limit
        stranger = Client(REMOTE_ADDR=f"203.0.113.{n}")
        assert stranger.post("/login/", {"username": "alice", "password": "wrong"}).status_code == 200
    # Guessing alice is capped now, wherever it comes from, even with the right password...
    res = Client(REMOTE_ADDR="203.0.113.99").post("/login/", {"username": "alice", "password": "pw-alice-123456"})
    assert res.status_code == 200 and "Too many failed attempts" in res.content.decode()
    # ...but alice's own laptop logs in, with the right password only.
    assert laptop.post("/login/", {"username": "alice", "password": "wrong"}).status_code == 200
    assert laptop.post("/login/", {"username": "alice", "password": "pw-alice-123456"}).status_code == 302
    # A forged "known device" cookie is no cookie at all.
    forged = Client(REMOTE_ADDR="203.0.113.98")
    forged.cookies["tk_known"] = "alice"
    res = forged.post("/login/", {"username": "alice", "password": "pw-alice-123456"})
    assert "Too many failed attempts" in res.content.decode()


def test_wrong_api_tokens_are_throttled_per_address_and_valid_ones_pass(table, settings):
    settings.LOGIN_FAILURES_PER_5_MINUTES = 3
    key = ApiToken.objects.create(user=table.alice).key
    client = Client()
    for i in range(3):
        res = client.get("/api/campaigns/torn-road/events", HTTP_AUTHORIZATION=f"Bearer guess{i}")
        assert res.status_code == 401
    res = client.get("/api/campaigns/torn-road/events", HTTP_AUTHORIZATION="Bearer guess3")
    assert res.status_code == 429 and res.json()["error"]["code"] == "rate_limited"
    # The guesses never lock out a valid token, from this address or another.
    assert client.get("/api/campaigns/torn-road/events", HTTP_AUTHORIZATION=f"Bearer {key}").status_code == 200
    assert Client(REMOTE_ADDR="10.0.0.9").get("/api/campaigns/torn-road/events",
                                              HTTP_AUTHORIZATION=f"Bearer {key}").status_code == 200


# --- races ------------------------------------------------------------------------------------

def at_once(n: int, work) -> list:
    """Run ``work(i)`` in ``n`` threads released together; their results or exceptions."""
    barrier, results = threading.Barrier(n), [None] * n

    def run(i):
        try:
            barrier.wait()
            results[i] = work(i)
        except BaseException as e:  # noqa: BLE001  reported to the test
            results[i] = e
        finally:
            connections.close_all()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_campaigns_created_at_once_with_one_name_get_distinct_slugs(require_postgres):
    gm = User.objects.create_user("gm", password="pw-gm-123456")
    results = at_once(8, lambda i: do_create_campaign(gm, "Night Watch", "tote").slug)
    assert not [r for r in results if isinstance(r, BaseException)], results
    assert sorted(results) == sorted(["night-watch"] + [f"night-watch-{n}" for n in range(2, 9)])


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_one_username_signed_up_at_once_is_one_account_and_clear_refusals(require_postgres):
    statuses = at_once(8, lambda i: Client().post("/signup/", SIGNUP).status_code)
    assert sorted(statuses) == [200] * 7 + [302], statuses
    assert User.objects.filter(username="newcomer").count() == 1


# --- API tokens -------------------------------------------------------------------------------

def test_tokens_are_stored_as_digests_shown_once_named_and_revocable(table):
    client = logged_in(table.alice)
    res = client.post("/profile/", {"name": "dice bot"})
    assert res.status_code == 200 and "no-store" in res["Cache-Control"]
    key = res.context["new_token"].key
    assert key in res.content.decode()
    token = ApiToken.objects.get(user=table.alice)
    assert (token.digest, token.name) == (token_digest(key), "dice bot")
    assert key not in json.dumps(list(ApiToken.objects.values_list()), default=str)
    page = client.get("/profile/")
    assert "no-store" in page["Cache-Control"] and key not in page.content.decode() and "dice bot" in page.content.decode()
    assert "never used" in page.content.decode()

    api = Client()
    assert api.get("/api/campaigns/torn-road/events", HTTP_AUTHORIZATION=f"Bearer {key}").status_code == 200
    token.refresh_from_db()
    assert token.last_used_at is not None

    # Someone else's token can't be revoked from alice's page; her own can.
    bobs = ApiToken.objects.create(user=table.bob)
    client.post("/profile/", {"revoke": str(bobs.pk)})
    assert ApiToken.objects.filter(pk=bobs.pk).exists()
    client.post("/profile/", {"revoke": str(token.pk)})
    assert api.get("/api/campaigns/torn-road/events", HTTP_AUTHORIZATION=f"Bearer {key}").status_code == 401


def test_new_campaigns_and_tokens_count_against_the_users_command_limit(table, settings):
    """The home page's new campaign (whose log
    gets its first events) and the profile's new API token were writes no limit counted, so a
    script could make them as fast as the server answered. They share the user's one count."""
    settings.RATE_LIMIT_USER_PER_MINUTE = 2
    client = logged_in(table.outsider)
    assert client.post("/", {"name": "Night Watch", "system": "tote"}).status_code == 302
    assert client.post("/profile/", {"name": "dice bot"}).context["new_token"] is not None
    refused = client.post("/", {"name": "Day Watch", "system": "tote"})
    assert refused.status_code == 200 and "at most 2 commands a minute" in refused.content.decode()
    refused = client.post("/profile/", {"name": "another bot"})
    assert refused.context["new_token"] is None and "at most 2 commands a minute" in refused.content.decode()
    assert list(Campaign.objects.filter(memberships__user=table.outsider).values_list("name", flat=True)) == [
        "Night Watch"]
    assert list(ApiToken.objects.filter(user=table.outsider).values_list("name", flat=True)) == ["dice bot"]


# --- the GM's settings --------------------------------------------------------------------------

def settings_post(client, **data):
    return client.post("/campaigns/torn-road/settings/", data)


def test_the_gm_renames_changes_roles_and_removes_members_each_an_event(table):
    gm = logged_in(table.gm)
    assert gm.get("/campaigns/torn-road/settings/").status_code == 200
    assert logged_in(table.alice).get("/campaigns/torn-road/settings/").status_code == 403
    assert logged_in(table.outsider).get("/campaigns/torn-road/settings/").status_code == 404
    settings_post(gm, do="rename_campaign", name="The Long Road")
    settings_post(gm, do="change_role", username="bob", role="spectator")
    settings_post(gm, do="remove_member", username="watcher")
    campaign = Campaign.objects.get(pk=table.campaign.pk)
    assert campaign.name == "The Long Road"
    assert events_of(campaign, "campaign_renamed") == [{"from": "The Torn Road", "name": "The Long Road"}]
    assert events_of(campaign, "member_role_changed") == [{"username": "bob", "user_id": table.bob.pk,
                                                           "from": "player", "role": "spectator"}]
    assert events_of(campaign, "member_removed") == [{"username": "watcher", "user_id": table.watcher.pk,
                                                      "role": "spectator"}]
    assert Membership.objects.get(campaign=campaign, user=table.bob).role == "spectator"
    assert not Membership.objects.filter(campaign=campaign, user=table.watcher).exists()
    assert logged_in(table.watcher).get("/campaigns/torn-road/").status_code == 404


def test_the_settings_pages_writes_count_against_the_gms_command_limit(table, settings):
    """An earlier review's find: the settings page ran its commands past the pipeline's rate limit
    (and made invite links without any). Its writes share the GM's one per-minute count."""
    settings.RATE_LIMIT_USER_PER_MINUTE = 2
    gm = logged_in(table.gm)
    settings_post(gm, do="rename_campaign", name="The Long Road")
    settings_post(gm, do="change_role", username="bob", role="spectator")
    refused = gm.post("/campaigns/torn-road/settings/", {"do": "remove_member", "username": "watcher"}, follow=True)
    assert "at most 2 commands a minute" in refused.content.decode()
    old = Campaign.objects.get(pk=table.campaign.pk).invite_code
    settings_post(gm, do="rotate_invite")
    campaign = Campaign.objects.get(pk=table.campaign.pk)
    assert campaign.invite_code == old
    assert events_of(campaign, "member_removed") == []
    assert Membership.objects.filter(campaign=campaign, user=table.watcher).exists()


def test_only_the_gm_changes_members_and_never_their_own_place(table):
    with pytest.raises(ActionError) as refused:
        table.command(table.alice, {"type": "remove_member", "username": "bob"})
    assert refused.value.status == 403
    with pytest.raises(ActionError):
        table.command(table.gm, {"type": "change_role", "username": "gm", "role": "player"})
    with pytest.raises(ActionError):
        table.command(table.gm, {"type": "change_role", "username": "bob", "role": "superadmin"})
    with pytest.raises(ActionError):
        table.command(table.gm, {"type": "remove_member", "username": "outsider"})


def test_a_removed_member_can_no_longer_write(table):
    membership = table.membership(table.alice)
    table.command(table.gm, {"type": "remove_member", "username": "alice"})
    from campaign.actions import do_command

    with pytest.raises(ActionError) as refused:
        do_command(membership, {"id": "late", "action": {"type": "roll", "notation": "1d6"}})
    assert refused.value.code == "not_member"


def test_a_removed_member_cannot_rejoin_with_the_link_they_had(table):
    old = table.campaign.invite_code
    table.command(table.gm, {"type": "remove_member", "username": "bob"})
    bob = logged_in(table.bob)
    assert bob.get(f"/join/{old}/").status_code == 404
    assert bob.post(f"/join/{old}/").status_code == 404
    assert not Membership.objects.filter(campaign=table.campaign, user=table.bob).exists()
    # The GM's new link (on the settings page) works for whoever the GM gives it to.
    new = Campaign.objects.get(pk=table.campaign.pk).invite_code
    assert new != old and bob.get(f"/join/{new}/").status_code == 200


def test_invite_links_rotate_and_expire(table, settings):
    old = table.campaign.invite_code
    client = logged_in(table.outsider)
    assert client.get(f"/join/{old}/").status_code == 200
    settings_post(logged_in(table.gm), do="rotate_invite")
    new = Campaign.objects.get(pk=table.campaign.pk).invite_code
    assert new != old
    assert client.get(f"/join/{old}/").status_code == 404
    assert client.get(f"/join/{new}/").status_code == 200
    settings.INVITE_DAYS = 14
    Campaign.objects.filter(pk=table.campaign.pk).update(invite_created_at=timezone.now() - timedelta(days=15))
    assert client.get(f"/join/{new}/").status_code == 404
    assert client.post(f"/join/{new}/").status_code == 404
    assert not Membership.objects.filter(user=table.outsider).exists()


# --- headers, proxies, the database ---------------------------------------------------------------

def test_every_page_has_a_content_security_policy_without_inline_code(table):
    res = logged_in(table.alice).get("/campaigns/torn-road/")
    policy = res["Content-Security-Policy"]
    assert "script-src 'self'" in policy and "unsafe-inline" not in policy and "frame-ancestors 'none'" in policy
    assert b"<script>" not in res.content and b" style=" not in res.content and b" onclick=" not in res.content


def test_the_site_has_an_icon_every_page_links_and_the_policy_allows(table):
    """The pages link a static SVG (their policy's img-src 'self' allows it, under its hashed name) and
    the site's root serves an ICO for browsers that ask for /favicon.ico anyway."""
    from django.templatetags.static import static

    href = static("talekeeper/favicon.svg")
    client = logged_in(table.alice)
    for url in ("/login/", "/campaigns/torn-road/"):
        res = client.get(url)
        assert f'<link rel="icon" href="{href}" type="image/svg+xml">'.encode() in res.content, url
        img_src = next(d for d in res["Content-Security-Policy"].split(";") if d.strip().startswith("img-src"))
        assert img_src.split() == ["img-src", "'self'"], url  # a file, not a data: image (nothing needs one)
    svg = client.get(href)
    assert svg.status_code == 200 and svg["Content-Type"] == "image/svg+xml"
    assert b"".join(svg.streaming_content).startswith(b"<svg ")
    ico = Client().get("/favicon.ico")  # asked for by the browser, logged in or not
    assert ico.status_code == 200 and ico["Content-Type"] in ("image/x-icon", "image/vnd.microsoft.icon")
    assert b"".join(ico.streaming_content)[:4] == b"\x00\x00\x01\x00"  # an ICO's header


def test_x_forwarded_proto_is_ignored_without_a_proxy(table, settings):
    from django.test import RequestFactory

    request = RequestFactory().get("/", HTTP_X_FORWARDED_PROTO="https")
    assert settings.SECURE_PROXY_SSL_HEADER is None and not request.is_secure()


def test_behind_proxy_turns_on_the_forwarded_proto_header():
    import os
    import subprocess
    import sys
    from pathlib import Path

    code = "from django.conf import settings; print(settings.SECURE_PROXY_SSL_HEADER)"
    for value, expected in (("", "None"), ("1", "('HTTP_X_FORWARDED_PROTO', 'https')")):
        env = {**os.environ, "DJANGO_SETTINGS_MODULE": "campaign.settings", "BEHIND_PROXY": value, "DEBUG": "0"}
        out = subprocess.run([sys.executable, "-c", f"import django; django.setup(); {code}"], env=env,
                             cwd=Path(__file__).resolve().parents[2], capture_output=True, text=True, timeout=60)
        assert out.stdout.strip() == expected, out.stderr


@pytest.mark.postgres
def test_truncate_of_the_event_table_is_refused(table, require_postgres):
    from django.db import DatabaseError, transaction

    with connection.cursor() as cursor:
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")  # else PostgreSQL refuses for pending FK checks first
    with pytest.raises(DatabaseError, match="append-only"), transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute("TRUNCATE campaign_event CASCADE")
    assert Event.objects.filter(campaign=table.campaign).exists()


def test_the_advancement_page_works_while_the_cache_is_down(played, settings):
    settings.CACHES = {"default": {"BACKEND": "django.core.cache.backends.redis.RedisCache",
                                   "LOCATION": "redis://127.0.0.1:1/0",  # nothing listens there
                                   "OPTIONS": {"socket_timeout": 0.2, "socket_connect_timeout": 0.2}}}
    res = logged_in(played.gm).get("/campaigns/torn-road/audit/advancement/")
    assert res.status_code == 200


# --- deeply nested actions --------------------------------------------------------------------

def nested(depth: int) -> str:
    """``{"a": {"a": ... "x" ...}}`` as JSON text, ``depth`` objects deep. Written out, not
    ``json.dumps``-ed: encoding it would need ``depth`` frames of this test's own stack, which a
    pytest-xdist worker (deeper to begin with) does not have to spare at 950."""
    return '{"a": ' * depth + '"x"' + "}" * depth


@pytest.mark.parametrize("action", [
    '{"type": "request_roll", "character": HERO, "action": %s}' % nested(900),
    '{"type": "request_roll", "character": HERO, "action": %s}' % nested(950),
    '{"type": "create_character", "name": "Deep", "owner": %s}' % nested(900),
    '{"type": "roll", "notation": "1d6", "label": %s}' % nested(17),
], ids=["request_roll_900", "request_roll_950", "create_character_owner", "just_past_the_limit"])
def test_deeply_nested_actions_are_a_clear_400(table, action):
    hero = table.create_character(table.alice, "Hero", dict(table.campaign.rules.example_sheet))
    body = '{"id": "deep", "action": %s}' % action.replace("HERO", str(hero.id))
    res = logged_in(table.gm).post("/api/campaigns/torn-road/commands", body, content_type="application/json")
    # Past what the JSON parser takes it is bad_json; below, the action's own depth limit.
    assert res.status_code == 400 and res.json()["error"]["code"] in ("too_deep", "bad_json")


def test_a_character_owner_must_be_a_username(table):
    res = logged_in(table.gm).post("/api/campaigns/torn-road/commands", json.dumps(
        {"id": "own", "action": {"type": "create_character", "name": "X", "owner": {"username": "alice"}}}),
        content_type="application/json")
    assert res.status_code == 400
