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
  ``asyncio.timeout``, never ``asyncio.wait_for`` (see ``CancellableWrites``).
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import logging
import time

from channels_redis.core import RedisChannelLayer
from redis.asyncio.connection import AbstractConnection
from redis.exceptions import ConnectionError as RedisConnectionError
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
    tests/sessions/test_layer.py cancels a write and a read at every step.
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


class ResilientRedisChannelLayer(RedisChannelLayer):
    def create_pool(self, index):
        pool = super().create_pool(index)
        pool.connection_class = cancellable(pool.connection_class)  # no connection is made before the first command
        return pool

    async def receive(self, channel):
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
        heartbeat re-joins all its sockets at once): the same sorted sets, scores and expiry."""
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
        sockets of this process, which heard the doorbell from memory: campaign.broadcast)."""
        token = _EXCLUDED.set(exclude)
        try:
            async with asyncio.timeout(LAYER_TIMEOUT):
                await super().group_send(group, message)
        finally:
            _EXCLUDED.reset(token)

    def _map_channel_keys_to_connection(self, channel_names, message):
        # Where channels-redis turns the group's members into the messages it sends: the one
        # place the channels left out can be taken away (a whole process's, and then no message).
        excluded = _EXCLUDED.get()
        if excluded:
            channel_names = [c for c in channel_names if c not in excluded]
        return super()._map_channel_keys_to_connection(channel_names, message)


# The channels the current group_send leaves out (a context variable: group_send and the method it
# calls run in the same task, and concurrent sends each have their own).
_EXCLUDED: contextvars.ContextVar[frozenset[str]] = contextvars.ContextVar("excluded", default=frozenset())
