"""The library internals Talekeeper patches or copies, pinned: an upgrade that changes one fails here.

Each patch (docs/performance.md, "Patched library internals") replaces or leans on a private part of
a library, and was measured against it (``bench/patches.py``). When that upstream code changes, the
patch may now be wrong (a copy that misses a fix) or gain nothing (upstream did the same): re-read the
patch against the new code, re-measure it, and only then update the digest here.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import inspect

import pytest


def _source(obj) -> str:
    return inspect.getsource(inspect.unwrap(obj))


def _django_pool():
    from django.db.backends.postgresql.base import DatabaseWrapper

    return DatabaseWrapper.pool.fget


def _psycopg(name):
    def get():
        import psycopg

        return getattr(psycopg.Cursor, name)
    return get


def _channels_redis(name):
    def get():
        from channels_redis.core import RedisChannelLayer

        return getattr(RedisChannelLayer, name)
    return get


def _redis_send_packed_command():
    from redis.asyncio.connection import AbstractConnection

    return AbstractConnection.send_packed_command


def _channels_dispatch():
    from channels.consumer import AsyncConsumer

    return AsyncConsumer.dispatch


def _channels_get_user():
    from channels.auth import get_user

    return get_user.func  # the synchronous function the decorator wraps: what sessions/auth.py calls


def _in_memory_group_add():
    from channels.layers import InMemoryChannelLayer

    return InMemoryChannelLayer.group_add  # how ``groups`` is kept, which sessions/transport.py reads


# (what, package, the upstream code, where the patch is, sha256 of the code's source, first 16 hex digits)
PINS = [
    ("Django's DatabaseWrapper.pool", "django", _django_pool, "campaign/postgresql/base.py", "e5c2654fdf2d5090"),
    ("psycopg's Cursor._send_query_prepared", "psycopg", _psycopg("_send_query_prepared"), "campaign/eventlog/store.py", "b93f0ec6a1ac9ed2"),
    ("psycopg's Cursor.execute", "psycopg", _psycopg("execute"), "campaign/eventlog/store.py", "52457036956736cb"),
    ("channels-redis's group_send", "channels-redis", _channels_redis("group_send"), "sessions/layers.py", "c9623ea6ccfa7308"),
    ("channels-redis's group_add", "channels-redis", _channels_redis("group_add"), "sessions/layers.py", "85ed67999d94bb85"),
    ("channels-redis's _map_channel_keys_to_connection", "channels-redis",
     _channels_redis("_map_channel_keys_to_connection"), "sessions/layers.py", "789f9193b4536625"),
    ("channels-redis's _group_key", "channels-redis", _channels_redis("_group_key"), "sessions/layers.py", "7e89938e1cb20f26"),
    ("redis-py's AbstractConnection.send_packed_command", "redis", _redis_send_packed_command,
     "sessions/layers.py", "baaeabd916209157"),
    ("Channels' AsyncConsumer.dispatch", "channels", _channels_dispatch, "sessions/consumers.py", "39f34e7d4fb0f655"),
    ("Channels' get_user", "channels", _channels_get_user, "sessions/auth.py", "3124b316d7d6472c"),
    ("Channels' InMemoryChannelLayer.group_add", "channels", _in_memory_group_add, "sessions/transport.py", "7c4f2ffd2d8f7a91"),
]


@pytest.mark.parametrize("what, package, upstream, where, digest", PINS, ids=[p[0] for p in PINS])
def test_the_patched_upstream_code_is_the_one_measured(what, package, upstream, where, digest):
    found = hashlib.sha256(_source(upstream()).encode()).hexdigest()[:16]
    assert found == digest, (
        f"{what} changed upstream ({package} {importlib.metadata.version(package)} is installed). The patch in "
        f"{where} copies or leans on it: re-read it against the new code, re-measure it with bench/patches.py "
        f"(docs/performance.md, \"Patched library internals\"), keep it only if it still gains, then pin {found!r}.")
