"""sessions.db.in_turn: a campaign's commands take this process's database threads one at a time.

They would wait for the campaign's stream lock one after another anyway; waiting for their turn on
the event loop instead of each on a thread keeps a campaign whose lock is held (a rebuild, a stalled
holder in another process) from taking every thread of the process, so the other tables go on.
"""

from __future__ import annotations

import asyncio
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from sessions import db as sessions_db
from sessions.db import db, in_turn

# The threads exist on PostgreSQL only (SQLite keeps every call on one thread: sessions/db.py).
pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.postgres]


async def test_a_campaign_waiting_for_its_lock_holds_one_thread_and_the_other_tables_go_on(monkeypatch):
    pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="test-db")
    monkeypatch.setattr(sessions_db, "_executor", pool)
    loop = asyncio.get_running_loop()
    held, first_waits, entered = threading.Event(), asyncio.Event(), []

    def command(label):  # campaign 1's commands stand for commands waiting for its held stream lock
        entered.append(label)
        if label.startswith("torn-road"):
            loop.call_soon_threadsafe(first_waits.set)
            held.wait(timeout=30)
        return label

    try:
        waiting = [asyncio.ensure_future(in_turn(1, db(command), f"torn-road {n}")) for n in (1, 2, 3)]
        await first_waits.wait()
        # Two threads; three commands of the held campaign arrived first. The other table's still runs.
        assert await asyncio.wait_for(in_turn(2, db(command), "harbour"), timeout=10) == "harbour"
        assert entered == ["torn-road 1", "harbour"]
    finally:
        held.set()
    assert [await t for t in waiting] == ["torn-road 1", "torn-road 2", "torn-road 3"]
    assert entered == ["torn-road 1", "harbour", "torn-road 2", "torn-road 3"]  # in the order they came
    assert sessions_db._turns == {}  # nothing kept once a campaign's commands are done
    pool.shutdown()


async def test_a_command_cancelled_while_it_waits_for_its_turn_leaves_the_turns_as_they_were(monkeypatch):
    pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="test-db")
    monkeypatch.setattr(sessions_db, "_executor", pool)
    loop = asyncio.get_running_loop()
    held, first_waits = threading.Event(), asyncio.Event()

    def command(label):
        if label == "first":
            loop.call_soon_threadsafe(first_waits.set)
            held.wait(timeout=30)
        return label

    try:
        first = asyncio.ensure_future(in_turn(1, db(command), "first"))
        await first_waits.wait()
        gone = asyncio.ensure_future(in_turn(1, db(command), "gone"))  # its socket closes while it waits
        await asyncio.sleep(0)  # one loop step: it is waiting for the turn
        gone.cancel()
        with pytest.raises(asyncio.CancelledError):
            await gone
    finally:
        held.set()
    assert await first == "first"
    assert await in_turn(1, db(command), "next") == "next"
    assert sessions_db._turns == {}
    pool.shutdown()
