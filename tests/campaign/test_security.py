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


def test_the_rate_limits_use_one_cache_client_for_every_thread(db, monkeypatch):
    """Every socket's token check and every command counts in the cache from some database thread;
    a cache client per thread (Django's own ``cache``) would open a Redis connection each."""
    import threading

    from django.core.cache import caches

    from campaign import ratelimit

    made = []
    create = caches.create_connection
    monkeypatch.setattr(caches, "create_connection", lambda alias: made.append(alias) or create(alias))
    monkeypatch.setattr(ratelimit, "_shared", None, raising=False)

    def check(n):
        ratelimit.check_failures("token", address=f"10.0.0.{n}")
        ratelimit.check_user_rate(n)

    threads = [threading.Thread(target=check, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    assert made == ["default"]


def test_check_deploy_is_clean_with_debug_off():
    env = {**os.environ, "DEBUG": "0", "SECRET_KEY": "k" * 60 + "-deploy-check", "ALLOWED_HOSTS": "table.example.org",
           "DATABASE_URL": "sqlite:////tmp/talekeeper-deploy-check.sqlite3"}
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
    """The per-user counter is one pipelined round trip in one transaction (the cache's add and incr were three);
    a new window's counter expires with it, and the cache reads the count it stored."""
    import redis
    from django.core.cache import caches

    from campaign import ratelimit

    settings.CACHES = {"default": {"BACKEND": "django.core.cache.backends.redis.RedisCache",
                                   "LOCATION": require_redis}}
    trips = []
    one, pipelined = redis.Redis.execute_command, redis.client.Pipeline.execute
    monkeypatch.setattr(redis.Redis, "execute_command",
                        lambda self, *args, **kw: trips.append(args[0]) or one(self, *args, **kw))
    # A transaction (MULTI/EXEC): a plain pipeline lets the key expire between SET NX and INCR.
    monkeypatch.setattr(redis.client.Pipeline, "execute",
                        lambda self, *args, **kw: trips.append(f"pipeline transaction={self.transaction}")
                        or pipelined(self, *args, **kw))
    key = f"rate:round-trips:{uuid.uuid4().hex}"  # its own window, whatever the clock does meanwhile
    counts = [ratelimit._count(key, timeout=70) for _ in range(3)]
    assert counts == [1, 2, 3] and trips == ["pipeline transaction=True"] * 3
    store, client = ratelimit._store()
    assert 0 < client.ttl(store.make_and_validate_key(key)) <= 70
    assert caches.create_connection("default").get(key) == 3


def test_the_app_stores_passwords_with_pbkdf2_only_test_servers_use_the_suites_fast_hasher():
    """Test servers check passwords with MD5 for speed (tests/server_settings.py); the app's own
    settings must keep Django's PBKDF2, or that speed-up would have leaked into production."""
    from django.conf import global_settings

    import campaign.settings as app
    import tests.server_settings as test_servers

    hashers = getattr(app, "PASSWORD_HASHERS", global_settings.PASSWORD_HASHERS)
    assert hashers[0] == "django.contrib.auth.hashers.PBKDF2PasswordHasher"
    assert test_servers.PASSWORD_HASHERS == ["django.contrib.auth.hashers.MD5PasswordHasher"]
