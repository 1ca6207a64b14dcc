"""Django settings of the bare relay (bench/relay.py): a channel layer and nothing else.

The layer is configured as Talekeeper's (campaign/settings.py): the same
Redis, capacity and expiry, and the same ``max_connections`` (redis-py caps an
async pool at 100 connections by default, which fails past ~100 sockets). No
database, no apps, no middleware.

One addition: ``socket_timeout``. redis-py 8 reads with a 5 s timeout by
default, the same 5 s that channels-redis blocks in ``BZPOPMIN``, so an idle
process's receive races its own socket timeout and, when the reply is a little
late (a busy machine), raises ``TimeoutError``, which ends a consumer with
close code 1011 (django/channels_redis#422, redis/redis-py#4091). Talekeeper's
``sessions.layers.ResilientRedisChannelLayer`` retries instead; the relay,
being bare, gets a read timeout longer than the blocking pop.
"""

import os

SECRET_KEY = os.environ.get("SECRET_KEY") or "talekeeper-bench-relay"
DEBUG = False
ALLOWED_HOSTS = ["127.0.0.1", "localhost"]
INSTALLED_APPS: list[str] = []
DATABASES: dict = {}
USE_TZ = True

CHANNEL_LAYERS = {
    "default": {
        "BACKEND": "channels_redis.core.RedisChannelLayer",
        "CONFIG": {
            "hosts": [{
                "address": os.environ["REDIS_URL"],
                "max_connections": int(os.environ.get("REDIS_MAX_CONNECTIONS") or 2000),
                "socket_timeout": 10,  # > channels-redis's 5 s BZPOPMIN (see above)
            }],
            "capacity": int(os.environ.get("CHANNEL_CAPACITY") or 500),
            "expiry": 60,
        },
    }
}

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": os.environ.get("LOG_LEVEL") or "WARNING"},
}
