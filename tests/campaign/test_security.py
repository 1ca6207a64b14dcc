"""Rate limits, and the deployment checklist."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from django.test import Client

# Does not depend on the database engine (rate limits and the deployment checklist): the SQLite pass leaves it
# out.
pytestmark = pytest.mark.one_database

ROOT = Path(__file__).resolve().parents[2]


def post(client, body):
    return client.post("/api/campaigns/torn-road/commands", data=json.dumps(body), content_type="application/json")


def test_per_user_rate_limit_answers_429_with_a_clear_message(table, settings):
    settings.RATE_LIMIT_USER_PER_MINUTE = 3
    client = Client()
    client.force_login(table.alice)
    statuses = [post(client, {"id": f"r{i}", "action": {"type": "roll", "notation": "1d6"}}).status_code
                for i in range(4)]
    assert statuses == [201, 201, 201, 429]
    res = post(client, {"id": "r9", "action": {"type": "roll", "notation": "1d6"}})
    assert res.json()["error"]["code"] == "rate_limited" and "minute" in res.json()["error"]["message"]
    other = Client()
    other.force_login(table.bob)  # the limit is per user
    assert post(other, {"id": "b1", "action": {"type": "roll", "notation": "1d6"}}).status_code == 201


def test_odds_previews_have_their_own_per_user_limit_answered_with_the_apis_429(table, settings):
    """An earlier review's find: the preview was limited by nothing, so a script could ask for odds
    (a sheet folded, odds counted) as fast as the server answered. It has a limit of its own, not
    the commands': the table page asks for odds by itself as its fields change (README)."""
    settings.RATE_LIMIT_PREVIEWS_PER_MINUTE = 2
    settings.RATE_LIMIT_USER_PER_MINUTE = 2
    hero = table.create_character(table.alice, "Hero", table.campaign.rules.example_sheet)
    action = {"type": "skill_test", "skill": "Strike", "target": 10, "character": hero.id}

    def preview(user):
        client = Client()
        client.force_login(user)
        return client.post("/api/campaigns/torn-road/preview", data=json.dumps({"action": action}),
                           content_type="application/json")

    answers = [preview(table.alice) for _ in range(3)]
    assert [res.status_code for res in answers] == [200, 200, 429]
    assert answers[2].json()["error"]["code"] == "rate_limited"
    assert "odds previews a minute" in answers[2].json()["error"]["message"]
    # Asking for odds used up none of her commands, and the limit is hers alone.
    client = Client()
    client.force_login(table.alice)
    assert [post(client, {"id": f"p{i}", "action": {"type": "roll", "notation": "1d6"}}).status_code
            for i in range(2)] == [201, 201]
    assert preview(table.gm).status_code == 200


def test_the_rate_limits_use_one_store_for_every_thread(db, settings, monkeypatch):
    """Every socket's token check and every command counts from some database thread; a store
    (a Redis client) per thread would open a Redis connection each."""
    import threading

    from campaign import ratelimit

    made = []
    make = ratelimit.storage_from_string
    monkeypatch.setattr(ratelimit, "storage_from_string", lambda uri, **kw: made.append(uri) or make(uri, **kw))
    monkeypatch.setattr(ratelimit, "_shared", None, raising=False)

    def check(n):
        ratelimit.check_failures("token", address=f"10.0.0.{n}")
        ratelimit.check_user_rate(n)

    threads = [threading.Thread(target=check, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    assert made == [settings.RATE_LIMIT_STORAGE]


def test_the_rate_limits_fail_open_while_their_store_is_down(db, settings, caplog):
    """A table keeps playing when Redis is away: no command, login or token check is refused or
    fails for want of its counter (nothing listens on port 1)."""
    from campaign import ratelimit

    settings.RATE_LIMIT_STORAGE = "redis://127.0.0.1:1/0"
    settings.RATE_LIMIT_USER_PER_MINUTE = 0  # every command over the limit, if it were counted
    ratelimit.check_user_rate(1)
    ratelimit.check_preview_rate(1)
    ratelimit.record_failure("login", account="alice", address="10.0.0.1")
    ratelimit.check_failures("login", account="alice", address="10.0.0.1")
    assert "rate limit store unavailable" in caplog.text


def test_failures_refuse_at_the_limit_for_the_account_or_the_address(db, settings):
    from campaign import ratelimit

    settings.LOGIN_FAILURES_PER_5_MINUTES = 2
    for _ in range(2):
        ratelimit.check_failures("login", account="alice", address="10.0.0.1")
        ratelimit.record_failure("login", account="alice", address="10.0.0.1")
    with pytest.raises(ratelimit.RateLimited):
        ratelimit.check_failures("login", account="alice", address="10.0.0.9")  # the account failed twice
    with pytest.raises(ratelimit.RateLimited):
        ratelimit.check_failures("login", account="bob", address="10.0.0.1")  # the address did
    ratelimit.check_failures("login", account="bob", address="10.0.0.9")
    ratelimit.check_failures("token", address="10.0.0.1")  # each kind counts apart


def test_check_deploy_is_clean_with_debug_off():
    """A production configuration as docs/operations.md describes it (PostgreSQL, Redis, behind a TLS
    proxy) passes `check --deploy` with nothing but the defaults for the security settings."""
    env = {**os.environ, "DEBUG": "0", "SECRET_KEY": "k" * 60 + "-deploy-check", "ALLOWED_HOSTS": "table.example.org",
           "DATABASE_URL": "postgres://postgres@127.0.0.1:5432/talekeeper", "REDIS_URL": "redis://127.0.0.1:6379/15",
           "BEHIND_PROXY": "1"}
    for name in ("SECURE_SSL_REDIRECT", "SECURE_COOKIES", "SECURE_HSTS_SECONDS"):
        env.pop(name, None)
    result = subprocess.run([sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
                            cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout


def test_check_deploy_warns_without_a_secret_key():
    env = {**os.environ, "DEBUG": "0", "ALLOWED_HOSTS": "table.example.org",
           "DATABASE_URL": "sqlite:////tmp/talekeeper-deploy-check.sqlite3"}
    env.pop("SECRET_KEY", None)
    result = subprocess.run([sys.executable, "manage.py", "check", "--deploy"], cwd=ROOT, env=env,
                            capture_output=True, text=True, timeout=60)
    assert "talekeeper.W001" in result.stdout + result.stderr


@pytest.mark.redis
def test_a_command_is_counted_in_one_round_trip_to_redis(db, require_redis, settings, monkeypatch):
    """The per-user counter is one round trip: one script increments it and gives a new window's
    counter its expiry, atomically (a key that never expired would hold its count for good)."""
    import redis

    from campaign import ratelimit

    settings.RATE_LIMIT_STORAGE = require_redis
    settings.RATE_LIMIT_USER_PER_MINUTE = 2
    ratelimit.check_user_rate(10**9)  # the script is loaded once per Redis: not a command's cost
    trips = []
    one = redis.Redis.execute_command
    monkeypatch.setattr(redis.Redis, "execute_command",
                        lambda self, *args, **kw: trips.append(args[0]) or one(self, *args, **kw))
    user = uuid.uuid4().int % 10**9  # its own window, whatever the clock does meanwhile
    ratelimit.check_user_rate(user)
    ratelimit.check_user_rate(user)
    with pytest.raises(ratelimit.RateLimited):
        ratelimit.check_user_rate(user)
    assert trips == ["EVALSHA"] * 3
    client = ratelimit._limiter().storage.storage
    (key,) = client.keys(f"*user/{user}/*")
    assert int(client.get(key)) == 3 and 0 < client.ttl(key) <= 60


def test_the_app_stores_passwords_with_pbkdf2_only_test_servers_use_the_suites_fast_hasher():
    """Test servers check passwords with MD5 for speed (tests/server_settings.py); the app's own
    settings must keep Django's PBKDF2, or that speed-up would have leaked into production."""
    from django.conf import global_settings

    import campaign.settings as app
    import tests.server_settings as test_servers

    hashers = getattr(app, "PASSWORD_HASHERS", global_settings.PASSWORD_HASHERS)
    assert hashers[0] == "django.contrib.auth.hashers.PBKDF2PasswordHasher"
    assert test_servers.PASSWORD_HASHERS == ["django.contrib.auth.hashers.MD5PasswordHasher"]
