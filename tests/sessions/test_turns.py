"""sessions.db.in_turn: a table's socket commands take this process's database threads one at a time.

They would wait for the campaign's stream lock one after another anyway; waiting on the event loop
instead, a table whose lock is held keeps one thread, and every other table still gets the rest.
What each test pins is which calls were handed to a database thread (``db``) and when, not how
long anything took: the calls here block on events the test sets.
"""

from __future__ import annotations

import asyncio
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

import sessions.db
from sessions.db import in_turn, together


@pytest.fixture
def threads(monkeypatch):
    """Real threads for ``db`` (as on PostgreSQL; SQLite keeps one), and the calls handed to them, in order."""
    handed: list[str] = []
    executor = ThreadPoolExecutor(max_workers=4, thread_name_prefix="test-turns")
    real = sessions.db.db
    monkeypatch.setattr(sessions.db, "concurrent", lambda: True)
    monkeypatch.setattr(sessions.db, "_executor", executor)

    def recording(fn):
        run = real(fn)

        def call(label, *args):
            handed.append(label)
            return run(label, *args)
        return call

    monkeypatch.setattr(sessions.db, "db", recording)
    yield handed
    executor.shutdown(wait=True)


class Blocking:
    """A database call that blocks until released (and says on the loop when it started)."""

    def __init__(self):
        self.loop = asyncio.get_running_loop()
        self.started: dict[str, asyncio.Event] = {}
        self.release: dict[str, threading.Event] = {}
        self.ended: list[str] = []

    def __call__(self, label, fail=None):
        self.loop.call_soon_threadsafe(self.started_event(label).set)
        assert self.gate(label).wait(timeout=30)  # a bound on a hang, never what is checked
        self.ended.append(label)
        if fail is not None:
            raise fail
        return label

    def started_event(self, label) -> asyncio.Event:
        return self.started.setdefault(label, asyncio.Event())

    def gate(self, label) -> threading.Event:
        return self.release.setdefault(label, threading.Event())


async def settle():
    """Let every task run until it waits on something outside the loop (no clock involved)."""
    for _ in range(10):
        await asyncio.sleep(0)


async def test_a_tables_commands_take_a_thread_one_after_another_in_arrival_order(threads):
    call = Blocking()
    first = asyncio.ensure_future(in_turn(1, call, "first"))
    await call.started_event("first").wait()
    later = [asyncio.ensure_future(in_turn(1, call, label)) for label in ("second", "third")]
    await settle()
    assert threads == ["first"]  # the others wait on the loop, not on a thread each
    for label in ("first", "second", "third"):
        call.gate(label).set()
    assert [await first, *[await t for t in later]] == ["first", "second", "third"]
    assert threads == call.ended == ["first", "second", "third"]


async def test_another_tables_command_runs_while_one_table_waits(threads):
    call = Blocking()
    stuck = asyncio.ensure_future(in_turn(1, call, "table 1"))
    await call.started_event("table 1").wait()
    call.gate("table 2").set()
    assert await in_turn(2, call, "table 2") == "table 2"  # while table 1's call still holds its thread
    assert call.ended == ["table 2"]
    call.gate("table 1").set()
    assert await stuck == "table 1"


async def test_a_caller_that_stops_waiting_keeps_the_turn_until_its_thread_has_ended(threads):
    """A socket closed mid-command: its thread goes on, and the next command must not start beside it."""
    call = Blocking()
    gone = asyncio.ensure_future(in_turn(1, call, "closed socket"))
    await call.started_event("closed socket").wait()
    gone.cancel()
    with pytest.raises(asyncio.CancelledError):
        await gone
    nxt = asyncio.ensure_future(in_turn(1, call, "next"))
    await settle()
    assert threads == ["closed socket"]
    call.gate("closed socket").set()
    call.gate("next").set()
    assert await nxt == "next"
    assert call.ended == ["closed socket", "next"]


async def test_a_caller_that_stops_waiting_for_its_turn_is_skipped(threads):
    call = Blocking()
    first = asyncio.ensure_future(in_turn(1, call, "first"))
    await call.started_event("first").wait()
    dropped = asyncio.ensure_future(in_turn(1, call, "dropped"))
    third = asyncio.ensure_future(in_turn(1, call, "third"))
    await settle()
    dropped.cancel()
    with pytest.raises(asyncio.CancelledError):
        await dropped
    call.gate("first").set()
    call.gate("third").set()
    assert (await first, await third) == ("first", "third")
    assert threads == ["first", "third"]


async def test_a_caller_handed_the_turn_as_it_is_cancelled_passes_it_on(threads, monkeypatch):
    """Handed the turn by the command before it, and cancelled before it could run: the turn goes on
    to the next, and nothing is left behind."""
    call = Blocking()
    real, tasks = sessions.db._pass_turn, {}

    def passing_then_cancelling(key, done, behind=lambda e: None):
        real(key, done, behind)
        if done is not None and "handed" in tasks:
            tasks.pop("handed").cancel()  # in the same step as it was handed the turn

    monkeypatch.setattr(sessions.db, "_pass_turn", passing_then_cancelling)
    first = asyncio.ensure_future(in_turn(1, call, "first"))
    await call.started_event("first").wait()
    tasks["handed"] = handed = asyncio.ensure_future(in_turn(1, call, "handed"))
    third = asyncio.ensure_future(in_turn(1, call, "third"))
    await settle()
    call.gate("first").set()
    call.gate("third").set()
    assert (await first, await third) == ("first", "third")
    assert handed.cancelled()
    assert threads == ["first", "third"]
    assert sessions.db._turns == {}

async def test_a_command_that_waited_past_its_patience_gives_up_and_the_turn_goes_on(threads):
    """A thread that never ends (a query on a connection that died without a word) must not keep its
    table's later commands waiting for good: each gives up after its patience, never having run."""
    call = Blocking()
    stuck = asyncio.ensure_future(in_turn(1, call, "stuck"))
    await call.started_event("stuck").wait()
    with pytest.raises(sessions.db.TurnTimeout):
        await in_turn(1, call, "impatient", patience=0.01)
    assert threads == ["stuck"]
    call.gate("stuck").set()
    call.gate("after").set()
    assert (await stuck, await in_turn(1, call, "after", patience=0.01)) == ("stuck", "after")
    assert threads == ["stuck", "after"] and not sessions.db._turns


class TableBusy(Exception):
    pass


async def test_commands_waiting_behind_one_that_failed_fail_at_once_when_told_to(threads):
    """A table whose lock timed out (or whose database is away) fails its queue together, not each
    after a timeout of its own in turn."""
    call = Blocking()

    def behind(e):
        return TableBusy(f"behind: {e}") if isinstance(e, TimeoutError) else None

    first = asyncio.ensure_future(in_turn(1, call, "first", TimeoutError("lock"), behind=behind))
    await call.started_event("first").wait()
    queued = [asyncio.ensure_future(in_turn(1, call, label, behind=behind)) for label in ("second", "third")]
    await settle()
    call.gate("first").set()
    with pytest.raises(TimeoutError):
        await first
    for task in queued:
        with pytest.raises(TableBusy, match="behind: lock"):
            await task
    assert threads == ["first"]
    # The turn is free again: the next command runs.
    call.gate("after").set()
    assert await in_turn(1, call, "after", behind=behind) == "after"


async def test_commands_waiting_behind_one_refused_for_itself_still_run(threads):
    call = Blocking()
    first = asyncio.ensure_future(in_turn(1, call, "first", ValueError("refused"), behind=lambda e: None))
    await call.started_event("first").wait()
    second = asyncio.ensure_future(in_turn(1, call, "second", behind=lambda e: None))
    await settle()
    call.gate("first").set()
    call.gate("second").set()
    with pytest.raises(ValueError):
        await first
    assert await second == "second"
    assert threads == ["first", "second"]


# --- on real sockets and PostgreSQL ---------------------------------------------------------

@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
async def test_a_table_whose_lock_is_held_keeps_one_thread_and_another_table_is_answered(
        transactional_table, require_postgres, monkeypatch, settings):
    """Two database threads, three sockets of a table whose stream row another connection holds,
    and a socket of another table: that one's command is answered while the lock is still held.
    (Without the turn the three took both threads, and the other table waited for the lock too.)

    The other table's command is sent once the held table's three have asked for a thread or for
    their turn, and the lock is released only once the other table is answered: the order is the
    test's, not the machine's. The one clock is the held commands' own bound, ``DB_LOCK_TIMEOUT``:
    in play 5 s, then a held command answers table_busy, and a loaded machine that took longer to
    answer the other table failed the test with the turn working. Here it is 30 s, and the
    commands' lock_timeout with it: far past any slow machine's answer, and what ends the wait when
    the turn is broken (two held commands on both threads, the other table's behind them): then
    held commands answer table_busy first, or the other table's answer does not come within the
    sockets' bound on a hang (``HANG``); either fails the test (seen: the bound, after about 60 s)."""
    from channels.db import database_sync_to_async
    from django.db import connection

    import campaign.actions.commands
    import sessions.consumers
    from campaign.actions import do_create_campaign
    from tests.conftest import HANG
    from tests.locks import stream_lock_held
    from tests.sessions.test_table_consumer import connect, receive, until_ready

    settings.DB_LOCK_TIMEOUT = 30  # a held command's patience for its turn is twice that (sessions/consumers.py)
    real_lock_stream = campaign.actions.commands.lock_stream

    def lock_stream(*args, **kwargs):  # the connections' lock_timeout is DB_LOCK_TIMEOUT from their start
        with connection.cursor() as cursor:
            cursor.execute(f"SET LOCAL lock_timeout = '{settings.DB_LOCK_TIMEOUT}s'")
        return real_lock_stream(*args, **kwargs)

    monkeypatch.setattr(campaign.actions.commands, "lock_stream", lock_stream)
    held_read, all_held_read = [], asyncio.Event()
    real_command_of = sessions.consumers.command_of

    def command_of(frame):  # a consumer reads its command, then (in the same step) asks for its turn
        if frame["id"].startswith("held-"):
            held_read.append(frame["id"])
            if len(held_read) == 3:
                all_held_read.set()
        return real_command_of(frame)

    monkeypatch.setattr(sessions.consumers, "command_of", command_of)
    table = transactional_table
    two = ThreadPoolExecutor(max_workers=2, thread_name_prefix="two")
    monkeypatch.setattr(sessions.db, "_executor", two)
    other = await database_sync_to_async(do_create_campaign)(table.gm, "The Salt Flats", "tote", slug="salt-flats",
                                                             signed=False)  # its socket sends unsigned commands
    sockets = [await connect(table, user) for user in (table.gm, table.alice, table.bob)]
    elsewhere = await connect(table, table.gm, slug=other.slug)
    for comm in (*sockets, elsewhere):
        await until_ready(comm)

    answered = []  # (who, frame type), in the order they came
    with stream_lock_held(table.campaign.id) as release:
        for i, comm in enumerate(sockets):
            await comm.send_json_to({"type": "command", "id": f"held-{i}", "action": {"type": "roll", "notation": "1d6"}})
        await asyncio.wait_for(all_held_read.wait(), HANG)
        await elsewhere.send_json_to({"type": "command", "id": "elsewhere", "action": {"type": "roll", "notation": "1d6"}})

        async def answer(name, comm):
            while (frame := await receive(comm))["type"] not in ("ack", "error"):
                pass
            answered.append((name, frame["type"]))
            if name == "elsewhere":
                release()  # only now may the held table go on

        await asyncio.gather(answer("elsewhere", elsewhere), *[answer(f"held-{i}", c) for i, c in enumerate(sockets)])
    assert answered[0] == ("elsewhere", "ack"), answered
    assert sorted(answered[1:]) == [(f"held-{i}", "ack") for i in range(3)], answered
    for comm in (*sockets, elsewhere):
        await comm.disconnect()
    two.shutdown(wait=True)


# --- items that take one turn together (sessions.db.together) ---------------------------------------

def stored(items):
    """A database call for several items: one outcome each (a refusal for the ones marked bad)."""
    return [ValueError(f"refused {item}") if item.startswith("bad") else f"{item} stored" for item in items]


async def test_items_arriving_while_their_table_is_busy_take_its_next_turn_together(threads):
    """Witnesses' contributions queued behind a command of their table: one call for all of them, each
    caller answered with its own outcome."""
    call = Blocking()
    first = asyncio.ensure_future(in_turn(1, call, "first"))
    await call.started_event("first").wait()
    items = [asyncio.ensure_future(together(1, "witness_roll", label, stored)) for label in ("a", "bad b", "c")]
    other = asyncio.ensure_future(together(2, "witness_roll", "another table's", stored))
    await settle()
    assert await other == "another table's stored"  # its own table's turn was free
    call.gate("first").set()
    assert await first == "first"
    assert await items[0] == "a stored" and await items[2] == "c stored"
    with pytest.raises(ValueError, match="refused bad b"):
        await items[1]
    assert threads == ["first", ["another table's"], ["a", "bad b", "c"]]
    assert not sessions.db._gathered and not sessions.db._turns


async def test_an_item_arriving_once_the_call_has_started_waits_for_the_next_turn(threads):
    call = Blocking()

    def blocking(items):
        call(items[0])
        return stored(items)

    first = asyncio.ensure_future(together(1, "witness_roll", "a", blocking))
    await call.started_event("a").wait()
    later = [asyncio.ensure_future(together(1, "witness_roll", label, blocking)) for label in ("b", "c")]
    await settle()
    assert threads == [["a"]]
    call.gate("a").set()
    call.gate("b").set()
    assert [await first, *[await t for t in later]] == ["a stored", "b stored", "c stored"]
    assert threads == [["a"], ["b", "c"]]


async def test_an_error_of_the_whole_call_reaches_every_item_and_the_commands_behind(threads):
    call = Blocking()

    def failing(items):
        raise TimeoutError("lock")

    def behind(e):
        return TableBusy(f"behind: {e}") if isinstance(e, TimeoutError) else None

    first = asyncio.ensure_future(in_turn(1, call, "first"))
    await call.started_event("first").wait()
    items = [asyncio.ensure_future(together(1, "witness_roll", label, failing, behind=behind)) for label in "ab"]
    await settle()
    queued = asyncio.ensure_future(in_turn(1, call, "queued", behind=behind))
    await settle()
    call.gate("first").set()
    for item in items:
        with pytest.raises(TimeoutError, match="lock"):
            await item
    with pytest.raises(TableBusy, match="behind: lock"):
        await queued
    assert threads == ["first", ["a", "b"]]


async def test_an_item_whose_caller_stops_waiting_takes_no_other_with_it(threads):
    """A socket that closes while its contribution waits: the others are still stored and answered (and
    its own goes with them, as a command handed to a thread does)."""
    call = Blocking()
    first = asyncio.ensure_future(in_turn(1, call, "first"))
    await call.started_event("first").wait()
    gone, kept = (asyncio.ensure_future(together(1, "witness_roll", label, stored)) for label in ("gone", "kept"))
    await settle()
    gone.cancel()
    with pytest.raises(asyncio.CancelledError):
        await gone
    call.gate("first").set()
    assert await first == "first" and await kept == "kept stored"
    assert threads == ["first", ["gone", "kept"]]
