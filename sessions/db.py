"""Database calls from the socket consumers, with real concurrency.

``database_sync_to_async`` runs every call of a process on ONE thread, so the
appends and reads of twenty tables would queue behind each other. On
PostgreSQL, :func:`db` runs each call on a bounded pool of threads instead,
as many as the connection pool can serve; every call gives its connection
back to the pool when it ends (``close_old_connections``, as Channels does).
Per-campaign order stays with the stream row's lock (campaign/eventlog/store.py), which
every append takes, whichever thread runs it.

SQLite (the laptop default) has one writer and connections that do not like
threads: there the calls keep to the one thread.

Identical reads in flight at once (a reconnect storm: every socket of a table
asking for the events after the same seq) share one database call
(:func:`shared`).
"""

from __future__ import annotations

import asyncio
import collections
import functools
import itertools
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Awaitable, Callable

from asgiref.sync import sync_to_async
from channels.db import database_sync_to_async
from django.db import close_old_connections
from django.conf import settings

_executor: ThreadPoolExecutor | None = None


def workers() -> int:
    """Threads for socket database work: ``DB_SOCKET_THREADS``, and never more than the pool's size
    minus a few for HTTP views and broadcasts. (Two, four and eighteen measured alike in the 20 x 8
    load on one process: docs/performance.md.)"""
    pool = settings.DATABASES["default"].get("OPTIONS", {}).get("pool")
    size = pool.get("max_size", 4) if isinstance(pool, dict) else 4
    return max(1, min(settings.DB_SOCKET_THREADS, size - 2))


def concurrent() -> bool:
    return settings.DATABASES["default"]["ENGINE"] != "django.db.backends.sqlite3"


def executor() -> ThreadPoolExecutor:
    """The socket database threads (PostgreSQL only), made on first use."""
    global _executor
    if _executor is None:
        _executor = ThreadPoolExecutor(max_workers=workers(), thread_name_prefix="talekeeper-db")
    return _executor


def db(fn: Callable[..., Any]) -> Callable[..., Awaitable[Any]]:
    """``fn`` as a coroutine function, run on a database thread."""
    if not concurrent():
        return database_sync_to_async(fn)
    return sync_to_async(functools.partial(_returning_connections, fn), thread_sensitive=False, executor=executor())


def _returning_connections(fn, *args, **kwargs):
    # Inside the call's own context: Django keeps connections per context, so
    # closing them around the call (as Channels' DatabaseSyncToAsync does, but
    # outside the context the call runs in) would miss them and keep one checked
    # out of the pool for good.
    close_old_connections()
    try:
        return fn(*args, **kwargs)
    finally:
        close_old_connections()


# (loop, campaign id) -> the commands waiting for that table's turn, in arrival order; present while one runs.
_turns: dict[tuple, collections.deque[asyncio.Future]] = {}


def _run_anyway(e: BaseException) -> None:
    return None  # the default ``behind``: commands behind a failed one still run


class TurnTimeout(TimeoutError):
    """A command waited longer than its ``patience`` for its table's turn: it never ran."""


async def in_turn(campaign_id: int, fn: Callable[..., Any], *args, behind: Callable[[BaseException], BaseException | None]
                  = _run_anyway, patience: float | None = None) -> Any:
    """``await db(fn)(*args)`` (a command of the campaign) once this process's earlier commands of
    the same campaign have ended.

    They would wait for the campaign's stream lock one after another anyway (campaign/eventlog/store.py);
    here they wait on the event loop instead of each on a thread and a pooled connection of its
    own, so a campaign whose lock is held (a stalled holder in another process, a long rebuild)
    keeps one thread of this process and every other table's commands and reads still run.

    * The turn passes on when the thread's work has **ended**, not when the caller stopped
      waiting: a socket closed mid-command leaves its thread running (asgiref does not wait for
      a cancelled thread), and the next command must not start a second one beside it.
    * ``behind(e)``: when a command fails with ``e``, the error each command then waiting gets
      instead of its turn, or None to let them run. A table whose lock timed out or whose database
      is away fails them all at once, not each after its own timeout in turn.
    * ``patience``: the longest a command waits for its turn before :class:`TurnTimeout`. A thread
      that never ends (a query on a connection that died without a word: no lock_timeout bounds
      it) would otherwise keep its table's turn, and every later command of that table here
      would wait for good."""
    key = (asyncio.get_running_loop(), campaign_id)
    await _my_turn(key, patience)
    return await _take_turn(key, behind, fn, *args)


async def _my_turn(key: tuple, patience: float | None) -> None:
    """Return once the table's turn is the caller's (see :func:`in_turn`); it must then take it at once,
    with :func:`_take_turn`."""
    waiting = _turns.get(key)
    if waiting is None:
        _turns[key] = collections.deque()  # ours, with no one waiting
        return
    mine = key[0].create_future()
    waiting.append(mine)
    try:
        # The turn, or the error of the command it failed behind. (wait_for cancels ``mine`` when
        # it gives up, unless the turn came first: then it is ours all the same.)
        await asyncio.wait_for(mine, patience)
    except TimeoutError:
        raise TurnTimeout(f"waited {patience} s for the table's earlier command") from None
    except asyncio.CancelledError:
        if mine.done() and not mine.cancelled() and mine.exception() is None:
            _pass_turn(key, None)  # handed to us as we were cancelled: on to the next
        raise


async def _take_turn(key: tuple, behind, fn: Callable[..., Any], *args) -> Any:
    """Run ``fn`` on a database thread in the turn :func:`_my_turn` gave; the turn passes on when it ends."""
    work = asyncio.ensure_future(db(fn)(*args))
    work.add_done_callback(lambda done: _pass_turn(key, done, behind))
    return await asyncio.shield(work)


# (loop, campaign id, kind) -> the items of one kind gathered for that table's next turn, with each one's
# future; present from the first item until the turn comes (then later ones gather for the turn after).
_gathered: dict[tuple, list[tuple[Any, asyncio.Future]]] = {}
_gathering: set[asyncio.Task] = set()  # the tasks waiting for a gathered turn (a pending task needs a reference)


async def together(campaign_id: int, kind: str, item: Any, fn: Callable[[list], list], *,
                   behind: Callable[[BaseException], BaseException | None] = _run_anyway,
                   patience: float | None = None) -> Any:
    """``item``'s outcome of ``fn(items)``, one database call for ``item`` and every item of the same
    ``kind`` that arrives for the campaign while they wait for its turn (:func:`in_turn`): the table's
    commands that would each have waited for the one before them take one turn together.

    ``fn`` returns one outcome per item, in the order they arrived; an outcome that is an exception is
    raised to that item's caller alone. An exception ``fn`` raises (or the turn's: ``behind``,
    ``patience``) is every item's. The turn is taken by a task of its own, not by the first caller, so a
    caller that stops waiting (its socket closed) takes no other item's call with it: its own item runs
    all the same, as a command already handed to a thread does."""
    loop = asyncio.get_running_loop()
    key = (loop, campaign_id, kind)
    mine = loop.create_future()
    mine.add_done_callback(_retrieve)
    batch = _gathered.get(key)
    if batch is None:
        batch = _gathered[key] = []
        task = loop.create_task(_run_together(key, batch, fn, behind, patience))
        _gathering.add(task)
        task.add_done_callback(_gathering.discard)
    batch.append((item, mine))
    return await asyncio.shield(mine)


async def _run_together(key: tuple, batch: list, fn, behind, patience) -> None:
    turn = key[:2]
    try:
        try:
            await _my_turn(turn, patience)
        finally:
            if _gathered.get(key) is batch:
                del _gathered[key]  # closed: an item arriving from now on gathers for the next turn
        outcomes = await _take_turn(turn, behind, fn, [item for item, _ in batch])
    except asyncio.CancelledError:
        for _, future in batch:
            future.cancel()
        raise
    except Exception as e:
        outcomes = [e] * len(batch)
    for (_, future), outcome in zip(batch, outcomes, strict=True):
        if future.done():
            continue
        if isinstance(outcome, BaseException):
            future.set_exception(outcome)
        else:
            future.set_result(outcome)


def _retrieve(future: asyncio.Future) -> None:
    """Mark the outcome of an item whose caller stopped waiting as seen (no "never retrieved" warning)."""
    if not future.cancelled():
        future.exception()


def _pass_turn(key: tuple, done: asyncio.Future | None, behind=_run_anyway) -> None:
    waiting = _turns[key]
    failed = done.exception() if done is not None and not done.cancelled() else None
    while waiting:
        waiter = waiting.popleft()
        if waiter.done():  # cancelled while it waited
            continue
        error = behind(failed) if failed is not None else None
        if error is None:
            waiter.set_result(None)
            return
        waiter.set_exception(error)
    del _turns[key]


_in_flight: dict[tuple, tuple[int, asyncio.Future]] = {}
_ticks = itertools.count(1)


def tick() -> int:
    """A number larger than every earlier one (to order joins and reads)."""
    return next(_ticks)


async def shared(key: tuple, since: int, fn: Callable[..., Any], *args) -> Any:
    """``await db(fn)(*args)``, sharing the answer with the callers of the same ``key``.

    A read in flight is shared only if it started after ``since`` (a :func:`tick`
    taken when the caller had joined the table's group): one started before
    could miss an event committed before the caller could hear its doorbell.
    A caller who can't use the read in flight waits for it to end and shares the
    next one with everyone else in the same position: under a reconnect storm a
    table's sockets make two or three reads of their backlog, not one each."""
    loop = asyncio.get_running_loop()
    key = (loop, *key)
    pending = _in_flight.get(key)
    if pending is not None and pending[0] <= since:
        await asyncio.wait([pending[1]])  # its answer (or error) is not ours: only its end
        pending = _in_flight.get(key)
    if pending is not None and pending[0] > since:
        return await asyncio.shield(pending[1])
    future = asyncio.ensure_future(db(fn)(*args))
    _in_flight[key] = (tick(), future)
    try:
        return await asyncio.shield(future)
    finally:
        if _in_flight.get(key, (0, None))[1] is future:
            del _in_flight[key]
