"""The server's log lines (campaign/logs.py): who and where on each, one line per incident."""

from __future__ import annotations

import io
import json
import logging
import logging.config

import pytest
from django.conf import settings
from django.test import RequestFactory

from campaign.logs import ConsoleHandler, JsonFormatter, RequestContext, TextFormatter, bind, bound, unbind


class Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now


@pytest.fixture
def console():
    """A logger writing through the console handler to a string, with a clock the test moves."""
    clock, stream = Clock(), io.StringIO()
    handler = ConsoleHandler(stream, window=60, clock=clock)
    handler.setFormatter(JsonFormatter())
    logger = logging.getLogger("talekeeper.test.logs")
    logger.handlers, logger.propagate, logger.level = [handler], False, logging.INFO
    yield logger, clock, lambda: [json.loads(line) for line in stream.getvalue().splitlines()]
    logger.handlers, logger.propagate = [], True


def test_an_outage_seen_by_every_socket_is_one_line_and_a_count(console):
    logger, clock, lines = console
    for socket in range(1000):  # a 20 s outage: every socket of a process fails, over and over
        clock.now += 0.02
        logger.warning("presence arrive failed: %r", ConnectionError(f"socket {socket}"))
    assert [line["message"] for line in lines()] == ["presence arrive failed: ConnectionError('socket 0')"]
    clock.now += 61  # quiet for the window: the incident is over; the next line says what was held back
    logger.info("a table opened")
    summary, after = lines()[1:]
    assert summary["level"] == "WARNING" and summary["logger"] == "talekeeper.test.logs"
    assert summary["message"] == '999 more like "presence arrive failed: %r" held back over 20 s'
    assert after["message"] == "a table opened"


def test_other_warnings_and_every_info_line_are_written(console):
    logger, clock, lines = console
    logger.warning("rate limit store unavailable: %r", "a")
    logger.warning("cache unavailable: %r", "b")  # another incident
    logger.error("rate limit store unavailable: %r", "c")  # another level: another incident
    logger.info("socket %s", 1)
    logger.info("socket %s", 1)
    assert len(lines()) == 5


def test_a_repeat_after_the_window_starts_a_new_incident(console):
    logger, clock, lines = console
    logger.warning("cache unavailable")
    clock.now += 59
    logger.warning("cache unavailable")  # held: 59 s after the last
    clock.now += 59
    logger.warning("cache unavailable")  # held: the incident lasts while repeats come within the window
    clock.now += 60
    logger.warning("cache unavailable")  # quiet 60 s: over; this one opens the next incident
    assert [line["message"] for line in lines()] == [
        "cache unavailable", '2 more like "cache unavailable" held back over 118 s', "cache unavailable"]


def test_each_line_carries_the_bound_request_campaign_and_user(console):
    logger, clock, lines = console
    token = bind(request="r1", campaign="torn-road")
    try:
        bind(user=7)
        logger.info("hello")
    finally:
        unbind(token)
    logger.info("outside")
    first, second = lines()
    assert {k: first[k] for k in ("request", "campaign", "user", "level", "logger")} == {
        "request": "r1", "campaign": "torn-road", "user": 7, "level": "INFO", "logger": "talekeeper.test.logs"}
    assert first["time"].endswith("Z")
    assert "request" not in second and "user" not in second


def test_text_lines_carry_the_same_fields_and_the_traceback():
    record = logging.LogRecord("campaign.api", logging.ERROR, __file__, 1, "failed %s", ("x",), None)
    try:
        raise ValueError("boom")
    except ValueError:
        import sys

        record.exc_info = sys.exc_info()
    record.context = {"request": "r1", "user": 3}
    text = TextFormatter().format(record)
    assert " ERROR campaign.api [request=r1 user=3] failed x\nTraceback" in text and "ValueError: boom" in text
    assert json.loads(JsonFormatter().format(record))["exception"].endswith("ValueError: boom")


def test_a_request_binds_its_id_user_and_campaign(table, settings):
    settings.BEHIND_PROXY = False
    seen = []

    def view(request):  # Django calls process_view inside the middleware's __call__
        middleware.process_view(request, None, (), {"slug": "torn-road"})
        seen.append(bound())
        return "response"

    middleware = RequestContext(view)
    request = RequestFactory().get("/campaigns/torn-road/", HTTP_X_REQUEST_ID="from-client")
    request.user = table.alice
    assert middleware(request) == "response"
    (fields,) = seen
    assert fields["campaign"] == "torn-road" and fields["user"] == table.alice.pk
    assert fields["request"] != "from-client" and len(fields["request"]) == 12  # a client's id is not believed
    assert bound() == {}


def test_behind_a_proxy_its_request_id_names_the_request(settings):
    settings.BEHIND_PROXY = True
    seen = []
    RequestContext(lambda request: seen.append(bound()))(RequestFactory().get("/", HTTP_X_REQUEST_ID="abc-123"))
    assert seen == [{"request": "abc-123"}]


def test_the_settings_log_through_the_console_handler(capsys):
    handler = logging.getLogger().handlers[0]
    assert isinstance(handler, ConsoleHandler) and handler.incidents.window == 60
    assert settings.LOGGING["handlers"]["console"]["class"] == "campaign.logs.ConsoleHandler"
