"""Who is at the table right now: off the database.

Presence is not part of the log (nothing happened in the game), and writing a
row on every connect and every heartbeat queued behind the appends on the
database. So each open socket is an entry with a deadline:

* with Redis (``REDIS_URL``, several processes): two sorted sets per campaign
  and user, ``channel -> deadline``, and a hash ``channel -> member``; every
  process reads the same entries, and the keys expire with their last entry;
* without (one process, the in-memory channel layer): the same in a dict.

A socket's heartbeat pushes its deadline (``TTL`` ahead); a socket that
closes removes its entry; a process that dies leaves entries that nobody
refreshes, so they stop counting once their deadline passes (``TTL``: three
missed heartbeats and a margin) and are swept by the next read.

Deadlines are in Redis's time (its ``TIME``), never a process's own clock: processes whose clocks
disagree (one 120 s ahead left a 147 s ghost) still agree when an entry lapses. The clock is
injectable so tests can let time pass without waiting.
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import Callable

import redis.asyncio as aioredis
from django.conf import settings

Clock = Callable[[], float]


def ttl() -> float:
    """How long an entry counts without a heartbeat."""
    return 3 * settings.TABLE_HEARTBEAT_SECONDS + 5


def fold_members(entries: list[dict]) -> list[dict]:
    """Members with at least one live socket, sorted by name, each with the newest head reported.

    A member at the table on several devices is listed once (``None`` until
    one of their sockets reported a head)."""
    members: dict[str, dict] = {}
    for entry in sorted(entries, key=lambda e: e["username"]):
        member = members.setdefault(entry["username"],
                                    {"username": entry["username"], "role": entry["role"], "head": None})
        head = entry.get("head")
        if head is not None and (member["head"] is None or head["seq"] >= member["head"]["seq"]):
            member["head"] = head
    return list(members.values())


class MemoryPresence:
    """One process's presence (no Redis: there is no other process to tell)."""

    def __init__(self, clock: Clock = time.time):
        self.clock = clock
        self.entries: dict[str, dict] = {}  # channel -> {campaign, user_id, username, role, head, deadline}

    def _live(self, entry: dict) -> bool:
        return entry["deadline"] > self.clock()

    def _sweep(self) -> None:
        for channel in [c for c, e in self.entries.items() if not self._live(e)]:
            del self.entries[channel]

    async def arrive(self, campaign_id: int, channel: str, user_id: int, username: str, role: str,
                     limit: int) -> bool:
        """Add the socket; False (and nothing added) if the user already holds ``limit`` live sockets."""
        self._sweep()
        if sum(1 for e in self.entries.values() if e["user_id"] == user_id) >= limit:
            return False
        self.entries[channel] = {"campaign": campaign_id, "user_id": user_id, "username": username, "role": role,
                                 "head": None, "deadline": self.clock() + ttl()}
        return True

    async def still_here(self, campaign_id: int, channel: str, user_id: int, username: str, role: str) -> None:
        entry = self.entries.get(channel)
        if entry is None:  # swept while the socket lived (a stall longer than the TTL): back it comes
            entry = self.entries[channel] = {"campaign": campaign_id, "user_id": user_id, "username": username,
                                             "role": role, "head": None}
        entry["deadline"] = self.clock() + ttl()

    async def still_here_many(self, campaign_id: int, sockets: list[tuple[str, int, str, str]]) -> None:
        """:meth:`still_here` for ``[(channel, user id, username, role)]`` of one campaign."""
        for channel, user_id, username, role in sockets:
            await self.still_here(campaign_id, channel, user_id, username, role)

    async def leave(self, campaign_id: int, channel: str, user_id: int) -> None:
        self.entries.pop(channel, None)

    async def report_head(self, campaign_id: int, channel: str, head: dict) -> bool:
        entry = self.entries.get(channel)
        if entry is None or entry["head"] == head:
            return False
        entry["head"] = head
        return True

    async def members(self, campaign_id: int) -> list[dict]:
        self._sweep()
        return fold_members([e for e in self.entries.values() if e["campaign"] == campaign_id])

    async def sockets_of(self, user_id: int) -> int:
        self._sweep()
        return sum(1 for e in self.entries.values() if e["user_id"] == user_id)


class RedisPresence:
    """Presence shared by every process through Redis (one round trip per operation)."""

    PREFIX = "tk:presence"

    def __init__(self, url: str, clock: Clock | None = None):
        self.url = url
        self.clock = clock  # None: Redis's TIME (tests pass their own)
        self._clients: dict[asyncio.AbstractEventLoop, object] = {}

    def _redis(self):
        # One client per event loop: a redis.asyncio connection belongs to the loop that opened it.
        loop = asyncio.get_running_loop()
        client = self._clients.get(loop)
        if client is None:
            for old in [lp for lp in self._clients if lp.is_closed()]:
                del self._clients[old]
            client = self._clients[loop] = aioredis.Redis.from_url(
                self.url, socket_timeout=1, socket_connect_timeout=1, health_check_interval=30)
        return client

    async def _now(self) -> float:
        if self.clock is not None:
            return self.clock()
        seconds, microseconds = await self._redis().time()
        return seconds + microseconds / 1_000_000

    def _keys(self, campaign_id: int) -> tuple[str, str]:
        return f"{self.PREFIX}:c:{campaign_id}", f"{self.PREFIX}:m:{campaign_id}"

    def _user_key(self, user_id: int) -> str:
        return f"{self.PREFIX}:u:{user_id}"

    async def arrive(self, campaign_id: int, channel: str, user_id: int, username: str, role: str,
                     limit: int) -> bool:
        deadlines, info = self._keys(campaign_id)
        user = self._user_key(user_id)
        now = await self._now()
        keep = int(ttl()) + 1
        entry = json.dumps({"user_id": user_id, "username": username, "role": role, "head": None})
        async with self._redis().pipeline(transaction=True) as p:
            p.zremrangebyscore(user, "-inf", now)
            p.zadd(user, {channel: now + ttl()})
            p.zcard(user)
            p.expire(user, keep)
            results = await p.execute()
        if results[2] > limit:  # counted with this one: over the cap, take it back
            await self._redis().zrem(user, channel)
            return False
        async with self._redis().pipeline(transaction=True) as p:
            p.zadd(deadlines, {channel: now + ttl()})
            p.hset(info, channel, entry)
            p.expire(deadlines, keep)
            p.expire(info, keep)
            await p.execute()
        return True

    async def still_here(self, campaign_id: int, channel: str, user_id: int, username: str, role: str) -> None:
        """Push the socket's deadline; an entry swept while it lived (a stall, a Redis restart) comes back."""
        await self.still_here_many(campaign_id, [(channel, user_id, username, role)])

    async def still_here_many(self, campaign_id: int, sockets: list[tuple[str, int, str, str]]) -> None:
        """:meth:`still_here` for ``[(channel, user id, username, role)]`` of one campaign, in one round trip."""
        deadlines, info = self._keys(campaign_id)
        deadline = await self._now() + ttl()
        keep = int(ttl()) + 1
        async with self._redis().pipeline(transaction=False) as p:
            for channel, user_id, username, role in sockets:
                user = self._user_key(user_id)
                entry = json.dumps({"user_id": user_id, "username": username, "role": role, "head": None})
                p.zadd(deadlines, {channel: deadline})
                p.zadd(user, {channel: deadline})
                p.hsetnx(info, channel, entry)  # keeps the head it reported
                p.expire(user, keep)
            for key in (deadlines, info):
                p.expire(key, keep)
            await p.execute()

    async def leave(self, campaign_id: int, channel: str, user_id: int) -> None:
        deadlines, info = self._keys(campaign_id)
        async with self._redis().pipeline(transaction=False) as p:
            p.zrem(deadlines, channel)
            p.hdel(info, channel)
            p.zrem(self._user_key(user_id), channel)
            await p.execute()

    async def report_head(self, campaign_id: int, channel: str, head: dict) -> bool:
        _, info = self._keys(campaign_id)
        raw = await self._redis().hget(info, channel)
        if raw is None:
            return False
        entry = json.loads(raw)
        if entry.get("head") == head:
            return False
        entry["head"] = head
        await self._redis().hset(info, channel, json.dumps(entry))
        return True

    async def members(self, campaign_id: int) -> list[dict]:
        deadlines, info = self._keys(campaign_id)
        now = await self._now()
        async with self._redis().pipeline(transaction=False) as p:
            p.zrangebyscore(deadlines, "-inf", now)
            p.zrangebyscore(deadlines, f"({now!r}", "+inf")  # a deadline is the first moment it no longer counts
            p.hgetall(info)
            expired, live, entries = await p.execute()
        if expired:  # sockets of a process that died: sweep them
            async with self._redis().pipeline(transaction=False) as p:
                p.zrem(deadlines, *expired)
                p.hdel(info, *expired)
                await p.execute()
        return fold_members([json.loads(entries[c]) for c in live if c in entries])

    async def sockets_of(self, user_id: int) -> int:
        now = await self._now()
        return await self._redis().zcount(self._user_key(user_id), f"({now!r}", "+inf")


_store: MemoryPresence | RedisPresence | None = None


def store() -> MemoryPresence | RedisPresence:
    """The process's presence store: Redis when the channel layer is Redis, else memory."""
    global _store
    url = settings.REDIS_URL if "Redis" in settings.CHANNEL_LAYERS["default"]["BACKEND"] else None
    if _store is None or getattr(_store, "url", None) != url:
        _store = RedisPresence(url) if url else MemoryPresence()
    return _store


def online_usernames(campaign_id: int) -> set[str]:
    """The usernames with a live socket at the campaign's table, from synchronous code (a command
    being stored, in a worker thread): the witnesses of a witnessed roll."""
    from asgiref.sync import async_to_sync

    return {m["username"] for m in async_to_sync(store().members)(campaign_id)}
