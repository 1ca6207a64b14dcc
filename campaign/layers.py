"""A Redis channel layer whose outages degrade the doorbell, never the sockets.

The channel layer only rings doorbells; the log is in the database and every
socket catches up from it (a seq jump, or a heartbeat with a newer seq). So
when Redis stops or freezes, a table must keep working, just with heartbeat
latency:

* ``receive`` retries with backoff instead of raising: Channels' consumer loop
  ends the connection (close 1011) on any exception from it;
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
