"""`manage.py check --deploy`'s own warnings (campaign/checks.py): what a public server must not keep
from `make run`. The missing signing key's error is tests/campaign/test_signing_key.py's."""

from __future__ import annotations

import pytest

from campaign.checks import production_services


def ids(settings) -> set[str]:
    return {w.id for w in production_services(None)}


@pytest.fixture
def production(settings):
    """A configured server: PostgreSQL, Redis, behind a proxy, DEBUG off."""
    settings.DEBUG = False
    settings.DATABASES = {"default": {**settings.DATABASES["default"], "ENGINE": "campaign.postgresql"}}
    settings.REDIS_URL = "redis://redis:6379/0"
    settings.SECURE_SSL_REDIRECT = True
    settings.SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    return settings


def test_a_configured_server_gets_none_of_them(production):
    assert ids(production) == set()


def test_sqlite_in_production_is_named(production):
    production.DATABASES = {"default": {**production.DATABASES["default"], "ENGINE": "django.db.backends.sqlite3"}}
    assert ids(production) == {"talekeeper.W002"}


def test_no_redis_is_named_for_several_processes(production):
    production.REDIS_URL = ""
    [warning] = production_services(None)
    assert warning.id == "talekeeper.W003" and "several" in warning.msg


def test_https_redirect_without_the_proxy_setting_is_named(production):
    del production.SECURE_PROXY_SSL_HEADER
    [warning] = production_services(None)
    assert warning.id == "talekeeper.W004" and "BEHIND_PROXY=1" in warning.hint


def test_make_runs_development_server_is_left_alone(production):
    production.DEBUG = True
    production.REDIS_URL = ""
    production.DATABASES = {"default": {**production.DATABASES["default"], "ENGINE": "django.db.backends.sqlite3"}}
    assert ids(production) == set()
