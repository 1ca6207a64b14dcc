"""Personas and services shared by the whole suite.

Personas, not factories: a campaign has a GM (``gm``), two players
(``alice`` owns ``hero``, ``bob`` owns ``rival``), a spectator (``watcher``) and
there is an outsider who belongs to nothing. Tests say who acts, not how
users are built.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

import pytest
from hypothesis import settings

from tests.database import tables_emptied_not_truncated

CI = os.environ.get("CI", "").lower() == "true"

# Hypothesis budgets. Property tests name no example count of their own (only the slow
# simulations and a few fuzzers do; the hardening fuzzers and the two-worlds test scale with the
# profile), so one switch sets how hard every search looks: `quick` keeps `make test-fast` under a
# minute; `thorough` (CI=true, or HYPOTHESIS_PROFILE=thorough, which `make test` sets) searches as
# hard as Hypothesis's default, four times `quick`, within `make test`'s 10 minutes (at 200 it was
# about a tenth of the suite's CPU more); `deep` is for a long hunt by hand
# (HYPOTHESIS_PROFILE=deep pytest tests/contract). No deadlines: a loaded machine is
# slow, and a property's timing is not what it checks. docs/testing.md has the numbers.
settings.register_profile("quick", max_examples=25, deadline=None)
settings.register_profile("thorough", max_examples=100, deadline=None, print_blob=True)
settings.register_profile("deep", max_examples=1000, deadline=None, print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE") or ("thorough" if CI else "quick"))


def _a_signing_key() -> None:
    """The run's checkpoint-signing key, made explicitly as a host makes one (``create_signing_key``):
    the server never makes its own, and every server a test starts must find it. One per run, in a
    temporary directory the first process of the run makes; the xdist workers and the servers the
    tests start inherit ``SIGNING_KEY_PATH``. A ``SIGNING_KEY_PATH`` set by hand is used as it is."""
    if os.environ.get("SIGNING_KEY_PATH"):
        return
    import atexit
    import shutil
    import tempfile

    from campaign import signing

    directory = tempfile.mkdtemp(prefix="talekeeper-test-key-")
    os.environ["SIGNING_KEY_PATH"] = os.path.join(directory, "signing.key")
    signing.create_key(Path(os.environ["SIGNING_KEY_PATH"]))
    atexit.register(shutil.rmtree, directory, True)


_a_signing_key()


def pytest_configure(config):
    """The static files collected as a host collects them (``collectstatic``: hashed, compressed),
    into a temporary ``STATIC_ROOT`` for the run: with DEBUG off, as in the tests, every page names
    its files from that manifest, and a server refuses to start without it. Made by the first
    process of the run (the xdist workers and the servers tests start inherit ``STATIC_ROOT``);
    not for the rules' runs without Django (``make test-fast``)."""
    if not config.pluginmanager.has_plugin("django") or os.environ.get("STATIC_ROOT"):
        return
    import atexit
    import shutil
    import subprocess
    import sys
    import tempfile

    from django.conf import settings as django_settings

    directory = tempfile.mkdtemp(prefix="talekeeper-test-static-")
    atexit.register(shutil.rmtree, directory, True)
    subprocess.run([sys.executable, "manage.py", "collectstatic", "--noinput", "-v", "0"],
                   cwd=Path(__file__).resolve().parent.parent, env={**os.environ, "STATIC_ROOT": directory},
                   check=True, timeout=300)
    os.environ["STATIC_ROOT"] = directory
    django_settings.STATIC_ROOT = directory  # this process read its settings before


def _bounded_cancel_all_tasks(loop) -> None:
    """asyncio's own teardown, bounded: cancel what a test left running and wait at most 10 s.

    A task that ignores its cancel would otherwise hang the whole run in the event loop's close
    (a consumer's channel-layer read once did: sessions/layers.py). It fails the test that left
    it, naming the task and where it is stuck.
    """
    import asyncio
    import io

    tasks = [task for task in asyncio.all_tasks(loop) if not task.done()]
    if not tasks:
        return
    for task in tasks:
        task.cancel()
    _, pending = loop.run_until_complete(asyncio.wait(tasks, timeout=10))
    if pending:
        stacks = io.StringIO()
        for task in pending:
            task.print_stack(file=stacks)
        # pytest.fail, not an exception: pytest-asyncio turns a RuntimeError from here into a warning.
        pytest.fail(f"tasks ignored their cancel at the end of a test: {pending!r}\n{stacks.getvalue()}", pytrace=False)


def _bound_event_loop_teardown() -> None:
    import asyncio.runners

    asyncio.runners._cancel_all_tasks = _bounded_cancel_all_tasks


_bound_event_loop_teardown()


def _own_randomness_for_background_threads() -> None:
    """Hypothesis seeds the process's global ``random`` while it generates an example (a run can
    be replayed) and warns ("Do not use the `random` module inside strategies") when that state
    changes under it. No strategy of ours uses it, but two libraries draw from it on threads of
    their own while a test runs: channels-redis (a random prefix on every message it serializes,
    on the broadcast thread of sessions/transport.py) and psycopg_pool (a jitter on every new
    connection, on its workers). Seen in the socket fuzzer, whose next example is generated while
    the last one's broadcast is still being sent. Each library gets a generator of its own, so an
    example's generation and the server's background work never share one."""
    import random

    try:
        import channels_redis.serializers
    except ImportError:  # pragma: no cover - not installed
        pass
    else:
        channels_redis.serializers.random = random.Random()  # it calls random.getrandbits
    try:
        import psycopg_pool.base
    except ImportError:  # pragma: no cover - not installed
        pass
    else:
        psycopg_pool.base.random = random.Random().random  # it imported random.random itself


_own_randomness_for_background_threads()


def _communicators_that_nest() -> None:
    """channels.testing's communicators swap ``channels.db.close_old_connections`` for a no-op while
    each one awaits a send or a receive, with ``mock.patch``: process-wide, and undone in the order
    the awaits end. Two awaiting at once (``asyncio.gather`` over several sockets' answers) can end
    the other way round, and then the no-op stays for the rest of the run: every later
    ``database_sync_to_async`` call kept its pooled connection checked out (seen as "database is
    being accessed by other users" when the run dropped its test database, after PostgreSQL's 5 s
    wait). Here the no-op is in place while any communicator awaits, and the real function is back
    after the last one. Only the tests' communicators did this; the server never swaps it."""
    import channels.db
    from asgiref.testing import ApplicationCommunicator as Base
    from channels.testing.application import ApplicationCommunicator, no_op

    real = channels.db.close_old_connections
    awaiting = [0]

    def swapping(method):
        async def swapped(self, *args, **kwargs):
            awaiting[0] += 1
            channels.db.close_old_connections = no_op
            try:
                return await method(self, *args, **kwargs)
            finally:
                awaiting[0] -= 1
                if not awaiting[0]:
                    channels.db.close_old_connections = real
        return swapped

    ApplicationCommunicator.send_input = swapping(Base.send_input)
    ApplicationCommunicator.receive_output = swapping(Base.receive_output)


_communicators_that_nest()


def _static_files_scanned_once() -> None:
    """Every Django test client builds the whole middleware chain on its first request, and WhiteNoise
    scans its directories there: a stat of every collected file and of its compressed copies, about
    0.06-0.5 s (loaded machine, profiler) per client, and the suite makes thousands of clients. What it
    scans never changes during a run (the run's ``STATIC_ROOT`` is collected once, in
    ``pytest_configure``; ``WHITENOISE_ROOT`` is in the repository), so each directory is scanned once
    per process and the files it found are reused: the same ``StaticFile`` objects, which hold no
    per-request state. A test that changes a static or WhiteNoise setting (``settings`` fixture)
    clears what was kept; one pointing ``STATIC_ROOT`` elsewhere gets its own scan. Servers a test
    starts build their chain once and are not touched."""
    from django.core.signals import setting_changed
    from whitenoise.base import WhiteNoise

    real = WhiteNoise.update_files_dictionary
    found: dict[tuple, dict] = {}

    def update_files_dictionary(self, root, prefix):
        key = (type(self), root, prefix)
        if key not in found:
            before = dict(self.files)
            real(self, root, prefix)
            found[key] = {url: f for url, f in self.files.items() if before.get(url) is not f}
        self.files.update(found[key])

    def forget(setting, **kwargs):
        if setting.startswith(("STATIC", "WHITENOISE_")) or setting in ("DEBUG", "FORCE_SCRIPT_NAME"):
            found.clear()

    WhiteNoise.update_files_dictionary = update_files_dictionary
    setting_changed.connect(forget, weak=False)


_static_files_scanned_once()

# Between transactional tests the tables are emptied, not flushed (tests/database.py).
tables_emptied_not_truncated()

# How long a test's socket waits for the server (a frame, an accept, the end of a disconnect) before the
# test gives up: a bound on a hang, never what a test checks. A loaded 2-core machine (two workers, the
# servers, PostgreSQL and Redis, other runs beside them) can take seconds over one frame.
HANG = 60


def _communicators_wait_for_a_hang_only() -> None:
    """channels.testing gives a socket 1 s to be accepted and 1 s to end after a disconnect, and
    raises TimeoutError after that. A consumer's disconnect leaves its groups and its presence in
    Redis: under load that took longer than a second, and a test whose every check had passed
    failed in its ``await comm.disconnect()``. The defaults are ``HANG`` here; a test that passes
    its own timeout keeps it."""
    import functools

    from channels.testing import WebsocketCommunicator

    WebsocketCommunicator.connect = functools.partialmethod(WebsocketCommunicator.connect, timeout=HANG)
    WebsocketCommunicator.disconnect = functools.partialmethod(WebsocketCommunicator.disconnect, timeout=HANG)


_communicators_wait_for_a_hang_only()


def missing_service(what: str) -> None:
    """Skip on a laptop without the service; fail loudly in CI."""
    if CI:
        pytest.fail(f"{what} is required in CI (CI=true) and is not configured", pytrace=False)
    pytest.skip(f"{what} not configured")


@pytest.fixture
def require_postgres():
    from django.db import connection

    if connection.vendor != "postgresql":
        missing_service("PostgreSQL (DATABASE_URL=postgres://...)")


@pytest.fixture
def require_redis(settings):
    if not os.environ.get("REDIS_URL"):
        missing_service("Redis (REDIS_URL=redis://...)")
    return os.environ["REDIS_URL"]


class Table:
    """A campaign with its people, as most tests need it.

    ``signed``: a campaign whose members sign their commands (docs/fair-dice.md, "Signed commands"):
    each persona registers her key (tests/signing.py) as she joins, and :meth:`command` signs every
    envelope for the session running then, unless told ``sign=False``. ``keyed``: the personas who
    register a key as they join (all of them by default; a test of browsers that make their own leaves
    theirs out)."""

    PERSONAS = ("gm", "alice", "bob", "watcher")

    def __init__(self, system: str = "tote", signed: bool = False, keyed=PERSONAS):
        from django.contrib.auth import get_user_model

        from campaign.actions import do_add_member, do_create_campaign

        User = get_user_model()
        self.gm = User.objects.create_user("gm", password="pw-gm-123456")
        self.alice = User.objects.create_user("alice", password="pw-alice-123456")
        self.bob = User.objects.create_user("bob", password="pw-bob-123456")
        self.watcher = User.objects.create_user("watcher", password="pw-watcher-123456")
        self.outsider = User.objects.create_user("outsider", password="pw-outsider-123456")
        self.campaign = do_create_campaign(self.gm, "The Torn Road", system, slug="torn-road", signed=signed)
        self.signed = signed
        if signed and "gm" in keyed:
            self.register(self.gm)
        for user, role in ((self.alice, "player"), (self.bob, "player"), (self.watcher, "spectator")):
            do_add_member(self.campaign, user, role)
            if signed and user.username in keyed:
                self.register(user)
        self.campaign.refresh_from_db()

    def membership(self, user):
        return self.campaign.memberships.select_related("user", "campaign").get(user=user)

    def command(self, user, action, client_id=None, dice=None, sign=True):
        """Run a command as ``user`` (signed by her key where members sign); returns the CommandResult."""
        import uuid

        from campaign.actions import do_command

        body = {"id": client_id or uuid.uuid4().hex, "action": action}
        if self.signed and sign:
            from tests.signing import signed

            body = signed(self.campaign, user.username, body)
        return do_command(self.membership(user), body, dice=dice)

    def require_signing(self, keyed=PERSONAS):
        """The GM switches an unsigned campaign to signed commands (``require_signed_commands``, sent
        unsigned: nobody holds a key before it); then each of ``keyed`` registers her key."""
        self.command(self.gm, {"type": "require_signed_commands"})
        self.signed = True
        for name in keyed:
            self.register(getattr(self, name))
        self.campaign.refresh_from_db()

    def register(self, user, device=None, label="laptop"):
        """``user`` registers her key on ``device`` (tests/signing.py), signed by it."""
        from campaign.actions import do_command
        from tests.signing import add_key_envelope

        return do_command(self.membership(user), add_key_envelope(self.campaign, user.username, device, label))

    def tokens(self) -> dict[str, str]:
        """A new API token for each persona: ``{"gm": key, "alice": key, ...}``."""
        from campaign.models import ApiToken

        return {name: ApiToken.objects.create(user=getattr(self, name)).key
                for name in ("gm", "alice", "bob", "watcher", "outsider")}

    def create_character(self, user, name, sheet=None):
        from campaign.models import Character

        result = self.command(user, {"type": "create_character", "name": name, "sheet": sheet or {}})
        return Character.objects.get(pk=result.events[0].character_id)


@pytest.fixture
def table(db):
    return Table()


@pytest.fixture
def table_for(db):
    """``table_for("wyrm")``: a table playing that system."""
    return Table


@pytest.fixture
def transactional_table(transactional_db):
    return Table()


class Doorbells:
    """The doorbells commits ring, caught at the one seam between campaign/ and the transport
    (campaign.publish hands them to sessions/transport.py): ``rung`` lists each one's
    ``(campaign_id, events, sheets)`` in the order it rang. Each goes on to the sockets, unless it
    rings inside :meth:`lost` (dropped, as a full channel or Redis down would) or :meth:`held` (kept
    until the test :meth:`ring` s it)."""

    def __init__(self, transport):
        self.transport = transport
        self.rung: list[tuple] = []
        self.losing = False
        self.holding: list[tuple] | None = None

    def send(self, campaign_id: int, data: list[dict], sheets: dict | None = None) -> None:
        self.rung.append((campaign_id, data, sheets))
        if self.holding is not None:
            self.holding.append((campaign_id, data, sheets))
        elif not self.losing:
            self.transport.send(campaign_id, data, sheets)

    def revoke(self, user_id: int, campaign_id: int | None, tokens: list[str] | None = None) -> None:
        self.transport.revoke(user_id, campaign_id, tokens)

    def seqs(self) -> list[list[int]]:
        """Each doorbell's seqs, in the order they rang."""
        return [[e["seq"] for e in data] for _, data, _ in self.rung]

    @contextlib.contextmanager
    def lost(self):
        self.losing = True
        try:
            yield
        finally:
            self.losing = False

    @contextlib.contextmanager
    def held(self):
        """Yields the list the doorbells rung inside it are kept in."""
        self.holding = held = []
        try:
            yield held
        finally:
            self.holding = None

    def ring(self, campaign_id: int, data: list[dict], sheets: dict | None = None) -> None:
        """Hand a held doorbell to the transport now."""
        self.transport.send(campaign_id, data, sheets)


@pytest.fixture
def doorbells(monkeypatch) -> Doorbells:
    from campaign import publish

    caught = Doorbells(publish._transport)
    monkeypatch.setattr(publish, "_transport", caught)
    return caught


@pytest.fixture(autouse=True)
def _test_settings(request):
    # PBKDF2 costs ~0.3 s per user; tests create many. Real servers keep the default.
    # (rules/ tests may run without Django at all: -p no:django.)
    if request.config.pluginmanager.has_plugin("django"):
        settings = request.getfixturevalue("settings")
        settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
        settings.WITNESS_TIMER = False  # a test resolves a witnessed roll itself, never a thread behind it
        # Nor the sweep on the campaign's next command, once the windows (1 s) passed on a loaded machine
        # between a roll and the test's own commit or reveal: a test of the windows sets its own.
        settings.WITNESS_COMMIT_SECONDS = settings.WITNESS_REVEAL_SECONDS = 10**6
        # The test client speaks plain http; production redirects to https.
        settings.SECURE_SSL_REDIRECT = False
        from django.core.cache import cache

        from campaign import ratelimit

        cache.clear()  # cached values must not leak from one test into the next
        ratelimit.reset()  # nor rate-limit windows
    yield
    if request.config.pluginmanager.has_plugin("django"):
        # Each test runs its own event loop; a channel layer instance must not outlive it
        # (channels-redis keeps per-loop receive state that a closed loop would leave stuck).
        from channels.layers import channel_layers

        channel_layers.backends.clear()


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist reads the groups (tests/workers.py)
def pytest_collection_modifyitems(config, items):
    """Under ``--dist loadgroup``, a test file runs whole on one worker (tests/workers.py says why),
    but a test of a file marked ``spread`` runs wherever a worker is free."""
    for item in items:
        spread = item.get_closest_marker("spread") is not None
        item.add_marker(pytest.mark.xdist_group(item.nodeid if spread else item.nodeid.split("::")[0]))
