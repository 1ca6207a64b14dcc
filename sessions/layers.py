"""A Redis channel layer whose outages degrade the doorbell, never the sockets.

The channel layer only rings doorbells; the log is in the database and every
socket catches up from it (a seq jump, or a heartbeat with a newer seq). So
when Redis stops or freezes, a table must keep working, just with heartbeat
latency:

* ``receive`` retries with backoff instead of raising: Channels' consumer loop
  ends the connection (close 1011) on any exception from it;
* group operations time out instead of hanging on a Redis that stopped
  answering (the consumer logs and carries on);
* a cancelled read always ends: its Redis connection writes under
  ``asyncio.timeout``, never ``asyncio.wait_for`` (see ``CancellableWrites``);
* a closed socket's channel takes no more messages into the process's memory
  (see ``ReceiveBuffer``).
"""

from __future__ import annotations

import asyncio
import collections
import functools
import hashlib
import logging
import time

from channels_redis.core import BoundedQueue, RedisChannelLayer
from redis.asyncio.connection import AbstractConnection
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import NoScriptError
from redis.exceptions import TimeoutError as RedisTimeoutError

log = logging.getLogger(__name__)
LAYER_TIMEOUT = 2.0
OUTAGES = (RedisConnectionError, RedisTimeoutError, OSError, asyncio.TimeoutError)


class CancellableWrites:
    """A redis-py connection whose command writes never lose a cancellation.

    redis-py bounds each write with ``asyncio.wait_for(write, socket_timeout)``. On Python 3.11
    that ``wait_for`` runs the write as a task of its own and, when the caller is cancelled
    after that task was scheduled, returns the write's result instead of raising (CPython
    gh-86296, rewritten on ``asyncio.timeout`` in 3.12; redis-py#2028). A write is a single loop
    step, so every cancel that arrived while a command was being sent was lost. For a consumer's
    channel-layer read that meant: the socket closed, its read's cancel vanished inside the
    write of BZPOPMIN, and channels-redis re-sent BZPOPMIN every 5 s for ever, holding a Redis
    connection (and, in the tests, leaving a task "cancelling" at the end of a run).

    This is redis-py 8.1's ``send_packed_command`` with ``asyncio.timeout`` in place of
    ``wait_for``: the same bound, the same errors, and a cancel always raises.
    tests/sessions/test_layer.py cancels a write and a read at every step. A fix, not a speed-up:
    tests/test_patched_internals.py pins redis-py's, to read again on an upgrade.
    """

    async def send_packed_command(self, command, check_health: bool = True) -> None:
        if not self.is_connected:
            await self.connect_check_health(check_health=False)
        if check_health:
            await self.check_health()
        try:
            if isinstance(command, str):
                command = command.encode()
            if isinstance(command, bytes):
                command = [command]
            async with asyncio.timeout(self.socket_timeout or None):
                self._writer.writelines(command)
                await self._writer.drain()
        except TimeoutError:
            await self.disconnect(nowait=True)
            raise RedisTimeoutError("Timeout writing to socket") from None
        except OSError as e:
            await self.disconnect(nowait=True)
            err_no, errmsg = ("UNKNOWN", e.args[0]) if len(e.args) == 1 else e.args[:2]
            raise RedisConnectionError(f"Error {err_no} while writing to socket. {errmsg}.") from e
        except BaseException:
            # A write cut short (a cancel) leaves half a command on the wire: never reuse it.
            await self.disconnect(nowait=True)
            raise


@functools.cache
def cancellable(connection_class: type[AbstractConnection]) -> type[AbstractConnection]:
    """``connection_class`` (plain, TLS or unix socket, as the URL chose) with ``CancellableWrites``."""
    return type(f"Cancellable{connection_class.__name__}", (CancellableWrites, connection_class), {})


class ReceiveBuffer(collections.defaultdict):
    """channels-redis's per-channel queues of the messages it read for this process's channels,
    except for channels whose reader is gone.

    channels-redis reads every message for any channel of the process from one Redis list and
    puts it in its channel's queue, made on demand; a queue is dropped only by a read of its
    channel. A message that arrives after its socket closed (a group message sent just before the
    socket left its groups, say) made a queue no read would ever take: up to ``capacity`` messages
    kept for ever per closed socket (channels_redis#384). In a soak with every page reconnecting
    every 2 minutes (bench/soak.py) they were one of the two largest growing allocations of the
    process, and the only one without a bound (docs/performance.md, "Memory over hours").

    A channel named by :meth:`reader_gone` loses its queue, and a message for it is dropped, for
    ``remember_s`` (longer than a message or a group membership can outlive the socket in Redis).
    """

    def __init__(self, capacity: int, remember_s: float):
        super().__init__(functools.partial(BoundedQueue, capacity))
        self.remember_s = remember_s
        self.gone: dict[str, float] = {}  # channel -> when its reader went, oldest first

    def __missing__(self, channel):
        if channel in self.gone:
            return self.default_factory()  # a queue nobody keeps: the message is dropped
        return super().__missing__(channel)

    def reader_gone(self, channel: str) -> None:
        now = time.monotonic()
        self.pop(channel, None)
        self.gone[channel] = now
        while self.gone:
            oldest, when = next(iter(self.gone.items()))
            if now - when <= self.remember_s:
                break
            del self.gone[oldest]


class ResilientRedisChannelLayer(RedisChannelLayer):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.receive_buffer = ReceiveBuffer(self.capacity, self.group_expiry + self.expiry + 60)

    def reader_gone(self, channel: str) -> None:
        """``channel``'s consumer has ended: no read will ever take its messages again."""
        self.receive_buffer.reader_gone(channel)

    def create_pool(self, index):
        pool = super().create_pool(index)
        pool.connection_class = cancellable(pool.connection_class)  # no connection is made before the first command
        return pool

    async def receive(self, channel):
        self.receive_buffer.gone.pop(channel, None)  # read again after all: its messages are wanted
        delay = 0.1
        while True:
            try:
                return await super().receive(channel)
            except OUTAGES as e:  # only the server going away; a bug stays loud
                task = asyncio.current_task()
                if task is not None and task.cancelling():
                    # Cancelling a read can surface as another error; retrying it
                    # would swallow the cancellation and never let the socket close.
                    raise
                log.warning("channel layer receive failed, retrying in %.1fs: %r", delay, e)
                await asyncio.sleep(delay)
                delay = min(delay * 2, 5.0)

    # asyncio.timeout, not wait_for: on Python 3.11 wait_for can lose the cancel of a closing socket.
    async def group_add(self, group, channel):
        async with asyncio.timeout(LAYER_TIMEOUT):
            await super().group_add(group, channel)

    async def group_discard(self, group, channel):
        async with asyncio.timeout(LAYER_TIMEOUT):
            await super().group_discard(group, channel)

    async def group_add_many(self, pairs):
        """``group_add`` for many ``(group, channel)`` pairs, in one round trip per Redis host (a table's
        heartbeat re-joins all its sockets at once): the same sorted sets, scores and expiry.

        Measured (``bench/patches.py --only group_add_many``, alternating rounds of one run on the
        shared 2-core machine, load average about 19): 8 sockets re-joined in 1.0 ms against 10.0 ms by
        ``group_add`` each (medians). Reads channels-redis's ``_group_key``: pinned by
        tests/test_patched_internals.py."""
        by_connection = {}
        for group, channel in pairs:
            assert self.require_valid_group_name(group), "Group name not valid"
            assert self.require_valid_channel_name(channel), "Channel name not valid"
            by_connection.setdefault(self.consistent_hash(group), []).append((self._group_key(group), channel))
        async with asyncio.timeout(LAYER_TIMEOUT):
            for index, members in by_connection.items():
                now = time.time()
                pipe = self.connection(index).pipeline(transaction=False)
                for key, channel in members:
                    pipe.zadd(key, {channel: now})
                    pipe.expire(key, self.group_expiry)
                await pipe.execute()

    async def group_send(self, group, message, exclude: frozenset[str] = frozenset()):
        """channels-redis's ``group_send``, to every channel of the group but those in ``exclude`` (the
        sockets of this process, which heard the doorbell from memory: sessions/transport.py).

        The same keys, scores, expiries and capacities in two round trips instead of four: the
        group's cleanup and read in one pipeline, then per Redis host one script that drops each
        channel's expired messages and adds the message (channels-redis sends those two apart). A
        group with no one left to ring costs one. Every doorbell of a campaign comes through here, on
        a thread that shares the GIL with the sockets and the database threads.

        Measured (``bench/patches.py --only group_send``, alternating rounds of one run on the shared
        2-core machine, load average about 19): a doorbell to a group of 8 channels in 1.6 ms against
        3.6 ms with channels-redis's (medians). channels-redis's ``group_send`` (and its
        ``_map_channel_keys_to_connection``, ``_group_key`` this calls) are pinned by
        tests/test_patched_internals.py: on an upgrade, compare the script and keys with theirs."""
        assert self.require_valid_group_name(group), "Group name not valid"
        async with asyncio.timeout(LAYER_TIMEOUT):
            key = self._group_key(group)
            pipe = self.connection(self.consistent_hash(group)).pipeline(transaction=False)
            pipe.zremrangebyscore(key, min=0, max=int(time.time()) - self.group_expiry)
            pipe.zrange(key, 0, -1)
            _, members = await pipe.execute()
            channels = [name for name in (m.decode("utf8") for m in members) if name not in exclude]
            by_connection, messages, capacities = self._map_channel_keys_to_connection(channels, message)
            for index, keys in by_connection.items():
                now = time.time()
                args = [*(messages[k] for k in keys), *(capacities[k] for k in keys), now, int(self.expiry),
                        int(now) - int(self.expiry)]
                connection = self.connection(index)
                try:
                    over = await connection.evalsha(_GROUP_SEND_SHA, len(keys), *keys, *args)
                except NoScriptError:  # a Redis that has not seen it yet (or was restarted)
                    over = await connection.eval(_GROUP_SEND_LUA, len(keys), *keys, *args)
                if over:
                    log.info("%s of %s channels over capacity in group %s", over, len(channels), group)


# channels-redis 4.3's group send script (core.py) with its cleanup pipeline folded in: for each channel key, drop
# the messages older than the layer's expiry, then add the message if the channel is under capacity.
# KEYS: the channel keys; ARGV: their messages, their capacities, now, the expiry, now - expiry.
_GROUP_SEND_LUA = """
local n = #KEYS
local now, expiry, stale = ARGV[2 * n + 1], ARGV[2 * n + 2], ARGV[2 * n + 3]
local over_capacity = 0
for i = 1, n do
    redis.call('ZREMRANGEBYSCORE', KEYS[i], 0, stale)
    if redis.call('ZCOUNT', KEYS[i], '-inf', '+inf') < tonumber(ARGV[n + i]) then
        redis.call('ZADD', KEYS[i], now, ARGV[i])
        redis.call('EXPIRE', KEYS[i], expiry)
    else
        over_capacity = over_capacity + 1
    end
end
return over_capacity
"""
_GROUP_SEND_SHA = hashlib.sha1(_GROUP_SEND_LUA.encode()).hexdigest()
