"""campaign/outages.py in-process: which answer a database outage gets, and where.

The real outages (a stopped PostgreSQL, a connection cut at COMMIT) are in tests/faults/;
these pin the mapping itself, on any database.
"""

from __future__ import annotations

import json
from unittest import mock

import pytest
from django.db import OperationalError, connection
from django.test import Client, RequestFactory

from campaign import outages
from campaign.models import Command, Event
from campaign.pipeline import outage_error
from tests.conftest import HANG


@pytest.fixture
def alice_client(table):
    client = Client()
    client.force_login(table.alice)
    return client


def test_an_outage_in_an_api_view_is_a_json_503_with_retry_after(table, alice_client):
    with mock.patch("campaign.api.events_after", side_effect=OperationalError("connection refused")):
        response = alice_client.get("/api/campaigns/torn-road/events")
    assert response.status_code == 503
    assert response["Content-Type"] == "application/json"
    assert response["Retry-After"] == str(outages.RETRY_AFTER_SECONDS)
    assert response.json()["error"]["code"] == "database_unavailable"
    # A read stores nothing: telling the reader "nothing was stored" would only puzzle them.
    assert response.json()["error"]["message"] == outages.READ_UNAVAILABLE_MESSAGE


def test_a_write_that_met_an_outage_is_told_nothing_was_stored():
    request = RequestFactory().post("/api/campaigns/torn-road/commands")
    response = outages.unavailable_response(request)
    assert json.loads(response.content)["error"]["message"] == outages.UNAVAILABLE_MESSAGE
    assert "nothing was stored" in outages.UNAVAILABLE_MESSAGE


def test_an_outage_in_a_page_is_an_html_503_that_needs_no_database(table, alice_client):
    with mock.patch("campaign.views.CampaignForm", side_effect=OperationalError("connection refused")):
        response = alice_client.get("/")
    assert response.status_code == 503
    assert response["Content-Type"].startswith("text/html")
    assert b"can't reach its database" in response.content


def test_the_500_handler_answers_503_for_an_outage_raised_outside_a_view_and_500_otherwise():
    request = RequestFactory().get("/api/campaigns/torn-road/events")
    try:
        raise OperationalError("server closed the connection unexpectedly")
    except OperationalError:
        response = outages.server_error(request)
    assert response.status_code == 503 and json.loads(response.content)["error"]["code"] == "database_unavailable"
    try:
        raise ValueError("a bug")
    except ValueError:
        assert outages.server_error(request).status_code == 500


def test_the_socket_mapping_names_each_outage_and_nothing_else():
    assert outage_error(OperationalError("gone")).code == "database_unavailable"
    unknown = outage_error(outages.UnknownOutcome(outages.UNKNOWN_MESSAGE))
    assert (unknown.code, unknown.status) == ("outcome_unknown", 503)
    assert "nothing was stored" not in unknown.message
    assert outage_error(ValueError("a bug")) is None


def raised_through_django(state: str) -> BaseException:
    """psycopg's error for ``state`` as Django's PostgreSQL backend raises it (on any test database)."""
    import types

    import psycopg
    from django.db.utils import DatabaseErrorWrapper

    with pytest.raises(Exception) as raised, DatabaseErrorWrapper(types.SimpleNamespace(Database=psycopg)):
        raise psycopg.errors.lookup(state)()
    return raised.value


@pytest.mark.parametrize("state", ["25006", "53100", "53200", "53300", "57P01", "57P02", "57P03", "57P04", "57P05"])
def test_a_database_that_refuses_for_now_is_an_outage_whatever_class_django_gives_it(state):
    """A read-only standby (25006: Django raises an ``InternalError``), exhausted resources (class 53)
    and a server shutting down or refusing connections (57P0x)."""
    exc = raised_through_django(state)
    assert outages.outage_code(exc) == "database_unavailable", (type(exc), type(exc.__cause__))


@pytest.mark.parametrize("state", ["23505", "42P01", "22P02"])
def test_a_refused_statement_is_not_an_outage(state):
    assert outages.outage_code(raised_through_django(state)) is None


def test_commands_waiting_behind_a_failed_one_are_told_what_befell_their_table_and_that_nothing_was_stored():
    from campaign.pipeline import failed_behind

    busy = OperationalError("canceling statement due to lock timeout")
    busy.__cause__ = type("LockNotAvailable", (Exception,), {"sqlstate": outages.LOCK_NOT_AVAILABLE})()
    assert failed_behind(busy).code == "table_busy"
    assert failed_behind(OperationalError("gone")).code == "database_unavailable"
    behind_unknown = failed_behind(outages.UnknownOutcome(outages.UNKNOWN_MESSAGE))
    assert behind_unknown.code == "database_unavailable" and "nothing was stored" in behind_unknown.message
    assert failed_behind(ValueError("refused for itself")) is None


@pytest.mark.django_db(transaction=True)
def test_a_command_that_waited_too_long_for_its_tables_lock_is_table_busy_and_stores_nothing(transactional_table):
    """The real error of each database: PostgreSQL's lock_timeout (DB_LOCK_TIMEOUT, shortened here
    for this connection), SQLite's busy timeout on its write lock."""
    from tests.locks import stream_lock_held

    table = transactional_table
    with connection.cursor() as cursor:
        cursor.execute("SET lock_timeout = '50ms'" if connection.vendor == "postgresql" else "PRAGMA busy_timeout = 50")
    with stream_lock_held(table.campaign.id), pytest.raises(OperationalError) as raised:
        table.command(table.alice, {"type": "roll", "notation": "2d6"}, client_id="while-held")
    busy = outage_error(raised.value)
    assert (busy.code, busy.status) == ("table_busy", 503) and "nothing was stored" in busy.message
    assert not Command.objects.filter(client_id="while-held").exists()
    assert table.command(table.alice, {"type": "roll", "notation": "2d6"}, client_id="while-held").events


@pytest.mark.django_db(transaction=True)
def test_a_failed_commit_is_an_unknown_outcome_and_a_failure_before_it_is_not(transactional_table):
    table = transactional_table
    with mock.patch.object(connection, "commit", side_effect=OperationalError("connection lost at COMMIT")):
        with pytest.raises(outages.UnknownOutcome):
            table.command(table.alice, {"type": "roll", "notation": "2d6"}, client_id="at-commit")
    with mock.patch("campaign.actions.commands.lock_stream", side_effect=OperationalError("connection refused")):
        with pytest.raises(OperationalError):
            table.command(table.alice, {"type": "roll", "notation": "2d6"}, client_id="before-commit")
    # (Here the mocked commit never ran, so neither was stored; tests/faults/test_doubled_roll.py
    # has the real case, where PostgreSQL committed and only the answer was lost.)
    assert not Command.objects.filter(client_id__in=["at-commit", "before-commit"]).exists()
    assert not Event.objects.filter(command__client_id__in=["at-commit", "before-commit"]).exists()


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("read", ["_open", "_backlog"], ids=["membership", "backlog"])
async def test_a_socket_connecting_during_an_outage_hears_why_and_closes_cleanly(transactional_table, read, caplog):
    from channels.db import database_sync_to_async
    from channels.testing import WebsocketCommunicator

    from campaign.asgi import application
    from campaign.models import ApiToken
    from sessions import consumers

    key = (await database_sync_to_async(ApiToken.objects.create)(user=transactional_table.alice)).key
    headers = [(b"origin", b"http://127.0.0.1:8000"), (b"host", b"127.0.0.1:8000"),
               (b"authorization", f"Bearer {key}".encode())]
    with mock.patch.object(consumers, read, side_effect=OperationalError("connection refused")):
        comm = WebsocketCommunicator(application, "/ws/campaigns/torn-road/table/", headers=headers)
        connected, _ = await comm.connect()
        assert connected
        frame = await comm.receive_json_from(timeout=HANG)
        while frame["type"] != "error":  # frames sent before the outage met the read (none today)
            frame = await comm.receive_json_from(timeout=HANG)
        closed = await comm.receive_output(timeout=HANG)
    # Before: the read's exception ended the socket with 1011 and a logged traceback.
    assert (frame["code"], frame["id"]) == ("database_unavailable", None)
    assert frame["message"] == outages.READ_UNAVAILABLE_MESSAGE  # opening a socket stores nothing
    assert closed == {"type": "websocket.close", "code": consumers.CLOSE_UNAVAILABLE}
    assert not [r for r in caplog.records if r.exc_info]
    await comm.disconnect(code=consumers.CLOSE_UNAVAILABLE)  # as the server answers a close: the consumer ends


def test_the_openapi_spec_lists_the_command_endpoint_s_503_answers():
    from campaign.openapi import SPEC_PATH

    spec = json.loads(SPEC_PATH.read_text())
    answer = spec["paths"]["/api/campaigns/{slug}/commands"]["post"]["responses"]["503"]
    unavailable = spec["components"]["responses"][answer["$ref"].rsplit("/", 1)[1]]
    examples = unavailable["content"]["application/json"]["examples"]
    assert {e["value"]["error"]["code"]: e["value"]["error"]["message"] for e in examples.values()} == outages.MESSAGES
    assert {"database_unavailable", "outcome_unknown"} <= set(outages.MESSAGES)
    assert "Retry-After" in unavailable["headers"]
