"""The table's transport: doorbells and revocations to the sockets, after commit.

campaign/ publishes what a commit changed through :mod:`campaign.publish` (the ``do_*`` that recorded
calls ``publish_on_commit``); this module is the transport it hands them to, registered at start-up
(sessions/apps.py), so campaign/ never imports sessions/. It knows Channels: the groups, the channel
layer, and this process's sockets.

A broadcast is a doorbell, not the log: the channel layer may drop a message
(a full channel, an expired group, Redis down), so consumers that see a seq
jump, or learn a newer seq from a heartbeat, read the missing events from the
database. A failed broadcast is logged and never fails the command.

From synchronous code ``async_to_sync(group_send)`` per call has leaked
Redis connections (a new event loop and pool each time), so with Redis the
broadcasts go through one long-lived loop per process. The in-memory layer
only reaches consumers of this process, so it is called on their loop.

A table's sockets in the committing process hear its doorbell straight from
memory (``sit_down_here``): on their own event loop, with no trip through
Redis, no serialization and no broadcast thread. The channel layer carries
it to every other socket of the group only (through Redis, on one process, that
would be four Redis round trips and a thread hop between a commit and its table).
"""

from __future__ import annotations

import asyncio
import collections
import contextvars
import logging
import threading
import time
from typing import Any, Awaitable, Callable

from asgiref.sync import async_to_sync
from channels.exceptions import ChannelFull
from channels.layers import InMemoryChannelLayer, channel_layers, get_channel_layer
from django.conf import settings

from .layers import ResilientRedisChannelLayer

log = logging.getLogger(__name__)


def group_name(campaign_id: int) -> str:
    return f"campaign-{campaign_id}"


def user_group(user_id: int) -> str:
    """Every table socket of one user, whatever the campaign (to close them from HTTP)."""
    return f"user-{user_id}"


def revoke(user_id: int, campaign_id: int | None, tokens: list[str] | None = None) -> None:
    """Close ``user_id``'s table sockets (of one campaign, or all; ``tokens``: only those opened with one of
    them): campaign.publish.close_sockets_on_commit hands it over once the transaction commits."""
    # From memory here too, so that this process's sockets hear a revoke and the doorbells
    # committed after it in the order they committed (a GM made a player, then a GM-only roll).
    try:
        group, message = user_group(user_id), {"type": "table.revoke", "campaign": campaign_id}
        if tokens is not None:
            message["tokens"] = tokens
        _group_send(group, message, exclude=_ring_here(group, message))
    except Exception as e:  # the socket's next command is refused anyway (it re-checks)
        log.warning("closing the sockets of user %s failed: %r", user_id, e)


def send(campaign_id: int, data: list[dict], sheets: dict[str, dict] | None = None) -> None:
    """Ring the doorbell: the events, and the sheets they changed (``None``: not known, browsers fetch).

    This process's sockets of the table hear it from memory; the channel layer rings for the others."""
    message = {"type": "table.events", "events": data}
    if sheets is not None:
        message["sheets"] = sheets
    try:
        group = group_name(campaign_id)
        _group_send(group, message, exclude=_ring_here(group, message))
    except Exception:  # never fail a stored command because a doorbell failed
        log.exception("broadcast of seq %s failed", data[-1]["seq"])


def _group_send(group: str, message: dict, exclude: frozenset[str] = frozenset()) -> None:
    """``group_send`` from synchronous code, to every channel of ``group`` but those in ``exclude``."""
    layer = get_channel_layer()
    if layer is None:
        return
    if isinstance(layer, InMemoryChannelLayer):
        # It reaches only this process's sockets: with none in the group there is no one to ring
        # for, and async_to_sync from a thread without a loop starts a thread and a loop per call
        # (most of a management command's or a test's append). ``groups`` is the layer's own dict,
        # read, never written (how it is kept: pinned by tests/test_patched_internals.py).
        channels = [c for c in list(layer.groups.get(group, ())) if c not in exclude]  # one step: the loop may change it
        if channels:
            async_to_sync(_send_each)(layer, channels, message)
    else:
        _Sender.get().submit(group, message, exclude)


async def _send_each(layer, channels: list[str], message: dict) -> None:
    for channel in channels:
        try:
            await layer.send(channel, message)
        except ChannelFull:  # as group_send: a full channel misses this doorbell and catches up from the log
            pass


# --- this process's own sockets --------------------------------------------------
# group -> channel name -> (its event loop, its handler, the context it sat down in). A socket sits
# down here before it joins its groups (its table's and its user's), and stands up when it leaves: a
# message that finds it here reaches it from memory and leaves it out of the channel layer's send,
# one that does not finds it in the group.

Handler = Callable[[dict], Awaitable[Any]]  # the consumer's dispatch: a message to its handler by type
_here: dict[str, dict[str, tuple[asyncio.AbstractEventLoop, Handler, contextvars.Context]]] = {}
_here_lock = threading.Lock()  # doorbells ring from database threads, sockets sit down on their loop
_ringing: set[asyncio.Task] = set()  # the doorbells being heard here (a pending task needs a reference)


def sit_down_here(groups: tuple[str, ...], channel: str, handler: Handler) -> None:
    """``handler`` (on the running loop) hears the messages sent to ``groups`` in this process.
    Call before joining the groups: the channel layer leaves this channel out from now on."""
    # The handler runs in the socket's own context, not the ringing thread's: asgiref reads its
    # context to tell whether a call is already on the database thread (and refuses one that is).
    here = (asyncio.get_running_loop(), handler, contextvars.copy_context())
    with _here_lock:
        for group in groups:
            _here.setdefault(group, {})[channel] = here


def stand_up_here(groups: tuple[str, ...], channel: str) -> None:
    with _here_lock:
        for group in groups:
            sockets = _here.get(group)
            if sockets is not None:
                sockets.pop(channel, None)
                if not sockets:
                    del _here[group]


def _ring_here(group: str, message: dict) -> frozenset[str]:
    """Hand ``message`` to this process's sockets in ``group``, each on its loop; return their channels.

    Handed over in the order they were sent (one FIFO per loop), and shared with each other, as the
    sockets of one process share a message the channel layer delivered: a handler reads it and
    never changes it."""
    with _here_lock:
        sockets = list(_here.get(group, {}).items())
    by_loop: dict[asyncio.AbstractEventLoop, list] = {}
    for _, (loop, handler, context) in sockets:
        by_loop.setdefault(loop, []).append((handler, context))
    for loop, handlers in by_loop.items():
        try:
            loop.call_soon_threadsafe(_hear, handlers, message, context=contextvars.Context())
        except RuntimeError:  # that loop has closed (a test's): its sockets are gone
            pass
    return frozenset(channel for channel, _ in sockets)


def _hear(handlers: list[tuple[Handler, contextvars.Context]], message: dict) -> None:
    for handler, context in handlers:
        # A copy each time: two doorbells heard at once must not share what either sets.
        task = asyncio.get_running_loop().create_task(_heard(handler, message), context=context.copy())
        _ringing.add(task)
        task.add_done_callback(_ringing.discard)


async def _heard(handler: Handler, message: dict) -> None:
    try:
        await handler(message)
    except Exception as e:  # a socket closing as it rang: it reads the log when (if) it comes back
        log.warning("a doorbell rung in this process failed: %r", e)


class _Sender:
    """One background event loop per process that owns its own channel layer and sends the doorbells
    handed to it, one after another, in the order they were handed over (one queue per Redis host of
    the groups).

    In order, so another process hears a table's doorbells in the order they were handed over here
    (one that overtook the doorbell before it would send those sockets to the log for what they
    seemed to miss; two database threads committing at once may still hand theirs over the other way
    round, which the sockets' seq check covers). A burst wakes the loop once, and a doorbell costs no
    future or task of its own: this thread shares the GIL with the sockets and the database threads.
    One after another caps a process at about a thousand doorbells a second (a send is
    two round trips to Redis); the bench's busiest load rings 40.

    While Redis does not answer, each send gives up after ``LAYER_TIMEOUT`` (sessions/layers.py) and
    the queue fills: a doorbell that waited longer than ``STALE_AFTER`` is dropped unsent (by then the
    heartbeats bring the sockets up to date from the log), so that once Redis answers again the new
    doorbells go out at once, not behind the outage's, and at most ``MAX_WAITING`` wait."""

    _instance: "_Sender | None" = None
    _lock = threading.Lock()
    SEND_TIMEOUT = 5.0  # for a layer that sets no timeout of its own
    STALE_AFTER = 3.0
    MAX_WAITING = 1_000
    clock = staticmethod(time.monotonic)  # how long a doorbell waited (a test stops it)

    def __init__(self, layer=None):
        """``layer``: the channel layer to send through (a test's); by default one of its own, made
        from the settings, which lives on this sender's loop."""
        self.loop = asyncio.new_event_loop()
        if layer is None and settings.CHANNEL_LAYERS:
            layer = channel_layers.make_backend("default")
        self.layer = layer
        # host -> (handed over at, group, message, exclude), oldest first; a host is here exactly
        # while a drain for it is scheduled or running.
        self.waiting: dict[int, collections.deque] = {}
        self.dropped: dict[int, int] = {}  # host -> doorbells the full queue pushed out
        self.waiting_lock = threading.Lock()
        self.draining: set[asyncio.Task] = set()  # a pending task needs a reference
        self.thread = threading.Thread(target=self.loop.run_forever, name="talekeeper-broadcast", daemon=True)
        self.thread.start()

    @classmethod
    def get(cls) -> "_Sender":
        with cls._lock:
            if cls._instance is None:
                cls._instance = cls()
            return cls._instance

    def submit(self, group: str, message: dict, exclude: frozenset[str] = frozenset()) -> None:
        host = self.layer.consistent_hash(group) if isinstance(self.layer, ResilientRedisChannelLayer) else 0
        with self.waiting_lock:
            queue = self.waiting.get(host)
            idle = queue is None  # no drain for this host: start one
            if idle:
                queue = self.waiting[host] = collections.deque()
            elif len(queue) >= self.MAX_WAITING:
                queue.popleft()
                self.dropped[host] = self.dropped.get(host, 0) + 1
            queue.append((self.clock(), group, message, exclude))
        if idle:
            try:
                self.loop.call_soon_threadsafe(self._start_draining, host)
            except RuntimeError as e:  # the loop has closed (the process is ending): no drain will come
                with self.waiting_lock:
                    self.waiting.pop(host, None)
                log.warning("broadcast failed (clients will catch up from the log): %r", e)

    def _start_draining(self, host: int) -> None:
        task = self.loop.create_task(self._drain(host))
        self.draining.add(task)
        task.add_done_callback(self.draining.discard)

    async def _drain(self, host: int) -> None:
        stale, emptied = 0, False
        try:
            while True:
                with self.waiting_lock:
                    queue = self.waiting[host]
                    if not queue:
                        del self.waiting[host]  # the next submit starts a new drain
                        emptied = True
                        dropped = self.dropped.pop(host, 0)
                    else:
                        rung, group, message, exclude = queue.popleft()
                if emptied:
                    break
                if self.clock() - rung > self.STALE_AFTER:
                    stale += 1
                    continue
                try:
                    async with asyncio.timeout(self.SEND_TIMEOUT):
                        await self._send(group, message, exclude)
                except Exception as e:
                    log.warning("broadcast failed (clients will catch up from the log): %r", e)
        finally:
            if not emptied:  # cancelled (the loop is ending): let the next submit start afresh
                with self.waiting_lock:
                    self.waiting.pop(host, None)
        if stale or dropped:
            log.warning("%s doorbells waited too long for Redis and were not sent (the sockets catch up from "
                        "the log)", stale + dropped)

    async def _send(self, group: str, message: dict, exclude: frozenset[str]) -> None:
        if isinstance(self.layer, ResilientRedisChannelLayer):
            await self.layer.group_send(group, message, exclude=exclude)
        else:
            # (Another layer rings every channel of the group: those here hear the doorbell twice, and
            # drop the second as a duplicate.)
            await self.layer.group_send(group, message)
