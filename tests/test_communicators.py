"""The suite's own harness (tests/conftest.py): what one test leaves behind must not reach the next."""

from __future__ import annotations

import asyncio
import contextlib

import channels.db
import django.db
from channels.testing import ApplicationCommunicator


async def echo(scope, receive, send):
    while True:
        await send(await receive())


async def settle():
    """Let every task run until it waits on something outside the loop (no clock involved)."""
    for _ in range(10):
        await asyncio.sleep(0)


async def test_communicators_awaiting_at_once_give_channels_its_connection_cleanup_back():
    """The first to wait is answered first: mock.patch's swaps, undone in that order, left the
    no-op behind (and every later database_sync_to_async call kept its pooled connection)."""
    first, second = ApplicationCommunicator(echo, {"type": "test"}), ApplicationCommunicator(echo, {"type": "test"})
    waiting_first = asyncio.create_task(first.receive_output(timeout=10))
    await settle()
    waiting_second = asyncio.create_task(second.receive_output(timeout=10))
    await settle()
    assert channels.db.close_old_connections is not django.db.close_old_connections  # swapped while they wait
    await first.send_input({"type": "one"})
    assert await waiting_first == {"type": "one"}
    await second.send_input({"type": "two"})
    assert await waiting_second == {"type": "two"}
    assert channels.db.close_old_connections is django.db.close_old_connections
    for comm in (first, second):
        comm.future.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await comm.future
