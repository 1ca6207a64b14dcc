"""A table socket never outlives the right it was opened with, and only this site's pages open one.

Logout, deactivation, removal from the campaign and a role change close the
user's open sockets at once (through their per-user group in the channel
layer), and every command re-checks the membership, so a socket whose close was
lost still can't write. Origins must match scheme, host and port; one user
holds at most SOCKETS_PER_USER sockets.
"""

from __future__ import annotations

import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator

from campaign.asgi import application
from campaign.models import ApiToken, Event
from tests.conftest import HANG

from .test_table_consumer import connect, connect_signed_in, until_ready

pytestmark = pytest.mark.django_db(transaction=True)


async def closed_with(comm, code: int = 4403) -> None:
    """The socket gets a ``revoked`` error frame, then is closed with ``code``."""
    while True:
        frame = await comm.receive_output(timeout=HANG)
        if frame["type"] == "websocket.close":
            assert frame["code"] == code, frame
            return
        if frame["type"] == "websocket.send" and '"revoked"' in (frame.get("text") or ""):
            continue


async def test_removal_from_the_campaign_closes_the_members_socket_at_once(transactional_table):
    table = transactional_table
    alice, bob = await connect(table, table.alice), await connect(table, table.bob)
    await until_ready(alice)
    await until_ready(bob)
    await database_sync_to_async(table.command)(table.gm, {"type": "remove_member", "username": "alice"})
    await closed_with(alice)
    # Only alice's socket: bob's stays open and hears the removal.
    while True:
        frame = await bob.receive_json_from(timeout=HANG)
        if frame["type"] == "event" and frame["event"]["type"] == "member_removed":
            break
    await bob.disconnect()


async def test_a_role_change_closes_the_socket_so_it_reconnects_with_the_new_role(transactional_table):
    table = transactional_table
    bob = await connect(table, table.bob)
    await until_ready(bob)
    await database_sync_to_async(table.command)(table.gm, {"type": "change_role", "username": "bob",
                                                           "role": "spectator"})
    await closed_with(bob)


async def test_deactivation_closes_the_socket_and_the_socket_can_no_longer_append(transactional_table):
    table = transactional_table
    alice = await connect(table, table.alice)
    await until_ready(alice)

    def deactivate():
        table.alice.is_active = False
        table.alice.save()

    await database_sync_to_async(deactivate)()
    await closed_with(alice)


async def test_a_command_on_a_socket_whose_close_was_lost_is_refused_and_closes_it(transactional_table, settings):
    """The re-check on every command does not depend on the close message arriving."""
    table = transactional_table
    alice = await connect(table, table.alice)
    await until_ready(alice)

    def deactivate_quietly():  # an UPDATE behind the ORM's back: no signal, no close message
        from django.contrib.auth import get_user_model

        get_user_model().objects.filter(pk=table.alice.pk).update(is_active=False)
        return Event.objects.count()

    before = await database_sync_to_async(deactivate_quietly)()
    await alice.send_json_to({"type": "command", "id": "late", "action": {"type": "roll", "notation": "1d6"}})
    frame = await alice.receive_json_from(timeout=HANG)
    while frame["type"] != "error":
        frame = await alice.receive_json_from(timeout=HANG)
    assert frame["code"] == "not_member"
    await closed_with(alice)
    assert await database_sync_to_async(Event.objects.count)() == before


async def test_logout_closes_the_users_sockets(transactional_table):
    comm, client = await connect_signed_in(transactional_table.alice)
    await until_ready(comm)
    await database_sync_to_async(client.post)("/logout/")
    await closed_with(comm)


async def test_revoking_a_token_closes_the_sockets_opened_with_it_only(transactional_table):
    from django.test import Client

    table = transactional_table
    doomed, kept = await database_sync_to_async(
        lambda: (ApiToken.objects.create(user=table.alice, name="bot"), ApiToken.objects.create(user=table.alice)))()
    by_doomed, by_kept = await connect(table, None, token=doomed.key), await connect(table, None, token=kept.key)
    signed_in, client = await connect_signed_in(table.alice)
    for comm in (by_doomed, by_kept, signed_in):
        await until_ready(comm)
    await database_sync_to_async(client.post)("/profile/", {"revoke": [str(doomed.pk)]})
    await closed_with(by_doomed)
    # The others stay open: a ping is still answered on each.
    for comm in (by_kept, signed_in):
        await comm.send_json_to({"type": "ping"})
        while (frame := await comm.receive_json_from(timeout=HANG))["type"] != "pong":
            assert frame["type"] in ("presence", "heartbeat"), frame
    for comm in (by_kept, signed_in):
        await comm.disconnect()


async def test_a_password_change_closes_the_users_sockets_and_revokes_her_tokens(transactional_table):
    table = transactional_table
    key = await database_sync_to_async(lambda: ApiToken.objects.create(user=table.alice).key)()
    by_token = await connect(table, None, token=key)
    signed_in, client = await connect_signed_in(table.alice)
    for comm in (by_token, signed_in):
        await until_ready(comm)
    changed = await database_sync_to_async(client.post)("/password/", {
        "old_password": "pw-alice-123456", "new_password1": "a quiet harbour at noon",
        "new_password2": "a quiet harbour at noon"})
    assert changed.status_code == 302
    await closed_with(by_token)
    await closed_with(signed_in)
    assert not await database_sync_to_async(ApiToken.objects.filter(user=table.alice).exists)()
    # This browser stays logged in: the change itself needs nothing more.
    assert (await database_sync_to_async(client.get)("/profile/")).status_code == 200


async def test_a_password_set_outside_the_page_closes_the_users_sockets_too(transactional_table):
    """A reset link, ``manage.py changepassword`` and the admin all set a password and save the user:
    the same path as ``/password/`` closes her sockets and revokes her tokens."""
    table = transactional_table
    key = await database_sync_to_async(lambda: ApiToken.objects.create(user=table.alice).key)()
    by_token = await connect(table, None, token=key)
    await until_ready(by_token)

    def operator_sets_a_password():
        table.alice.set_password("a lantern by the ford")
        table.alice.save()

    await database_sync_to_async(operator_sets_a_password)()
    await closed_with(by_token)
    assert not await database_sync_to_async(ApiToken.objects.filter(user=table.alice).exists)()


@pytest.mark.parametrize("origin, host, accepted", [
    (b"http://127.0.0.1:8000", b"127.0.0.1:8000", True),
    (b"http://localhost:9999", b"localhost:8000", False),   # another port: another site
    (b"https://127.0.0.1:8000", b"127.0.0.1:8000", False),  # another scheme
    (b"http://evil.example", b"evil.example", False),        # a host not in ALLOWED_HOSTS
    (b"null", b"127.0.0.1:8000", False),
    (b"http://127.0.0.1:8000", None, False),                  # no Host to compare with
    (b"https://table.example.org", b"127.0.0.1:8000", True),  # CSRF_TRUSTED_ORIGINS, exactly
    (b"https://table.example.org:444", b"127.0.0.1:8000", False),
])
async def test_origin_must_match_scheme_host_and_port(transactional_table, settings, origin, host, accepted):
    settings.CSRF_TRUSTED_ORIGINS = ["https://table.example.org"]
    key = await database_sync_to_async(lambda: ApiToken.objects.create(user=transactional_table.alice).key)()
    headers = [(b"origin", origin), (b"authorization", f"Bearer {key}".encode())]
    if host:
        headers.append((b"host", host))
    comm = WebsocketCommunicator(application, "/ws/campaigns/torn-road/table/", headers=headers)
    connected, _ = await comm.connect()
    assert connected is accepted
    if connected:
        await comm.disconnect()


async def test_one_user_holds_at_most_the_configured_number_of_sockets(transactional_table, settings):
    settings.SOCKETS_PER_USER = 2
    table = transactional_table
    first, second = await connect(table, table.alice), await connect(table, table.alice)
    await until_ready(first)
    await until_ready(second)
    third = await connect(table, table.alice)
    frame = await third.receive_json_from(timeout=HANG)
    assert frame["code"] == "too_many_sockets"
    assert (await third.receive_output(timeout=HANG))["code"] == 4429
    other = await connect(table, table.bob)  # the cap is per user
    await until_ready(other)
    for comm in (first, second, other):
        await comm.disconnect()
