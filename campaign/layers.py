"""A Redis channel layer whose outages degrade the doorbell, never the sockets.

The channel layer only rings doorbells; the log is in the database and every
socket catches up from it (a seq jump, or a heartbeat with a newer seq). So
when Redis stops or freezes, a table must keep working, just with heartbeat
latency:

* ``receive`` retries with backoff instead of raising: Channels' consumer loop
  ends the connection (close 1011) on any exception from it; and a cancelled
  ``receive`` always ends (see ``receive``);
* group operations time out instead of hanging on a Redis that stopped
  answering (the consumer logs and carries on).
"""

from __future__ import annotations

import asyncio
import logging

from channels_redis.core import RedisChannelLayer
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

log = logging.getLogger(__name__)
LAYER_TIMEOUT = 2.0
OUTAGES = (RedisConnectionError, RedisTimeoutError, OSError, asyncio.TimeoutError)


class ResilientRedisChannelLayer(RedisChannelLayer):
    async def receive(self, channel):
        """Read the next message; a cancelled read really ends.

        On Python 3.11, ``asyncio.wait_for`` loses a cancellation that arrives as the awaited
        call finishes (CPython gh-86296, fixed in 3.12), and redis-py writes every command
        through it once ``socket_timeout`` is set (as it is here, for a frozen Redis). A socket
        closed while its read was sending BZPOPMIN then kept a task (and a Redis connection)
        polling forever. So the read runs as its own task, and cancelling this one cancels
        that one until it has stopped.
        """
        reader = asyncio.ensure_future(self._receive_retrying(channel))
        try:
            return await asyncio.shield(reader)
        except asyncio.CancelledError:
            while not reader.done():
                reader.cancel()
                # Bounded: a cancellation lost in wait_for is sent again once the read waits.
                await asyncio.wait([reader], timeout=1)
            if not reader.cancelled():
                reader.exception()  # retrieved, so never logged: the socket it was for is gone
            raise

    async def _receive_retrying(self, channel):
        delay = 0.1
        while True:
            try:
                return await super().receive(channel)
            except asyncio.CancelledError:
                raise
            except OUTAGES as e:  # only the server going away; a bug stays loud
                task = asyncio.current_task()
                if task is not None and task.cancelling():
                    # Cancelling a read can surface as another error; retrying it
                    # would swallow the cancellation and never let the socket close.
                    raise
                log.warning("channel layer receive failed, retrying in %.1fs: %r", delay, e)
                await asyncio.sleep(delay)
                delay = min(delay * 2, 5.0)

    async def group_add(self, group, channel):
        await asyncio.wait_for(super().group_add(group, channel), LAYER_TIMEOUT)

    async def group_discard(self, group, channel):
        await asyncio.wait_for(super().group_discard(group, channel), LAYER_TIMEOUT)

    async def group_send(self, group, message):
        await asyncio.wait_for(super().group_send(group, message), LAYER_TIMEOUT)
