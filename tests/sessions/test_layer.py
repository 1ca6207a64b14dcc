"""The Redis channel layer: a cancelled read always ends (it once polled Redis forever).

A consumer's channel-layer read is cancelled when its socket closes. On Python 3.11, redis-py's
``asyncio.wait_for`` around each command write could swallow that cancellation (CPython
gh-86296), and channels-redis then re-sent BZPOPMIN every 5 s for ever. It showed up after the
socket fuzzer's refused connect, whose read is cancelled a few steps after it starts.
"""

import asyncio

import pytest
from django.conf import settings

from campaign.layers import ResilientRedisChannelLayer

pytestmark = pytest.mark.redis


async def test_a_read_cancelled_at_any_step_of_its_start_ends(require_redis):
    layer = ResilientRedisChannelLayer(**settings.CHANNEL_LAYERS["default"]["CONFIG"])
    channel = await layer.new_channel()
    stuck = []
    try:
        # Cancel after 0, 1, 2, ... loop steps: through connecting, HELLO/SELECT and BZPOPMIN.
        for steps in range(40):
            read = asyncio.ensure_future(layer.receive(channel))
            for _ in range(steps):
                await asyncio.sleep(0)
            read.cancel()
            done, _ = await asyncio.wait([read], timeout=8)  # bounded: a stuck read polls forever
            if not done:
                stuck.append(steps)
                read.cancel()
        assert not stuck, f"reads cancelled after {stuck} loop steps never ended"
    finally:
        await layer.flush()
