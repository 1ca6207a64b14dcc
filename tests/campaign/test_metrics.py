"""Prometheus metrics (campaign/metrics.py): off unless METRICS_TOKEN is set, only for the token's
bearer when on, counting commands, errors, outages and sockets with labels that name nothing of a
campaign or a member."""

from __future__ import annotations

import json

import pytest
from django.db import OperationalError
from django.test import Client, RequestFactory

from campaign import metrics
from campaign.outages import DatabaseOutageMiddleware
from rules import get_system

TOKEN = "metrics-token-for-the-tests-0123456789"

pytestmark = pytest.mark.django_db


@pytest.fixture
def metrics_on(settings):
    settings.METRICS_TOKEN = TOKEN


def scrape() -> str:
    response = Client().get("/metrics", HTTP_AUTHORIZATION=f"Bearer {TOKEN}")
    assert response.status_code == 200, response.content
    assert response["Content-Type"].startswith("text/plain; version=")
    assert "no-cache" in response["Cache-Control"]
    return response.content.decode()


def value(name: str, **labels) -> float:
    from prometheus_client import REGISTRY

    return REGISTRY.get_sample_value(name, labels) or 0.0


def post_command(token: str, action: dict, client_id: str):
    return Client().post("/api/campaigns/torn-road/commands", json.dumps({"id": client_id, "action": action}),
                         content_type="application/json", HTTP_AUTHORIZATION=f"Bearer {token}")


def test_off_by_default_there_is_no_metrics_page_and_nothing_is_counted(settings, table):
    assert settings.METRICS_TOKEN == ""
    assert Client().get("/metrics", HTTP_AUTHORIZATION="Bearer ").status_code == 404
    before = value("talekeeper_commands_total", action="roll", outcome="ok")
    token = table.tokens()["alice"]
    assert post_command(token, {"type": "roll", "notation": "2d6"}, "off-1").status_code == 201
    assert value("talekeeper_commands_total", action="roll", outcome="ok") == before


def test_on_only_the_tokens_bearer_reads_them(metrics_on):
    client = Client()
    for headers in ({}, {"HTTP_AUTHORIZATION": "Bearer wrong"}, {"HTTP_AUTHORIZATION": f"Basic {TOKEN}"},
                    {"HTTP_AUTHORIZATION": f"Bearer {TOKEN}x"}):
        response = client.get("/metrics", **headers)
        assert response.status_code == 401, headers
        assert response["WWW-Authenticate"].startswith("Bearer")
        assert b"talekeeper" not in response.content
    assert "talekeeper_open_sockets" in scrape()


def test_commands_are_counted_by_type_and_outcome_and_timed(metrics_on, table):
    token = table.tokens()["alice"]
    ok = value("talekeeper_commands_total", action="roll", outcome="ok")
    refused = value("talekeeper_commands_total", action="other", outcome="refused")
    timed = value("talekeeper_command_seconds_count")
    unknown = value("talekeeper_errors_total", transport="http", code="unknown_action")

    assert post_command(token, {"type": "roll", "notation": "2d6"}, "c-1").status_code == 201
    # A type nobody knows is counted as "other": a label never carries what a client made up.
    assert post_command(token, {"type": "alice-was-here", "x": 1}, "c-2").status_code == 400

    assert value("talekeeper_commands_total", action="roll", outcome="ok") == ok + 1
    assert value("talekeeper_commands_total", action="other", outcome="refused") == refused + 1
    assert value("talekeeper_command_seconds_count") == timed + 2
    assert value("talekeeper_errors_total", transport="http", code="unknown_action") == unknown + 1
    text = scrape()
    assert 'talekeeper_commands_total{action="roll",outcome="ok"}' in text
    for private in ("torn-road", "Torn Road", "alice", "alice-was-here", token):
        assert private not in text, private


def test_a_rule_systems_own_action_is_named(metrics_on, table_for):
    table = table_for("wyrm")
    hero = table.create_character(table.alice, "Hero", get_system("wyrm").example_sheet)
    token = table.tokens()["alice"]
    before = value("talekeeper_commands_total", action="check", outcome="refused")
    response = post_command(token, {"type": "check", "character": hero.id, "attribute": "nonsense"}, "w-1")
    assert response.status_code in (400, 422), response.content
    assert value("talekeeper_commands_total", action="check", outcome="refused") == before + 1


def test_database_unavailable_answers_are_counted(metrics_on):
    before = value("talekeeper_unavailable_total", transport="http", code="database_unavailable")
    errors = value("talekeeper_errors_total", transport="http", code="database_unavailable")
    request = RequestFactory().post("/api/campaigns/torn-road/commands")
    response = DatabaseOutageMiddleware(lambda r: None).process_exception(request, OperationalError("gone"))
    assert response.status_code == 503
    assert value("talekeeper_unavailable_total", transport="http", code="database_unavailable") == before + 1
    assert value("talekeeper_errors_total", transport="http", code="database_unavailable") == errors + 1


def test_labels_are_the_servers_own_names():
    assert metrics.label("too_many_sockets") == "too_many_sockets"
    for made_up in ("Torn Road", "x" * 41, "alice@example.org", "", None, 7):
        assert metrics.label(made_up) == "other"


def test_open_sockets_are_read_at_each_scrape(metrics_on, monkeypatch):
    monkeypatch.setattr(metrics, "_open_sockets", lambda: 3)
    assert "talekeeper_open_sockets 3.0" in scrape()


@pytest.mark.django_db(transaction=True)
@pytest.mark.asyncio
async def test_a_sockets_errors_and_the_open_sockets_are_counted(settings, transactional_table):
    from tests.sessions.test_table_consumer import connect, receive, until_ready

    settings.METRICS_TOKEN = TOKEN
    before = value("talekeeper_errors_total", transport="socket", code="bad_frame")
    comm = await connect(transactional_table, transactional_table.alice)
    try:
        await until_ready(comm)
        assert value("talekeeper_open_sockets") == 1
        await comm.send_json_to({"type": "dance"})
        assert (await receive(comm))["code"] == "bad_frame"
        assert value("talekeeper_errors_total", transport="socket", code="bad_frame") == before + 1
    finally:
        await comm.disconnect()
    assert value("talekeeper_open_sockets") == 0


def test_a_failing_count_never_fails_the_command(metrics_on, table, monkeypatch):
    def broken():
        raise ValueError("Duplicated timeseries in CollectorRegistry")

    monkeypatch.setattr(metrics, "_get", broken)
    token = table.tokens()["alice"]
    assert post_command(token, {"type": "roll", "notation": "2d6"}, "broken-1").status_code == 201
