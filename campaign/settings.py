"""Talekeeper's one settings file: everything comes from the environment.

Defaults run a single process on a laptop: SQLite and the in-memory channel
layer. Set DATABASE_URL and REDIS_URL to scale out (see README, "Running at
scale").
"""

import math
import os
import secrets as _secrets  # a settings module: its public names are settings
from pathlib import Path

import dj_database_url

BASE_DIR = Path(__file__).resolve().parent.parent


def _misconfigured(message: str) -> Exception:
    # Imported here: Django's exceptions module is light, but settings stay importable alone.
    from django.core.exceptions import ImproperlyConfigured

    return ImproperlyConfigured(message)


def env_str(name: str, default: str = "") -> str:
    """An environment variable; unset and empty both mean "use the default"."""
    return os.environ.get(name) or default


TRUE_WORDS = ("1", "true", "yes", "on")
FALSE_WORDS = ("0", "false", "no", "off")


def env_bool(name: str, default: bool = False) -> bool:
    """A yes/no variable. Anything but the words below stops the process: a typo such as
    ``SECURE_COOKIES=ture`` must not silently mean "off"."""
    value = os.environ.get(name)
    if value is None or value.strip() == "":
        return default
    word = value.strip().lower()
    if word in TRUE_WORDS:
        return True
    if word in FALSE_WORDS:
        return False
    raise _misconfigured(f"{name} must be one of {', '.join(TRUE_WORDS + FALSE_WORDS)}, not {value!r}")


def _env_number(name: str, default, minimum, parse, kind: str):
    value = os.environ.get(name)
    if value is None or value.strip() == "":
        return default
    try:
        number = parse(value)
    except ValueError:
        raise _misconfigured(f"{name} must be {kind}, not {value!r}") from None
    if not math.isfinite(number) or number < minimum:
        raise _misconfigured(f"{name} must be {kind} of at least {minimum}, not {value!r}")
    return number


def env_int(name: str, default: int, minimum: int = 0) -> int:
    """A whole number, at least ``minimum`` (every count, size and duration here is >= 0)."""
    return _env_number(name, default, minimum, int, "a whole number")


def env_float(name: str, default: float, minimum: float = 0.0) -> float:
    """A finite decimal number, at least ``minimum``."""
    return _env_number(name, default, minimum, float, "a finite number")


def env_choice(name: str, default: str, choices: tuple[str, ...]) -> str:
    value = env_str(name, default)
    if value not in choices:
        raise _misconfigured(f"{name} must be one of {', '.join(choices)}, not {value!r}")
    return value


def env_list(name: str, default: str = "") -> list[str]:
    return [part.strip() for part in env_str(name, default).split(",") if part.strip()]


DEBUG = env_bool("DEBUG", False)
# A fixed development key is only acceptable with DEBUG on; production must set one.
SECRET_KEY_FROM_ENV = bool(env_str("SECRET_KEY"))
SECRET_KEY = env_str("SECRET_KEY") or ("dev-only-insecure-key-" + "x" * 40 if DEBUG else "")
if not SECRET_KEY:
    # Without SECRET_KEY every restart logs everybody out and processes can't
    # share logins; `check --deploy` says so (campaign/checks.py).
    SECRET_KEY = _secrets.token_urlsafe(50)
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", "127.0.0.1,localhost,testserver")
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS")

INSTALLED_APPS = [
    "daphne",
    "campaign",  # first, so its management commands (flush) take precedence
    "sessions.apps.PlayConfig",
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "channels",
    "csp",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "campaign.logs.RequestContext",  # request id, user and campaign on every log line
    "campaign.outages.DatabaseOutageMiddleware",  # 503, not 500, while PostgreSQL is away
    "csp.middleware.CSPMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

ROOT_URLCONF = "campaign.urls"
ASGI_APPLICATION = "campaign.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "campaign.views.auth_next",
                "campaign.accounts.email_context",
            ],
        },
    },
]

# --- Database -----------------------------------------------------------------
# Seconds a statement waits for a lock (0: for ever), and a table's socket command for its turn
# (twice that: sessions/db.py); then the command answers table_busy, nothing stored.
DB_LOCK_TIMEOUT = env_int("DB_LOCK_TIMEOUT", 5)
# Seconds an idle PostgreSQL connection goes unprobed; a dead one fails in about twice that (0: as
# the operating system does).
DB_TCP_KEEPALIVE = env_int("DB_TCP_KEEPALIVE", 30)
DATABASES = {
    "default": dj_database_url.parse(
        env_str("DATABASE_URL", f"sqlite:///{BASE_DIR / 'talekeeper.sqlite3'}"),
        conn_max_age=env_int("DB_CONN_MAX_AGE", 0),
    )
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
    # Fail fast when PostgreSQL is unreachable: a request answers 503 database_unavailable
    # within seconds instead of hanging on the operating system's connect timeout
    # (docs/operations.md). Checked on every new connection, pooled or not.
    DATABASES["default"].setdefault("OPTIONS", {})["connect_timeout"] = env_int("DB_CONNECT_TIMEOUT", 3)
    # A connection whose PostgreSQL went away without a word (its host died, the network between
    # was cut) fails within about twice DB_TCP_KEEPALIVE seconds, as an outage does
    # (database_unavailable; outcome_unknown at COMMIT), instead of keeping its thread and pooled
    # connection waiting on the socket for ever (an idle TCP connection notices nothing by itself,
    # and one with a statement unacknowledged only after the kernel's ~15 minutes of retries).
    # The kernel probes an idle connection after DB_TCP_KEEPALIVE seconds, then three times a third
    # of that apart; unacknowledged data gives up after the same total. (libpq applies these to TCP
    # connections only; a Unix socket has no network to lose.) 0: the operating system's defaults.
    if DB_TCP_KEEPALIVE > 0:
        DATABASES["default"]["OPTIONS"].update(
            keepalives=1, keepalives_idle=DB_TCP_KEEPALIVE, keepalives_interval=max(1, DB_TCP_KEEPALIVE // 3),
            keepalives_count=3, tcp_user_timeout=2 * DB_TCP_KEEPALIVE * 1000)
    # Every connection is checked before it is used, pooled or persistent: connections broken
    # by a PostgreSQL restart are replaced, never handed out. A pooled one is checked without a
    # round trip (campaign/postgresql/base.py: Django's backend, that check its only change).
    DATABASES["default"]["ENGINE"] = "campaign.postgresql"
    DATABASES["default"]["CONN_HEALTH_CHECKS"] = True
    # The statements campaign/eventlog/store.py prepares (every command's lock and write, the connection's
    # only prepared statements) are planned once per connection: PostgreSQL planned the lock
    # again for every command (its estimate of the generic plan lost to the custom plans'),
    # 1-2 ms of its CPU each. Their plan is made for any ids (campaign.eventlog.store._inline_constants).
    # A startup option, not a SET: a SET in a transaction that rolls back is undone.
    # A statement waits at most DB_LOCK_TIMEOUT seconds for a lock (a command for its campaign's
    # stream row): then it fails, the command answers 503 table_busy (nothing was stored), and its
    # thread and connection serve the other tables again (campaign/outages.py).
    DATABASES["default"]["OPTIONS"]["options"] = " ".join(
        filter(None, [DATABASES["default"]["OPTIONS"].get("options"), "-c plan_cache_mode=force_generic_plan",
                      f"-c lock_timeout={DB_LOCK_TIMEOUT * 1000}"]))
if DATABASES["default"]["ENGINE"] == "campaign.postgresql" and env_int("DB_POOL_MAX", 20) > 0:
    # A pool per process: without it every database call under ASGI opens a
    # new connection (measured: a quarter of the database thread's time, see
    # docs/performance.md). Django refuses a pool with persistent connections.
    DATABASES["default"]["CONN_MAX_AGE"] = 0
    DATABASES["default"]["OPTIONS"]["pool"] = {
        "min_size": 1,
        "max_size": env_int("DB_POOL_MAX", 20),
        # How long a request waits for a connection before it answers 503: with
        # PostgreSQL down, every request waits this long, so it is short.
        "timeout": env_int("DB_POOL_TIMEOUT", 3),
    }
# Threads for the sockets' database work in each process (sessions/db.py; at most DB_POOL_MAX - 2).
DB_SOCKET_THREADS = env_int("DB_SOCKET_THREADS", 18)
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # IMMEDIATE takes the write lock when a transaction begins, so concurrent
    # appends queue on the busy timeout instead of failing with "database is
    # locked" when a reader upgrades to a writer. WAL lets readers run meanwhile.
    DATABASES["default"]["OPTIONS"] = {
        "transaction_mode": "IMMEDIATE",
        "timeout": 30,  # then table_busy (campaign/outages.py); long, for one process on a laptop
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
    }
    # A file, not Django's shared in-memory database, so tests exercise the
    # same locking as production (threads and processes appending at once).
    DATABASES["default"]["TEST"] = {"NAME": str(BASE_DIR / "test_talekeeper.sqlite3")}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# --- Scripted dice (tests only) -----------------------------------------------------
# A file of faces the server rolls next (campaign/dice.py), so a browser test can play a rare path
# on a real daphne. Refused unless DEBUG is on or the database is a test database (pytest-django
# names them test_*): a production server's dice can never be scripted.
TEST_DICE_FILE = env_str("TEST_DICE_FILE")
if TEST_DICE_FILE and not DEBUG and not Path(str(DATABASES["default"]["NAME"])).name.startswith("test_"):
    from django.core.exceptions import ImproperlyConfigured

    raise ImproperlyConfigured("TEST_DICE_FILE scripts the server's dice: only with DEBUG=1 or a test database.")

# --- Channel layer ------------------------------------------------------------
REDIS_URL = env_str("REDIS_URL")
if REDIS_URL:
    CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "sessions.layers.ResilientRedisChannelLayer",
            "CONFIG": {
                # redis-py caps an async pool at 100 connections by default;
                # one socket may hold one, so a busy daphne needs far more.
                "hosts": [{
                    "address": REDIS_URL,
                    "max_connections": env_int("REDIS_MAX_CONNECTIONS", 2000),
                    # Above channels-redis's 5 s blocking read, so an idle read is never
                    # cut short by the client's own timeout (channels_redis#422).
                    "socket_timeout": 10,
                }],
                "capacity": env_int("CHANNEL_CAPACITY", 500),
                "expiry": 60,
                # A socket's group memberships last this long unless refreshed, and every
                # heartbeat refreshes them (sessions/consumers.py): a process killed without
                # discarding its sockets leaves the groups within this time, not a day
                # (channels-redis's default), so broadcasts stop filling dead channels.
                "group_expiry": env_int("CHANNEL_GROUP_EXPIRY", max(30, 8 * env_int("TABLE_HEARTBEAT_SECONDS", 15))),
            },
        }
    }
else:
    CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}

# --- Auth, static, i18n ---------------------------------------------------------
# Sign-up and password change refuse short, common, all-digit and name-like passwords.
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
# --- Email: only for password resets ---------------------------------------------------
# Unset EMAIL_HOST: the server sends no mail, asks no address, and a forgotten password is reset by
# the operator (`manage.py changepassword`, docs/operations.md). EMAIL_CONSOLE=1 (development)
# writes each mail to standard output instead of sending it.
EMAIL_HOST = env_str("EMAIL_HOST")
EMAIL_CONSOLE = env_bool("EMAIL_CONSOLE", False)
PASSWORD_RESET_BY_EMAIL = bool(EMAIL_HOST) or EMAIL_CONSOLE
EMAIL_BACKEND = ("django.core.mail.backends.console.EmailBackend" if EMAIL_CONSOLE and not EMAIL_HOST
                 else "django.core.mail.backends.smtp.EmailBackend")
EMAIL_PORT = env_int("EMAIL_PORT", 587)
EMAIL_HOST_USER = env_str("EMAIL_HOST_USER")
EMAIL_HOST_PASSWORD = env_str("EMAIL_HOST_PASSWORD")
# STARTTLS on the submission port by default; EMAIL_USE_SSL=1 for implicit TLS (port 465).
EMAIL_USE_SSL = env_bool("EMAIL_USE_SSL", False)
EMAIL_USE_TLS = env_bool("EMAIL_USE_TLS", not EMAIL_USE_SSL)
EMAIL_TIMEOUT = env_int("EMAIL_TIMEOUT", 10)
DEFAULT_FROM_EMAIL = env_str("DEFAULT_FROM_EMAIL", "talekeeper@localhost")
# A reset link works once (its token is made from the password) and for this long.
PASSWORD_RESET_TIMEOUT = env_int("PASSWORD_RESET_TIMEOUT_HOURS", 24) * 3600
if EMAIL_USE_SSL and EMAIL_USE_TLS:
    from django.core.exceptions import ImproperlyConfigured

    raise ImproperlyConfigured("EMAIL_USE_TLS and EMAIL_USE_SSL exclude each other: set one of them.")

LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "login"

LANGUAGE_CODE = "en"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
# Where `manage.py collectstatic` writes, and WhiteNoise serves from, with DEBUG off.
STATIC_ROOT = Path(env_str("STATIC_ROOT") or BASE_DIR / "staticfiles")
STATICFILES_DIRS = [BASE_DIR / "static"]
# DEBUG off: hashed, compressed files (campaign/staticstorage.py), so collectstatic is required
# (check --deploy says so, and the server refuses to start without it: docs/operations.md).
# DEBUG on (`make run`): the files as they are, straight from static/, nothing to collect.
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage" if DEBUG
                    else "campaign.staticstorage.StaticStorage"},
}
WHITENOISE_USE_FINDERS = DEBUG
# Served at the site's root: /favicon.ico, which browsers ask for where a page links no icon (an API
# answer, the admin, a download); the pages link static/talekeeper/favicon.svg (tools/make_favicon.py).
WHITENOISE_ROOT = BASE_DIR / "static" / "root"

# --- Security when DEBUG is off -------------------------------------------------
# Secure by default: `manage.py check --deploy` is clean with only SECRET_KEY and
# ALLOWED_HOSTS set. Plain-http test servers turn the https parts off explicitly.
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
SECURE_CROSS_ORIGIN_OPENER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"
SESSION_COOKIE_HTTPONLY = True
CSRF_COOKIE_HTTPONLY = False  # the table page reads it to send the API's X-CSRFToken header
# The probes (campaign/health.py) talk to a process directly, in plain http.
SECURE_REDIRECT_EXEMPT = [r"^healthz$", r"^readyz$", r"^metrics$"]
if not DEBUG:
    SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", True)
    SESSION_COOKIE_SECURE = env_bool("SECURE_COOKIES", True)
    CSRF_COOKIE_SECURE = env_bool("SECURE_COOKIES", True)
    SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 30 * 24 * 3600)
    SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", True)
    SECURE_HSTS_PRELOAD = env_bool("SECURE_HSTS_PRELOAD", False)
# X-Forwarded-Proto is only believed when a proxy in front sets it (and strips the
# client's own): without one, any client could claim https.
BEHIND_PROXY = env_bool("BEHIND_PROXY", False)
if BEHIND_PROXY:
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
# Content-Security-Policy (django-csp): only this site's own scripts, styles,
# sockets and forms; no inline script or style anywhere (the table's data is a
# json_script block, which is data, not script).
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": ["'self'"],
        "script-src": ["'self'"],
        "style-src": ["'self'"],
        "img-src": ["'self'"],  # the icon is a file (WHITENOISE_ROOT); nothing draws a data: image
        "connect-src": ["'self'"],
        "object-src": ["'none'"],
        "base-uri": ["'none'"],
        "form-action": ["'self'"],
        "frame-ancestors": ["'none'"],
    },
}
# HSTS preload is a one-way commitment of the whole domain; only its owner can
# choose it (SECURE_HSTS_PRELOAD=1), so its reminder is silenced, not ignored.
SILENCED_SYSTEM_CHECKS = ["security.W021"]

# --- Rate limits ------------------------------------------------------------------
# Commands per user per minute (HTTP and sockets together, across processes when
# Redis is configured), and frames per socket per 10 seconds.
RATE_LIMIT_USER_PER_MINUTE = env_int("RATE_LIMIT_USER_PER_MINUTE", 240)
RATE_LIMIT_MESSAGES_PER_MINUTE = env_int("RATE_LIMIT_MESSAGES_PER_MINUTE", 30)  # chat messages per user (docs/table.md#chat)
RATE_LIMIT_SOCKET_PER_10S = env_int("RATE_LIMIT_SOCKET_PER_10S", 40)
RATE_LIMIT_PREVIEWS_PER_MINUTE = env_int("RATE_LIMIT_PREVIEWS_PER_MINUTE", 600)  # odds previews per user (README)
# Where the counters live (campaign/ratelimit.py, the `limits` library's storage URIs): Redis
# when configured, so every process counts together; else this process's memory.
RATE_LIMIT_STORAGE = env_str("RATE_LIMIT_STORAGE") or REDIS_URL or "memory://"
# The cache holds recomputable values (campaign/softcache.py), so an outage costs recomputing.
CACHES = {
    "default": (
        {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": REDIS_URL,
            # Never let a frozen Redis hold a request for redis-py's default 5 s.
            "OPTIONS": {"socket_timeout": 0.5, "socket_connect_timeout": 0.5},
        }
        if REDIS_URL
        else {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}
    )
}

# Failed logins and wrong API tokens per account and per client address in a
# 5-minute window; past it the next attempt is refused until the window ends.
LOGIN_FAILURES_PER_5_MINUTES = env_int("LOGIN_FAILURES_PER_5_MINUTES", 10)
# Failed logins of one account from anywhere in an hour; past it only a device that logged in to
# the account before (a signed cookie) may still log in to it, with the right password.
LOGIN_ACCOUNT_FAILURES_PER_HOUR = env_int("LOGIN_ACCOUNT_FAILURES_PER_HOUR", 30)
# Password reset requests naming one email address, from anywhere, in an hour (each sends a mail
# when an account has the address); a client address's requests count against
# LOGIN_FAILURES_PER_5_MINUTES, as failed logins do.
PASSWORD_RESET_MAILS_PER_HOUR = env_int("PASSWORD_RESET_MAILS_PER_HOUR", 3)
# Open table sockets one user may hold at once (all campaigns, all processes).
SOCKETS_PER_USER = env_int("SOCKETS_PER_USER", 8)
# An invite link stops working this many days after the GM made it (0: never).
INVITE_DAYS = env_int("INVITE_DAYS", 14)

# --- Talekeeper ---------------------------------------------------------------------
# How often an idle socket is told the newest seq (and checks it missed nothing).
TABLE_HEARTBEAT_SECONDS = env_int("TABLE_HEARTBEAT_SECONDS", 15)
# How long a witnessed roll waits for its witnesses' commitments before it closes them with those
# that came, then for their reveals before it is decided with those that came (docs/fair-dice.md,
# "Witnessed rolls"): about 2 s in all.
WITNESS_COMMIT_SECONDS = env_float("WITNESS_COMMIT_SECONDS", 1.0)
WITNESS_REVEAL_SECONDS = env_float("WITNESS_REVEAL_SECONDS", 1.0)
# Whether this process resolves its own pending rolls on a timer (the test suite's own process
# does not: its tests resolve them by calling the pipeline, and a sweep covers any process).
WITNESS_TIMER = env_bool("WITNESS_TIMER", True)
# The largest events page the API and the socket backlog read at once.
EVENTS_PAGE_MAX = 500
# A character's state is snapshotted about every this many events of the log, so
# a sheet "as of" any seq (or without hidden rolls) folds at most about this many.
PROJECTION_SNAPSHOT_EVERY = env_int("PROJECTION_SNAPSHOT_EVERY", 500)

# /metrics in Prometheus' format for a scraper sending "Authorization: Bearer <this>" (campaign/metrics.py,
# docs/operations.md "Metrics"). Empty: off, nothing counted, /metrics is a 404.
METRICS_TOKEN = env_str("METRICS_TOKEN")

# A memory probe for a soak (bench/soak.py, docs/performance.md "Memory over hours"): when set, a
# daphne process traces its Python allocations (tracemalloc, TRACEMALLOC_FRAMES deep) and every
# TRACEMALLOC_SECONDS appends a JSON line to this file: RSS, traced memory and the sites that grew most
# since the first sample. Off (empty) in production: tracing costs CPU and memory on every allocation.
TRACEMALLOC_FILE = env_str("TRACEMALLOC_FILE")
TRACEMALLOC_SECONDS = env_int("TRACEMALLOC_SECONDS", 300)
TRACEMALLOC_FRAMES = env_int("TRACEMALLOC_FRAMES", 6)

# One line per record with the request or socket, campaign and user id; repeats of an incident
# (the same warning within LOG_INCIDENT_SECONDS) held back and counted (campaign/logs.py).
LOG_FORMAT = env_choice("LOG_FORMAT", "text", ("text", "json"))
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"line": {"()": f"campaign.logs.{LOG_FORMAT.capitalize()}Formatter"}},
    "handlers": {"console": {"class": "campaign.logs.ConsoleHandler", "formatter": "line",
                             "window": env_float("LOG_INCIDENT_SECONDS", 60.0)}},
    "root": {"handlers": ["console"], "level": env_str("LOG_LEVEL", "INFO")},
    "loggers": {"django.channels.server": {"level": "WARNING"}},
}
