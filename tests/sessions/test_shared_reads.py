"""sessions.db.shared: identical database reads in flight at once are made once.

A reconnect storm brings every socket of a table to read the same backlog at about the same
time. A read already in flight is only good for callers who joined the table's group before it
started (``since``); the others wait for it to end and then share the next read, so a table's
sockets make a read or two, not one each.
"""

from __future__ import annotations

import asyncio
import threading

import pytest

from sessions.db import shared, tick

pytestmark = pytest.mark.django_db(transaction=True)


async def test_callers_who_came_too_late_for_the_read_in_flight_share_the_next_one():
    calls, release, started = [], threading.Event(), asyncio.Event()
    loop = asyncio.get_running_loop()

    def read(label):
        calls.append(label)
        loop.call_soon_threadsafe(started.set)
        release.wait(timeout=30)  # held until every caller is waiting
        return len(calls)

    first = asyncio.ensure_future(shared(("backlog", 1, 0), tick(), read, "first"))
    await started.wait()  # the first read is on its thread
    late = [asyncio.ensure_future(shared(("backlog", 1, 0), tick(), read, "late")) for _ in range(5)]
    early = asyncio.ensure_future(shared(("backlog", 1, 0), 0, read, "early"))  # joined before it started
    await asyncio.sleep(0)  # one loop step: every caller above has reached its wait
    release.set()
    assert await first == 1 and await early == 1
    assert [await t for t in late] == [2] * 5
    assert calls == ["first", "late"]
