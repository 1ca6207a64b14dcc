"""The probes (campaign/health.py): ``/healthz`` says the process is up, ``/readyz`` that it can
serve tables; both answer anyone, and tell an outsider which check failed but nothing more.

A stopped PostgreSQL under a real server: tests/faults/test_idle_sockets_in_an_outage.py."""

from __future__ import annotations

import socket
from unittest import mock

import pytest
from django.db import OperationalError
from django.test import Client

from campaign import health


@pytest.fixture(autouse=True)
def forget_migrations_checked(monkeypatch):
    monkeypatch.setattr(health, "_migrated", False)


def failing_cursor():
    return mock.patch.object(health.connection, "cursor",
                             side_effect=OperationalError("connection to server at 10.0.0.7 failed: secret detail"))


@pytest.mark.django_db
def test_healthz_answers_without_login_and_without_the_database():
    with failing_cursor():
        response = Client().get("/healthz")
    assert response.status_code == 200 and response.json() == {"status": "ok"}
    assert "no-cache" in response["Cache-Control"]


@pytest.mark.django_db
def test_readyz_is_ready_when_database_migrations_and_channel_layer_are():
    response = Client().get("/readyz")
    assert response.status_code == 200, response.content
    assert response.json() == {"status": "ready"}


@pytest.mark.django_db
def test_readyz_names_a_database_away_and_nothing_else(caplog):
    with failing_cursor():
        response = Client().get("/readyz")
    assert response.status_code == 503
    assert response.json() == {"status": "unavailable", "failing": ["database", "migrations"]}
    assert b"10.0.0.7" not in response.content and b"secret" not in response.content
    assert "10.0.0.7" in caplog.text  # the operator reads it in the log


@pytest.mark.django_db
def test_readyz_is_not_ready_while_a_migration_is_pending():
    from django.db.migrations.executor import MigrationExecutor

    with mock.patch.object(MigrationExecutor, "migration_plan", return_value=[(mock.Mock(), False)]):
        response = Client().get("/readyz")
    assert response.status_code == 503 and response.json()["failing"] == ["migrations"]
    assert Client().get("/readyz").status_code == 200  # applied now: ready


@pytest.mark.django_db
def test_readyz_is_not_ready_without_its_redis(settings):
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    settings.REDIS_URL = f"redis://127.0.0.1:{port}/0"
    settings.CHANNEL_LAYERS = {"default": {"BACKEND": "channels_redis.core.RedisChannelLayer",
                                           "CONFIG": {"hosts": [settings.REDIS_URL]}}}
    response = Client().get("/readyz")
    assert response.status_code == 503 and response.json()["failing"] == ["channel_layer"]


@pytest.mark.django_db
def test_the_probes_are_not_redirected_to_https(settings):
    settings.SECURE_SSL_REDIRECT = True
    assert Client().get("/healthz").status_code == 200
    assert Client().get("/readyz").status_code == 200
    assert Client().get("/login/").status_code == 301  # everything else is
