"""Browser tests: Debian's Chromium, driven by Playwright (sync API), against a real daphne.

One daphne and one Chromium for the whole package, started by its first test that needs them and
stopped after its last (package-scoped fixtures: nothing of Playwright outlives the browser tests, so
the tests after them on the same worker run without its event loop); every test gets an emptied
database (transactional tests, emptied by tests/database.py), fresh browser contexts (one per
person at the table) and logs in with a session cookie (the login form has its own tests,
test_invite.py). A ``Seat`` is one person's browser tab at the table.

Scripted dice, every one: the daphne rolls what a test says, so rare paths (a critical, a failure
Resolve can rescue, damage in a combat round) happen every run, and no outcome is left to luck.

* ``script_dice([3, 1, 2])``: the next dice rolled, in order, whoever rolls them (the server, or the
  test's own ``table.command`` in this process; a command given ``dice=ScriptedDice(...)`` rolls
  those instead).
* ``faces_for(system, state, action, wanted)``: the fewest, smallest faces that make the
  engine itself decide ``wanted(payload)``, for scripting an outcome without
  hand-computing dice (``wanted=lambda p: p["critical"]``).
* ``strict_dice`` (every test): a die nobody scripted is refused, not rolled: the command fails
  with ``unscripted_dice`` ("No scripted face left for a d6: ..."), and the test fails naming the
  dice refused. It fails too if a scripted face was never rolled.
* ``real_dice``: the one opt-in to real dice, for the tests of the fair-dice verification pages,
  which recompute a finished session's dice from its revealed seed (what they check holds
  whatever the seed gives).

The seam is ``TEST_DICE_FILE`` (``campaign/dice.py`` ``QueuedDice``): a JSON script of faces the
server pops, refused by ``campaign/settings.py`` unless DEBUG is on or the database is a test database.
"""

from __future__ import annotations

import concurrent.futures
import fcntl
import functools
import itertools
import json
import os
import re
import urllib.request
from pathlib import Path

import pytest
from playwright.sync_api import Browser, expect, sync_playwright

from rules import get_system
from rules.base import DiceExhausted, RuleError, ScriptedDice
from tests.conftest import HANG, Table
from tests.servers import SERVER_SECRET_KEY, daphne

CHROMIUM = "/usr/bin/chromium"
# New headless is the whole browser: for every context (a window nobody sees) it builds browser UI
# written as WebUI, each piece in a renderer of its own (`--top-chrome-webui` in `ps`). Turning those
# features off took Chromium's CPU for eight contexts from 13-14 s to 5-5.5 s (docs/chromium-cpu.md);
# the page itself is untouched. Chromium obeys only the last `--disable-features`, so ours repeats
# Playwright's own list (tests/browser/test_launch.py fails when a Playwright upgrade changes it).
PLAYWRIGHTS_DISABLED_FEATURES = (
    "AvoidUnnecessaryBeforeUnloadCheckSync,DestroyProfileOnBrowserClose,HttpsUpgrades,HttpsFirstBalancedModeAutoEnable,"
    "LensOverlay,MediaRouter,PaintHolding,ThirdPartyStoragePartitioning,AvoidCorsURLLoaderRestartOnRedirect,"
    "TcpPortRandomizationWin,OptimizationHints,NetworkTimeServiceQuerying,AimEnabled,PreconnectToSearch,"
    "msForceBrowserSignIn,msEdgeUpdateLaunchServicesPreferredVersion"
)
HIDDEN_BROWSER_UI = ("PreloadTopChromeWebUI,WebUIOmniboxPopup,WebUIOmniboxAimPopup,WebUIReloadButton,InitialWebUI,"
                     "WebUILocationBar,Translate")
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run", f"--disable-features={PLAYWRIGHTS_DISABLED_FEATURES},{HIDDEN_BROWSER_UI}"]
SCREENSHOTS = Path(__file__).resolve().parents[2] / "docs" / "screenshots"
# Screenshots for docs/ are written only on request (`TALEKEEPER_SCREENSHOTS=1 pytest tests/browser`):
# a test run never changes tracked files.
WRITE_SCREENSHOTS = os.environ.get("TALEKEEPER_SCREENSHOTS") == "1"
DESKTOP = {"width": 1440, "height": 900}
PHONE = {"width": 390, "height": 844}
SLUG = "torn-road"
PASSWORDS = {"gm": "pw-gm-123456", "alice": "pw-alice-123456", "bob": "pw-bob-123456",
             "watcher": "pw-watcher-123456", "outsider": "pw-outsider-123456"}

# How long an expectation waits for the page: a bound on a hang, never what is checked. Three workers
# may each drive a Chromium on two cores, so a frame can take seconds on a busy machine.
expect.set_options(timeout=10000)


@pytest.fixture(scope="package")
def dice_file(tmp_path_factory) -> Path:
    """The dice script the server and the test's own commands read (``campaign.dice.QueuedDice``)."""
    path = tmp_path_factory.mktemp("dice") / "faces.json"
    path.write_text(json.dumps(NO_SCRIPT))
    return path


NO_SCRIPT = {"faces": []}  # no face scripted, and no real dice: a die is refused


@pytest.fixture(scope="package")
def server(django_db_setup, dice_file):
    """A real daphne on the test database, shared by every browser test (each module's were started with
    the same settings); heartbeats every second so gaps heal quickly. What it keeps in memory between
    tests is keyed by what the emptied database never gives twice (campaign, user and socket ids; only
    test_pages.py restarts the ids, and its every test starts from the same ones) or lapses on its own
    (presence: its sockets close with their contexts, and an entry counts for seconds at most)."""
    if not os.path.exists(CHROMIUM):
        pytest.skip("Debian's chromium is not installed")
    # A witnessed roll is decided when its last witness's table contributed, or when the test lets its
    # time run out (test_trust.py ``_host_decides``: every pending roll due now, then the sweep): the
    # server's own timers never run, and its deadlines are out of any test's reach, so however slow a
    # loaded machine makes a table, no roll is closed or decided behind the test's back.
    with daphne(TABLE_HEARTBEAT_SECONDS="1", DJANGO_ALLOW_ASYNC_UNSAFE="", TEST_DICE_FILE=str(dice_file),
                WITNESS_TIMER="0", WITNESS_COMMIT_SECONDS="1000000", WITNESS_REVEAL_SECONDS="1000000") as base:
        yield f"http://{base}"


def _update_script(path: Path, change) -> dict:
    """Apply ``change`` to the dice script under the lock the server takes too; return the old script."""
    with open(path, "r+") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        script = json.loads(f.read())
        f.seek(0)
        f.truncate()
        f.write(json.dumps(change(script)))
    return script


@pytest.fixture(autouse=True)
def strict_dice(dice_file, settings):
    """Every die of a browser test is scripted: the test's own commands (``table.command``, run in
    this process) read the server's script too, and a die nobody scripted is refused, not rolled.
    The test then fails, naming the dice refused; and it fails if a scripted face was never rolled."""
    settings.TEST_DICE_FILE = str(dice_file)
    _update_script(dice_file, lambda script: NO_SCRIPT)
    yield
    script = _update_script(dice_file, lambda script: NO_SCRIPT)
    if script.get("refused"):
        pytest.fail(f"dice nobody scripted were refused ({', '.join(script['refused'])}): script them with "
                    "script_dice([...]) or faces_for(...)", pytrace=False)
    assert not script["faces"], f"scripted faces never rolled: {script['faces']}"


@pytest.fixture
def script_dice(server, dice_file):
    """``script_dice([6, 2, 5])``: the next dice rolled, in order, whoever rolls them (the server or
    the test's own commands); a die beyond them is refused (``strict_dice``)."""

    def script(faces):
        assert all(isinstance(face, int) and face >= 1 for face in faces), faces
        _update_script(dice_file, lambda script: {**script, "faces": script["faces"] + list(faces)})

    return script


@pytest.fixture
def real_dice(dice_file):
    """Dice nobody scripted are rolled, not refused: a running session's come from its committed
    seed (``campaign.fairdice``), as in play. Only for a test that checks those very dice: the
    fair-dice verification pages (the table's *Verify the log and the dice*, the audit's *Verify
    dice*) recompute every die of a finished session from its revealed seed, and a scripted face
    is not the one the seed gives."""
    _update_script(dice_file, lambda script: {**script, "real": True})


def take_refused(dice_file: Path) -> list[str]:
    """The dice refused so far (``["d6", ...]``), taken out: for a test that expects a refusal."""
    return _update_script(dice_file, lambda script: {**script, "refused": []}).get("refused", [])


def faces_for(system: str, state: dict, action: dict, wanted, sides: int = 6, most: int = 5) -> list[int]:
    """The fewest, smallest faces (each 1..``sides``) with which the engine decides an event whose
    payload satisfies ``wanted``: what to script for that outcome."""
    rules = get_system(system)
    for count in range(1, most + 1):
        for faces in itertools.product(range(1, sides + 1), repeat=count):
            dice = ScriptedDice(faces)
            try:
                events = rules.decide(state, action, dice)
            except (DiceExhausted, RuleError, ValueError):
                continue
            if not dice.remaining and wanted(events[0].payload):
                return list(faces)
    raise AssertionError(f"no {most} faces or fewer give {system} {action} the wanted outcome")


@pytest.fixture(scope="package")
def browser():
    """One Chromium for every browser test: each test opens contexts of its own (a ``Seat``), which it
    closes (:func:`_contexts_closed` closes any it left), so no cookie, storage or page outlives it."""
    # Playwright's sync API keeps an asyncio loop running in this thread, so Django takes every
    # ORM call here (the test's checks, the database emptied between tests) for async code.
    # They are plain synchronous calls between browser steps: allow them while the browser runs.
    previous = os.environ.get("DJANGO_ALLOW_ASYNC_UNSAFE")
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    try:
        with sync_playwright() as p:
            chromium = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
            yield chromium
            chromium.close()
    finally:
        if previous is None:
            os.environ.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
        else:
            os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = previous


@pytest.fixture(autouse=True)
def _contexts_closed(request):
    """A context a test left open is closed after it, with its pages: in the shared Chromium it would
    go on running (heartbeats, reconnects) through the tests after it."""
    yield
    if "browser" in request.fixturenames:
        for context in request.getfixturevalue("browser").contexts:
            context.close()


def logged_in_session(username: str) -> str:
    """The key of a session in which ``username`` is logged in, as Django's ``login`` stores it, signed
    with the test servers' secret key (tests/servers.py) so that the daphne reads it."""
    from importlib import import_module

    from django.conf import settings
    from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY, get_user_model
    from django.test import override_settings

    user = get_user_model().objects.get(username=username)
    with override_settings(SECRET_KEY=SERVER_SECRET_KEY):
        session = import_module(settings.SESSION_ENGINE).SessionStore()
        session.update({SESSION_KEY: str(user.pk), BACKEND_SESSION_KEY: settings.AUTHENTICATION_BACKENDS[0],
                        HASH_SESSION_KEY: user.get_session_auth_hash()})
        session.create()
    return session.session_key


def off_the_loop(fn, *args, **kwargs):
    """Run ``fn`` in a worker thread (no asyncio loop there), e.g. commands whose on-commit
    broadcast uses async_to_sync; the thread's database connection is closed afterwards."""
    from django.db import connections

    def run():
        try:
            return fn(*args, **kwargs)
        finally:
            connections.close_all()

    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(run).result()


class BrowserTable(Table):
    """The suite's personas (their passwords are ``PASSWORDS``; the server checks them with the
    suite's hasher, tests/server_settings.py), their commands run off Playwright's loop."""

    def create_character(self, user, name, sheet=None):
        return off_the_loop(super().create_character, user, name, sheet)

    def command(self, user, action, client_id=None, dice=None):
        return off_the_loop(super().command, user, action, client_id, dice)


@pytest.fixture
def table_of(transactional_db):
    """``table_of("wyrm")``: the personas at a campaign of that system, slug ``torn-road``.
    ``table_of("tote", signed=True, keyed=("gm",))``: one whose members sign (tests/conftest.py ``Table``)."""
    return lambda system, **options: off_the_loop(BrowserTable, system, **options)


class Seat:
    """One person at the table: a browser context, logged in through the form, on the table page."""

    def __init__(self, browser: Browser, base: str, username: str, viewport=None, timezone_id=None):
        self.base = base
        self.username = username
        self.context = browser.new_context(viewport=viewport or DESKTOP, reduced_motion="reduce",
                                           **({"timezone_id": timezone_id} if timezone_id else {}))
        self.page = self.context.new_page()
        self.offline = False  # go_offline() .. go_online()
        self._sockets_routed = False
        self._socket_handler = lambda ws: ws.connect_to_server()
        self.frames: list[str] = []  # every WebSocket frame the page received, as text
        self.errors: list[str] = []
        self.page.on("websocket", lambda ws: ws.on("framereceived", self._frame))
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.on("console", self._console)

    def _console(self, message):
        # The browser itself logs refused previews (4xx) and sockets that can't connect while
        # offline; those are expected. Anything else logged as an error is a bug.
        if message.type == "error" and not any(s in message.text for s in ("Failed to load resource", "WebSocket connection")):
            self.errors.append(message.text)

    def _frame(self, payload):
        self.frames.append(payload if isinstance(payload, str) else payload.decode())

    def login(self, slug: str = SLUG):
        """Logged in and live at the table: the session the login form would make, given as its cookie
        (the form is test_invite.py's), saving each seat the login page and its post."""
        self.context.add_cookies([{"name": "sessionid", "value": off_the_loop(logged_in_session, self.username),
                                   "url": self.base}])
        self.page.goto(f"{self.base}/campaigns/{slug}/")
        self.wait_live()
        return self

    def route_sockets(self, handler=None):
        """The page's one socket route, which tests put their own handlers behind: every new socket
        goes through ``handler(ws)`` (a Playwright WebSocketRoute; by default straight to the
        server), except while offline (:meth:`go_offline`), when it is refused."""
        if handler is not None:
            self._socket_handler = handler
        if not self._sockets_routed:
            def route(ws):
                if self.offline:
                    ws.close()
                else:
                    self._socket_handler(ws)

            self.page.route_web_socket(re.compile(r"/ws/campaigns/"), route)
            self._sockets_routed = True

    def tamper_sockets(self, from_page=None, from_server=None):
        """Every new socket's frames pass through ``from_page(frame, to_page)`` on their way to the
        server and ``from_server(frame, to_page)`` on their way back (``frame`` parsed; ``to_page`` sends
        text to the page): each returns the frame to pass on (a dict), or None to drop it."""
        def handler(ws):
            server = ws.connect_to_server()

            def passing(hook, onward):
                def on_message(message):
                    frame = hook(json.loads(message), ws.send) if hook else json.loads(message)
                    if frame is not None:
                        onward(json.dumps(frame))
                return on_message

            ws.on_message(passing(from_page, server.send))
            server.on_message(passing(from_server, ws.send))

        self.route_sockets(handler)

    def go_offline(self):
        """The network goes away, and the page's socket with it. Chromium's offline mode fails
        requests but does not always stop WebSockets (a loaded run once had the page back at once,
        never showing "offline"), so until :meth:`go_online` every new socket of the page is refused."""
        self.route_sockets()
        self.offline = True
        self.context.set_offline(True)
        self.page.evaluate("window.talekeeperTable.drop()")

    def go_online(self):
        """The network is back: the page hears "online" and reconnects at once."""
        self.offline = False
        self.context.set_offline(False)

    def wait_live(self):
        expect(self.page.locator("#conn")).to_have_attribute("data-state", "online", timeout=10000)

    def reconnect(self):
        """The page's socket drops as a network drops it, and the page is live again on a new one (through
        the socket route, once one is set): its presence at the table is back before this returns.
        Not :meth:`wait_live` after the drop: the page reads "Live" until its old socket's close completes,
        which a loaded server answers late, so the test would go on while the page has no socket (a GM's
        roll then found no witness online) or while its command goes over HTTP, past the route."""
        old = self.page.evaluate_handle("window.talekeeperTable.socket")
        self.page.evaluate("window.talekeeperTable.drop()")
        self.page.wait_for_function(
            "(old) => window.talekeeperTable.socket !== old && document.getElementById('conn').dataset.state === 'online'",
            arg=old, timeout=HANG * 1000)
        old.dispose()

    # --- looking at the page
    def event(self, seq: int):
        return self.page.locator(f"#seq-{seq}")

    def seqs(self) -> list[int]:
        return self.page.evaluate("window.talekeeperTable.seqs()")

    def last_seq(self) -> int:
        return self.page.evaluate("window.talekeeperTable.lastSeq")

    def event_frames(self) -> list[dict]:
        out = []
        for text in self.frames:
            frame = json.loads(text)
            if frame.get("type") == "event":
                out.append(frame["event"])
        return out

    def wait_for_frame(self, seq: int):
        """Wait until Python has seen the page's frame for event ``seq`` (Playwright hands frames
        over between calls, so the DOM can show an event before ``frames`` holds it)."""
        for _ in range(HANG * 40):  # HANG bounds a hang; a loaded machine may need seconds
            if any(e["seq"] == seq for e in self.event_frames()):
                return
            self.page.wait_for_timeout(25)  # lets Playwright deliver pending frame events
        raise AssertionError(f"{self.username}'s page never received a frame for seq {seq}")

    # --- doing things
    def tab(self, name: str):
        self.page.get_by_role("tab", name=name).click()

    def start(self, action_id: str):
        self.page.locator(f'#sheet-wrap button[data-action="{action_id}"]').click()
        expect(self.page.locator("#composer")).to_be_visible()
        return self.page.locator("#composer form")

    def odds(self) -> str:
        out = self.page.locator("#composer .odds-text")
        expect(out).to_contain_text("%")
        return out.inner_text()

    def submit(self, name: str | None = None):
        form = self.page.locator("#composer form")
        if name:
            form.get_by_role("button", name=name).click()
        else:
            form.locator("button[name=go]").click()
        expect(self.page.locator("#composer")).to_be_hidden()

    def roll(self, notation: str, visibility: str = "public", label: str = ""):
        page = self.page
        page.locator("#notation").fill(notation)
        page.locator("#roll-label").fill(label)
        page.locator("#visibility").select_option(visibility)
        page.locator("#roll-form button[type=submit]").click()

    def unlabelled(self) -> list[str]:
        """Visible form controls and buttons without an accessible name (should be none)."""
        return self.page.evaluate("""() => [...document.querySelectorAll("input, select, textarea, button")]
          .filter((el) => el.offsetParent !== null && el.type !== "hidden")
          .filter((el) => !(el.labels && el.labels.length) && !el.getAttribute("aria-label")
                          && !el.getAttribute("aria-labelledby") && !(el.tagName === "BUTTON" && el.textContent.trim()))
          .map((el) => el.outerHTML.slice(0, 120))""")

    def screenshot(self, name: str, full_page: bool = False, at: str | None = None):
        """Written to docs/screenshots/ on request: the page's top, or scrolled to the element ``at``."""
        if not WRITE_SCREENSHOTS:
            return
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        if at:
            self.page.locator(at).evaluate("(e) => e.scrollIntoView({ block: 'start' })")
        else:
            self.page.evaluate("window.scrollTo(0, 0)")
        self.page.screenshot(path=str(SCREENSHOTS / name), full_page=full_page)

    def close(self):
        self.context.close()


@pytest.fixture
def seats(browser, server):
    """``seats("gm", "alice")`` opens and logs in one browser context per person."""
    opened: list[Seat] = []

    def open_seats(*usernames, viewport=None, slug=SLUG):
        new = [Seat(browser, server, name, viewport) for name in usernames]
        opened.extend(new)
        for seat in new:
            seat.login(slug)
        return new if len(new) > 1 else new[0]

    yield open_seats
    errors = {seat.username: seat.errors for seat in opened if seat.errors}
    for seat in opened:
        seat.close()
    assert not errors, f"JavaScript errors on the page: {errors}"


def api_command(server: str, token: str, action: dict, client_id: str, slug: str = SLUG) -> dict:
    """A command through the real HTTP API (not the page), with a bearer token."""
    request = urllib.request.Request(
        f"{server}/api/campaigns/{slug}/commands",
        data=json.dumps({"id": client_id, "action": action}).encode(),
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
        method="POST",
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.loads(response.read())


def head_seq(table: Table) -> int:
    table.campaign.refresh_from_db()
    return table.campaign.last_seq
