"""HTTP under daphne (campaign/asgi.py): the middleware and the view on one trip to the request's
thread (what an HTTP command costs daphne).

These go through the ASGI handler daphne runs, as daphne calls it; Django's test clients build
handlers of their own."""

from __future__ import annotations

import json

import pytest
from asgiref.sync import SyncToAsync, sync_to_async
from asgiref.testing import ApplicationCommunicator
from django.db import connections

from campaign.models import ApiToken, Event


async def request(method: str, path: str, body: bytes = b"", headers=()) -> tuple[int, dict, bytes]:
    from campaign.asgi import OneHopASGIHandler

    # A handler of its own: the middleware read the settings as this test has them (the
    # application's were made when some module imported it).
    application = OneHopASGIHandler()
    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": method, "path": path,
             "raw_path": path.encode(), "query_string": b"", "root_path": "", "scheme": "http",
             "headers": [(b"host", b"testserver"), (b"content-type", b"application/json"),
                         (b"content-length", str(len(body)).encode()), *headers],
             "client": ("127.0.0.1", 40000), "server": ("testserver", 80)}
    comm = ApplicationCommunicator(application, scope)
    await comm.send_input({"type": "http.request", "body": body, "more_body": False})
    start = await comm.receive_output(timeout=20)
    content = b""
    while True:
        message = await comm.receive_output(timeout=20)
        content += message.get("body", b"")
        if not message.get("more_body"):
            break
    await comm.wait(timeout=20)
    return start["status"], {k.decode().lower(): v.decode() for k, v in start["headers"]}, content


@pytest.fixture
def count_hops(monkeypatch):
    """How many times anything went to a thread with ``sync_to_async``."""
    hops = []
    original = SyncToAsync.__call__

    async def counted(self, *args, **kwargs):
        hops.append(getattr(self.func, "__qualname__", type(self.func).__name__))
        return await original(self, *args, **kwargs)

    monkeypatch.setattr(SyncToAsync, "__call__", counted)
    return hops


@pytest.mark.django_db(transaction=True)
async def test_a_command_over_http_takes_one_trip_through_the_middleware_and_view(transactional_table, count_hops):
    table = transactional_table
    key = await sync_to_async(lambda: ApiToken.objects.create(user=table.alice).key)()
    count_hops.clear()
    body = json.dumps({"id": "hop-1", "action": {"type": "roll", "notation": "2d6"}}).encode()
    status, headers, content = await request("POST", "/api/campaigns/torn-road/commands", body,
                                             [(b"authorization", f"Bearer {key}".encode())])
    assert status == 201, content
    assert json.loads(content)["type"] == "roll"
    # request_started, the middleware and the view, the response's close (request_finished):
    # Django's async middleware mode took about fifteen.
    assert len(count_hops) == 3, count_hops
    # ... and every middleware still ran on the way.
    assert headers["x-frame-options"] == "DENY" and "content-security-policy" in headers
    assert await sync_to_async(lambda: Event.objects.filter(campaign=table.campaign, type="roll").count())() == 1
    await sync_to_async(connections.close_all)()


@pytest.mark.django_db(transaction=True)
async def test_a_session_write_without_csrf_is_still_refused_under_asgi(transactional_table):
    from django.contrib.auth import SESSION_KEY, BACKEND_SESSION_KEY, HASH_SESSION_KEY
    from django.contrib.sessions.backends.db import SessionStore

    table = transactional_table

    def login():
        session = SessionStore()
        session[SESSION_KEY] = str(table.alice.pk)
        session[BACKEND_SESSION_KEY] = "django.contrib.auth.backends.ModelBackend"
        session[HASH_SESSION_KEY] = table.alice.get_session_auth_hash()
        session.save()
        return session.session_key

    session_key = await sync_to_async(login)()
    body = json.dumps({"id": "csrf-1", "action": {"type": "roll", "notation": "2d6"}}).encode()
    status, _, content = await request("POST", "/api/campaigns/torn-road/commands", body,
                                       [(b"cookie", f"sessionid={session_key}".encode())])
    assert status == 403 and json.loads(content)["error"]["code"] == "csrf"
    assert not await sync_to_async(lambda: Event.objects.filter(campaign=table.campaign, type="roll").exists())()
    await sync_to_async(connections.close_all)()


def test_the_server_freezes_what_it_imported_out_of_the_collectors_full_passes():
    """campaign/asgi.py: gen2 collections walked every object of Django and the app, pausing every
    table of the process (docs/performance.md); frozen at import, they are skipped."""
    import gc

    import campaign.asgi  # noqa: F401

    assert gc.get_freeze_count() > 0
