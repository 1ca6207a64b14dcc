"""The live table: one WebSocket per member at ``/ws/campaigns/<slug>/table/?after=N``.

Protocol (docs/protocol.md has it whole):

* on connect the server sends every event after ``N`` in seq order, then
  ``{"type": "ready", "seq": <last sent>, "head": {"seq", "hash"}, ...}``, then
  live events as they commit; every event is sent once, in order, with no gap;
* ``{"type": "heartbeat", "seq": <newest seq>, "head": {...}}`` every few
  seconds, so an idle client can tell it is up to date;
* the client sends ``{"type": "command", "id": "...", "action": {...}}`` and
  gets ``{"type": "ack", "id": ..., "seq": ..., "head": {...}}`` or
  ``{"type": "error", "id": ..., "code": ..., "message": ...}``;
* the client reports the last head it verified with
  ``{"type": "head", "head": {"seq", "hash"}}``; presence frames carry each
  member's (sessions/heads.py).

The database is the log and the channel layer only a doorbell: a message whose
first seq is beyond the next expected one (and stays so for ``GAP_WAIT``: doorbells
of one table may ring out of order), or a heartbeat that finds a newer seq, makes
the consumer read what it missed from the database, with the sheets it changed.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import logging
import random
import weakref
from collections import OrderedDict
from urllib.parse import parse_qs

from channels.generic.websocket import AsyncWebsocketConsumer
from channels.consumer import get_handler_name
from django.conf import settings

from campaign.actions import ActionError, access_campaign
from campaign.auth import InvalidToken
from campaign.eventlog import events_after
from campaign.models import token_digest
from campaign import metrics
from campaign.logs import bind
from campaign.outages import READ_UNAVAILABLE_MESSAGE, database_away
from campaign.pipeline import (MAX_SEQ, busy_error, command_of, failed_behind, outage_error, parse_whole_number,
                               read_json, submit, submit_contributions)
from campaign.ratelimit import RateLimited, SocketBucket
from campaign.sheets import changed_by, changed_sheets, sheet_class
from campaign.visibility import Viewer, for_viewer, may_see, voided_for
from rules.witness import COMMIT, CONTRIBUTE

from . import presence
from .auth import socket_user
from .db import TurnTimeout, db, in_turn, shared, tick, together
from .heads import false_head_message, log_head, reported_head, stored_hash
from .transport import group_name, sit_down_here, stand_up_here, user_group

log = logging.getLogger(__name__)

CLOSE_UNAUTHENTICATED = 4401
CLOSE_NOT_FOUND = 4404
CLOSE_BAD_REQUEST = 4400
CLOSE_REVOKED = 4403  # logged out, deactivated, removed or given another role: reconnect (or not) with today's rights
CLOSE_TOO_MANY = 4429  # the page tries again with its backoff: a restart elsewhere may free a slot
# This process is stopping (SIGTERM: a restart or a scale-down): reconnect at once, and the proxy
# sends the page to another process. Sent after the socket left presence and the user's count.
CLOSE_RESTARTING = 4012
# How long a stopping socket may spend leaving presence and its groups before it closes anyway
# (Redis away): its entries then lapse by their deadline, as a killed process's do.
STOP_GRACE = 2.0
# "Try again later": the page reconnects with its backoff (not a 44xx refusal). Not 1013, the standard
# code: daphne refuses it from an application and closes with 1011 instead.
CLOSE_UNAVAILABLE = 4503


# How long a doorbell that came early waits for the one before it before the log is read (seconds).
GAP_WAIT = 0.3


# This process's sockets at a table, for ``stop_all`` when the process stops.
_seated: "weakref.WeakSet[TableConsumer]" = weakref.WeakSet()
metrics.count_sockets(lambda: len(_seated))  # read at each scrape, only when metrics are on


async def stop_all() -> None:
    """Every socket of this process leaves presence and closes with ``CLOSE_RESTARTING``: the process
    is stopping (campaign/asgi.py calls this on SIGTERM, before daphne drops the connections)."""
    await asyncio.gather(*(socket._stopping() for socket in list(_seated)), return_exceptions=True)


class TableConsumer(AsyncWebsocketConsumer):
    campaign_id: int | None = None
    last_sent = 0
    here: tuple[str, ...] = ()  # the groups this socket hears from memory (sessions.transport.sit_down_here)
    closing = False  # revoked or gone: nothing more is sent
    left = False  # out of presence and the groups (``_leave``, once)
    gap_task: asyncio.Task | None = None
    beat_task: asyncio.Task | None = None  # this socket's part of the current table beat (``_beat``)
    # Heads of this log this socket told its client (the last event sent, the last head stated): a
    # reported head that is one of them needs no read to be true (``_report_head``).
    sent_head: dict | None = None
    stated_head: dict | None = None

    async def dispatch(self, message):
        """Channels' dispatch without its ``aclose_old_connections`` before every handler: that is a hop
        to the one synchronous thread (which HTTP views share) for every doorbell of every socket. This
        consumer uses the database only through sessions.db, whose calls hand their connections back
        when they end, so there is nothing to close.

        Measured (``bench/patches.py --only dispatch``, Channels' and this one in alternating rounds of
        one run on the shared 2-core machine, load average about 19): a message reaches its handler in
        105 µs through Channels' (median; p90 2.5 ms, waiting for the thread) and 0.6 µs here. Channels'
        own is pinned by tests/test_patched_internals.py."""
        handler = getattr(self, get_handler_name(message), None)
        if handler is None:
            raise ValueError(f"No handler for message type {message['type']}")
        await handler(message)

    async def __call__(self, scope, receive, send):
        # However the socket ends (disconnect() is not called when daphne cancels an application
        # that outlived its client, or when connect raised), it leaves this process's list.
        try:
            await super().__call__(scope, receive, send)
        except asyncio.CancelledError:
            # daphne cancels every socket when the process stops (SIGTERM) and, later, one that
            # outlived its client: leave as disconnect() would, then close with "restarting".
            await self._stopping()
            raise
        finally:
            self._stand_up()
            # Messages for this socket's channel that arrive from now on would wait for ever in the
            # layer's memory (sessions/layers.py ReceiveBuffer).
            gone = getattr(self.channel_layer, "reader_gone", None)
            if gone is not None and getattr(self, "channel_name", None):
                gone(self.channel_name)

    async def _stopping(self) -> None:
        if self.campaign_id is None or self.left:
            return
        try:
            # Presence and the user's socket count first: the page's next socket, on another
            # process, must not be refused as one too many by this one's entry.
            await asyncio.wait_for(self._leave(), STOP_GRACE)
        except Exception as e:  # noqa: BLE001 (timeout or Redis away: the entries lapse by their deadline)
            log.warning("stopping socket left late: %r", e)
        try:
            await self.close(code=CLOSE_RESTARTING)
        except Exception:  # noqa: BLE001 (the client is already gone)
            pass

    def _stand_up(self) -> None:
        self.closing = True
        _seated.discard(self)
        if self.here:
            stand_up_here(self.here, self.channel_name)
            self.here = ()
        if self.campaign_id is not None:
            stop_beating(self)

    async def connect(self):
        # Accept first: daphne drops a handshake not accepted within 5 s, and a
        # reconnect storm must not turn slow reads into retries.
        await self.accept()
        # Every line this socket's task logs names it and its campaign (campaign/logs.py).
        bind(socket=self.channel_name.rsplit("!", 1)[-1][:12], campaign=self.scope["url_route"]["kwargs"].get("slug"))
        self.send_lock = asyncio.Lock()
        self.early: dict[int, dict] = {}  # first seq -> a doorbell that rang before the one it follows
        self.bucket = SocketBucket()
        query = parse_qs(self.scope.get("query_string", b"").decode("latin1"))
        try:
            after = parse_whole_number((query.get("after") or ["0"])[0], "after", 0, MAX_SEQ, 0)
        except ActionError as e:
            await self._refuse(CLOSE_BAD_REQUEST, "bad_request", f"{e.message} (the last seq you saw)")
            return
        try:
            await self._sit_down(after)
        except Exception as e:
            if not database_away(e):
                raise
            # Not a crash (1011 and a traceback): the page hears why and reconnects with its
            # backoff, as after any dropped connection.
            log.warning("socket connect: database_unavailable: %r", e)
            await self._refuse(CLOSE_UNAVAILABLE, "database_unavailable", READ_UNAVAILABLE_MESSAGE)

    async def _sit_down(self, after: int):
        """Who is asking, their presence and groups, the backlog, then ``ready``."""
        # Database round trip 1 of 2: who is asking, and their membership.
        try:
            campaign, membership = await db(_open)(self.scope, self.scope["url_route"]["kwargs"]["slug"])
        except ActionError as e:
            code = CLOSE_UNAUTHENTICATED if e.code == "unauthenticated" else CLOSE_NOT_FOUND
            await self._refuse(code, e.code, e.message)
            return
        try:
            allowed = await presence.store().arrive(campaign.id, self.channel_name, membership.user_id,
                                                    membership.user.username, membership.role, settings.SOCKETS_PER_USER)
        except Exception as e:  # Redis away: the table works without presence (and its cap) until it is back
            log.warning("presence arrive failed: %r", e)
            allowed = True
        if not allowed:
            await self._refuse(CLOSE_TOO_MANY, "too_many_sockets",
                               f"You already have {settings.SOCKETS_PER_USER} table connections open: close one first.")
            return
        self.campaign_id = campaign.id
        self.membership = membership
        bind(user=membership.user_id)
        _seated.add(self)
        self.viewer = Viewer.of(membership)
        self.last_sent = after
        # Join the groups before reading the backlog, or an event committed
        # in between would be in neither. Doorbells rung in this process come from
        # memory, and the channel layer leaves this socket out of them from here on.
        self.here = (group_name(campaign.id), user_group(membership.user_id))
        sit_down_here(self.here, self.channel_name, self.dispatch)
        await _join_groups(self.channel_layer, [self])  # the table's doorbells and the user's table.revoke
        # Round trip 2 of 2: the backlog and the head (shared with sockets of
        # this table asking for the same thing at once: a reconnect storm).
        # ``ready`` under the same lock: no doorbell's event goes out between the backlog and it.
        async with self.send_lock:
            head = await self._read_log(since=tick())
            self.stated_head = head
            await self._send_json({
                "type": "ready",
                "seq": self.last_sent,
                "head": head,
                "campaign": {"slug": campaign.slug, "name": campaign.name, "system": campaign.system},
                "you": {"username": membership.user.username, "role": membership.role},
            })
        beat_with(self)
        announce_presence(self.channel_layer, campaign.id)

    async def table_presence(self, message):
        _last_presence[self.campaign_id] = message["members"]
        await self._send_json({"type": "presence", "members": message["members"]})

    async def _refuse(self, close_code: int, code: str, message: str):
        metrics.error("socket", code)
        await self.send(text_data=json.dumps({"type": "error", "id": None, "code": code, "message": message}))
        await self.close(code=close_code)

    # --- rights that end while the socket is open ---------------------------------

    async def table_revoke(self, message):
        tokens = message.get("tokens")
        if tokens is not None and self.scope.get("bearer_key") is None:
            return  # revoked tokens: this socket was opened with a login, not a token
        if tokens is not None and token_digest(self.scope["bearer_key"]) not in tokens:
            return
        if message.get("campaign") in (None, self.campaign_id):
            await self._revoked()

    async def _revoked(self):
        self.closing = True  # before anything else: no event after this one, whatever rings next
        await self._error(None, "revoked", "Your access to this table changed: reload the page.")
        await self.close(code=CLOSE_REVOKED)

    async def disconnect(self, close_code):
        await self._leave()

    async def _leave(self) -> None:
        """Out of this process's list, the user's and table's groups, and presence (once)."""
        if self.left:
            return
        self.left = True
        for task in (self.gap_task, self.beat_task):
            if task:
                task.cancel()
        self._stand_up()
        if self.campaign_id is not None:
            try:
                await self.channel_layer.group_discard(user_group(self.membership.user_id), self.channel_name)
            except Exception as e:
                log.warning("user group discard failed: %r", e)
            try:
                await presence.store().leave(self.campaign_id, self.channel_name, self.membership.user_id)
            except Exception as e:  # the entry lapses by itself (presence.ttl)
                log.warning("presence leave failed: %r", e)
            announce_presence(self.channel_layer, self.campaign_id)
            try:
                await self.channel_layer.group_discard(group_name(self.campaign_id), self.channel_name)
            except Exception as e:
                log.warning("group discard failed: %r", e)

    # --- sending the log -------------------------------------------------------

    async def _send_json(self, data: dict):
        await self.send(text_data=json.dumps(data))

    async def catch_up(self, since: int | None = None) -> dict:
        """Send every stored event after the last one sent, in order; return the head read with them.

        Each page's last event carries the sheets the page changed, as this member
        may see them (read after the page), so the browser fetches none.
        Reads of the same page by sockets of this process share one database
        call if it started after ``since`` (this socket had joined its group by then)."""
        async with self.send_lock:
            return await self._read_log(since)

    async def _read_log(self, since: int | None = None) -> dict:
        # Caller holds send_lock.
        while True:
            since = tick() if since is None else since
            page, revealed, head, sheets, read = await shared(("backlog", self.campaign_id, self.last_sent), since,
                                                              _backlog, self.campaign_id, self.last_sent)
            since = None
            mine = self._sheets_for(page, sheets, revealed)
            for data in page:
                await self._send_event(data, revealed, (mine if data is page[-1] else []) if mine is not None
                                       else None, read)
            if len(page) < settings.EVENTS_PAGE_MAX:
                await self._ring_early()  # doorbells kept for later are due now, or stale
                return head

    async def _send_event(self, data: dict, revealed=frozenset(), sheets: list | None = None, read: int | None = None):
        # Caller holds send_lock. Anything at or below the last seq sent is a
        # duplicate (a doorbell for an event the backlog already carried).
        if data["seq"] != self.last_sent + 1 or self.closing:
            return
        await self.send(text_data=event_frame(data, self.viewer, revealed, sheets, read))
        self.last_sent = data["seq"]
        self.sent_head = {"seq": data["seq"], "hash": data["hash"]}

    async def table_events(self, message):
        """A doorbell from the channel layer, carrying freshly committed events (and the sheets they changed).

        Doorbells of one table may ring out of order: commits of one table on several
        threads or processes each ring after their own commit. One that is early (its
        first seq is beyond the next this socket needs) is kept; the missing one usually
        rings soon after, and then both are sent, in order, with their sheets. Only if
        the gap is still open after ``GAP_WAIT`` seconds (that doorbell was lost: a full
        channel, Redis away) is the log read (``_fill_gap``)."""
        events = message["events"]
        if self.closing:  # a doorbell that rang here as the socket left
            return
        async with self.send_lock:
            if not events or events[-1]["seq"] <= self.last_sent:
                return
            if events[0]["seq"] > self.last_sent + 1:
                self.early[events[0]["seq"]] = message
                if self.gap_task is None or self.gap_task.done():
                    self.gap_task = asyncio.create_task(self._fill_gap())
                return
            await self._ring(message)
            await self._ring_early()

    async def _ring(self, message: dict) -> None:
        # Caller holds send_lock.
        events = message["events"]
        sheets = self._sheets_for(events, message.get("sheets"))
        for data in events:
            if data["seq"] == self.last_sent + 1:
                last = data is events[-1]
                await self._send_event(data, sheets=(sheets if last else []) if sheets is not None else None)

    async def _ring_early(self) -> None:
        """Send the kept doorbells that are next now; forget those the log already carried. Caller holds send_lock."""
        while self.early:
            first = min(self.early)
            if first > self.last_sent + 1:
                return
            message = self.early.pop(first)
            if message["events"][-1]["seq"] > self.last_sent:
                await self._ring(message)

    async def _fill_gap(self) -> None:
        """A doorbell came early: give the missing one ``GAP_WAIT`` seconds, then read the log."""
        try:
            while self.early:
                await asyncio.sleep(GAP_WAIT)
                async with self.send_lock:
                    if self.early:
                        await self._read_log()
        except Exception as e:  # the next heartbeat reads the log (and sends what was kept)
            log.warning("catching up after a missed doorbell failed: %r", e)

    def _sheets_for(self, events: list[dict], sheets: dict | None,
                    revealed=frozenset()) -> list[tuple[int, str, dict]] | None:
        """``[(character, sheet class, sheet)]`` this viewer gets with ``events``; ``None`` if none were read.

        Only characters of events this viewer may see in full: a sheet sent
        with a sealed event would say whose it was."""
        if sheets is None:
            return None
        changed = changed_by([e for e in events if may_see(e, self.viewer, revealed)])
        wanted = sorted(int(c) for c in sheets if changed is None or int(c) in changed)
        picked = [(c, sheet_class(sheets[str(c)], self.viewer)) for c in wanted]
        return [(c, kind, sheets[str(c)][kind]) for c, kind in picked if kind is not None]

    async def beat(self, head: dict) -> None:
        """This socket's part of its table's heartbeat (``_beat``): catch up if the head moved, tell the client."""
        try:
            if head["seq"] > self.last_sent:
                await self.catch_up()
            self.stated_head = head
            await self._send_json({"type": "heartbeat", "seq": head["seq"], "head": head})
        except Exception as e:
            log.warning("heartbeat failed, trying again in %ss: %r", settings.TABLE_HEARTBEAT_SECONDS, e)

    # --- receiving commands ---------------------------------------------------

    async def receive(self, text_data=None, bytes_data=None):
        if self.campaign_id is None:
            return
        try:
            self.bucket.take()
        except ActionError as e:
            await self._error(None, e.code, e.message)
            return
        raw = text_data if text_data is not None else bytes_data
        try:
            frame = read_json(raw, "frame")
        except ActionError as e:
            await self._error(None, e.code, e.message)
            return
        if not isinstance(frame, dict):
            await self._error(None, "bad_frame", 'A frame must be a JSON object such as {"type": "command", ...}.')
            return
        kind = frame.get("type")
        client_id = frame.get("id") if isinstance(frame.get("id"), str) else None
        if kind == "ping":
            try:
                head = await shared(("head", self.campaign_id), 0, log_head, self.campaign_id)
            except Exception as e:
                if not database_away(e):
                    raise
                # The log can't move while its database is away: the last head this socket knew is
                # still the head (an idle page pings, and must not be dropped for asking).
                log.warning("ping: database_unavailable, answering the last known head: %r", e)
                head = max((h for h in (self.stated_head, self.sent_head) if h), key=lambda h: h["seq"])
            else:
                self.stated_head = head
            await self._send_json({"type": "pong", "seq": self.last_sent, "head": head})
            return
        if kind == "head":
            await self._report_head(frame)
            return
        if kind != "command":
            await self._error(client_id, "bad_frame", "Unknown frame type: send {\"type\": \"command\", ...}.")
            return
        envelope = command_of(frame)
        turn = {"behind": failed_behind, "patience": 2 * settings.DB_LOCK_TIMEOUT or None}
        try:
            # One thread at a time per table in this process (sessions/db.py): a table whose lock is
            # held keeps one of them, not one per socket. Witnesses' contributions that arrive while
            # they wait take one turn and one transaction together: a roll's witnesses answer its
            # pending event (and then its close) at once, all of them.
            if _contribution(envelope):
                result = await together(self.campaign_id, CONTRIBUTE, (self.membership, envelope),
                                        submit_contributions, **turn)
                head = result.head
            else:
                result, head = await in_turn(self.campaign_id, _command_and_head, self.membership, envelope, **turn)
        except TurnTimeout:
            busy = busy_error()
            await self._error(client_id, busy.code, busy.message)
            return
        except ActionError as e:
            await self._error(client_id, e.code, e.message)
            if e.code == "not_member":
                await self._revoked()
            return
        except Exception as e:
            outage = outage_error(e)  # database_unavailable, table_busy or outcome_unknown (campaign/outages.py)
            if outage is not None:
                log.warning("command %r: %s: %r", client_id, outage.code, e)
                await self._error(client_id, outage.code, outage.message)
                return
            log.exception("command failed")
            # Not "nothing was stored": we do not know where it failed. The client resends the same id.
            await self._error(client_id, "server_error", "Something went wrong on the server.")
            return
        self.stated_head = head
        await self._send_json({
            "type": "ack",
            "id": client_id,
            "seq": result.events[0].seq,
            "seqs": [e.seq for e in result.events],
            "replayed": result.replayed,
            "head": head,
        })

    async def _report_head(self, frame: dict):
        """A client's last verified head: checked against the log, stored with its presence, announced
        if it changed.

        Every other member's page compares it with its own log, so a false one (a member's script
        sending any hash) would tell them all "the server is showing you different logs". It is
        passed on only if this log has it: at once when it is a head this socket gave its client
        (nearly always: the table reports the head it just verified), else after reading the hash
        stored at its seq (one indexed read, on a database thread like every call of this
        consumer). A dishonest host loses nothing by the check: it runs the relay and can forge or
        drop any member's head anyway (docs/protocol.md, "Heads")."""
        try:
            head = reported_head(frame)
        except ActionError as e:
            await self._error(None, e.code, e.message)
            return
        if head not in (self.sent_head, self.stated_head):
            try:
                hash_ = await db(stored_hash)(self.campaign_id, head["seq"])
            except Exception as e:  # the database away: not passed on unchecked (presence is a nicety)
                log.warning("checking a reported head failed: %r", e)
                return
            if hash_ != head["hash"]:
                await self._error(None, "false_head", false_head_message(head, hash_))
                return
        try:
            changed = await presence.store().report_head(self.campaign_id, self.channel_name, head)
        except Exception as e:  # presence is a nicety; never fail a socket over it
            log.warning("presence head report failed: %r", e)
            return
        if changed:
            announce_presence(self.channel_layer, self.campaign_id)

    async def _error(self, client_id, code: str, message: str):
        metrics.error("socket", code)
        await self._send_json({"type": "error", "id": client_id, "code": code, "message": message})


def _open(scope, slug) -> tuple:
    """Who is asking and their membership (one trip to a database thread)."""
    try:
        user = socket_user(scope)
    except (InvalidToken, RateLimited):
        raise ActionError("That API token is not valid.", "unauthenticated") from None
    return access_campaign(user, slug)


_reads = itertools.count(1)


def _backlog(campaign_id: int, after: int) -> tuple[list[dict], set[int], dict, dict | None, int]:
    """A page of the events after ``after``, the head after it, the sheets the page changed (per sheet
    class, read after the page: campaign.sheets.changed_sheets) and a number naming this read
    (one trip to a database thread)."""
    page, revealed = events_after(campaign_id, after, settings.EVENTS_PAGE_MAX)
    head = log_head(campaign_id)
    return page, revealed, head, changed_sheets(campaign_id, page) if page else {}, next(_reads)


def _contribution(envelope: dict) -> bool:
    """Whether a command is a witness's ``witness_commit`` or ``witness_roll`` (stored together with the
    others that came with it)."""
    action = envelope.get("action")
    return isinstance(action, dict) and action.get("type") in (COMMIT, CONTRIBUTE)


def _command_and_head(membership, body: dict):
    """Run a command through the pipeline (rate limit, then the command) and give the head its
    ack carries, the log's head right after it (read under its lock): one trip to a database thread."""
    result = submit(membership, body)
    return result, result.head


# --- one frame per visibility class -----------------------------------------------
# Every socket of a process that may see an event the same way gets the same
# text: it is filtered and serialized once, not once per socket.

FRAMES_KEPT = 4096
_frames: OrderedDict = OrderedDict()


def event_frame(data: dict, viewer: Viewer, revealed=frozenset(), sheets: list | None = None,
                read: int | None = None) -> str:
    """The ``event`` frame ``viewer`` gets for ``data``, with the sheets the event changed for them.

    ``sheets`` is ``None`` when they are not known (reading them failed): the
    frame then has no ``sheets`` and the browser fetches what it needs. ``read``
    names the backlog read the sheets came from (``None``: the event's doorbell)."""
    whole = may_see(data, viewer, revealed)
    key = (data["hash"], data["seq"], whole, whole and voided_for(data, viewer, revealed),
           # One doorbell's sheets are fixed per class, and the event's hash names the doorbell; a
           # backlog read's sheets are its own (the same event may end another read, with newer sheets).
           None if sheets is None else tuple((c, kind) for c, kind, _ in sheets), read if sheets else None)
    text = _frames.get(key)
    if text is None:
        frame = {"type": "event", "event": for_viewer(data, viewer, revealed)}
        if sheets is not None:
            frame["sheets"] = [s for _, _, s in sheets]
        text = _frames[key] = json.dumps(frame)
        if len(_frames) > FRAMES_KEPT:
            _frames.popitem(last=False)
    return text


# --- heartbeats: one per process and campaign ------------------------------------
# Every few seconds the sockets of a table in this process are caught up and told the
# head, their presence is refreshed and they re-join their groups: one head read, one
# presence pipeline and one group pipeline for all of them, not five round trips per
# socket. Tables beat at jittered times, so tables opened together do not
# ask at once ever after.

_beats: dict[tuple, dict] = {}  # (event loop, campaign) -> {"sockets": set of consumers, "task"}


def beat_with(consumer: TableConsumer) -> None:
    key = (asyncio.get_running_loop(), consumer.campaign_id)
    state = _beats.get(key)
    if state is None or state["task"].done():
        state = _beats[key] = {"sockets": set(), "task": None}
        state["task"] = asyncio.create_task(_beat(consumer.channel_layer, consumer.campaign_id, state))
    state["sockets"].add(consumer)


def stop_beating(consumer: TableConsumer) -> None:
    key = (asyncio.get_running_loop(), consumer.campaign_id)
    state = _beats.get(key)
    if state is not None:
        state["sockets"].discard(consumer)
        if not state["sockets"]:
            state["task"].cancel()
            del _beats[key]


async def _beat(layer, campaign_id: int, state: dict) -> None:
    """The table's heartbeat in this process.

    It survives every error, logging it and trying again on the next beat: a database
    outage (OperationalError, PoolTimeout) or a Redis restart must never end it, or the
    sockets stay open, look live and miss every later event (docs/operations.md).
    Re-joining each beat also puts the sockets back into groups a restarted Redis lost,
    and keeps their memberships younger than the layer's group expiry."""
    try:
        while state["sockets"]:
            await asyncio.sleep(settings.TABLE_HEARTBEAT_SECONDS * random.uniform(0.8, 1.2))
            sockets = list(state["sockets"])
            try:
                head = await shared(("head", campaign_id), 0, log_head, campaign_id)
            except Exception as e:
                log.warning("heartbeat failed, trying again in %ss: %r", settings.TABLE_HEARTBEAT_SECONDS, e)
            else:
                # Each socket's part runs on its own: one whose catch-up hangs (its send lock held by a
                # read that does not end) must not stop the beat of every other socket of the table.
                # It only skips its own turns until that part ends.
                for s in sockets:
                    if s.beat_task is None or s.beat_task.done():
                        s.beat_task = asyncio.create_task(s.beat(head))
            # A socket that left while the head was read stays gone: refreshing it would bring its
            # presence back and keep its dead channel in the groups until they expire.
            sockets = [s for s in sockets if s in state["sockets"]]
            # Redis work of the beat, side by side: a frozen Redis costs one timeout per beat, not three.
            await asyncio.gather(_still_here(campaign_id, sockets), check_presence(layer, campaign_id),
                                 _join_groups(layer, sockets))
    except asyncio.CancelledError:
        pass


async def _still_here(campaign_id: int, sockets: list) -> None:
    try:
        await presence.store().still_here_many(campaign_id, [
            (s.channel_name, s.membership.user_id, s.membership.user.username, s.membership.role) for s in sockets])
    except Exception as e:  # Redis away: the entries come back with a later beat
        log.warning("presence refresh failed: %r", e)


async def _join_groups(layer, sockets: list) -> None:
    """Each socket into its table's group and its user's (campaign.publish.close_sockets_on_commit), in one
    round trip: when it sits down and on every heartbeat (the memberships expire unless refreshed)."""
    pairs = [(group, s.channel_name) for s in sockets
             for group in (group_name(s.campaign_id), user_group(s.membership.user_id))]
    try:
        if hasattr(layer, "group_add_many"):
            await layer.group_add_many(pairs)
        else:  # the in-memory layer: no round trips to save
            for group, channel in pairs:
                await layer.group_add(group, channel)
    except Exception as e:  # Redis away: the heartbeat keeps the sockets in sync (and joins them again); every
        # command re-checks the membership a revoke would end
        log.warning("joining the groups failed, relying on heartbeats: %r", e)


# --- presence announcements ------------------------------------------------------
# A change marks the campaign; one task per campaign and process sends the
# member list, and changes while it sends make it send once more: sockets that
# arrive together cost a frame or two each, not one per arrival (no N-squared).

_announcing: dict[tuple, dict] = {}  # (event loop, campaign) -> {"dirty", "task"}
_last_presence: dict[int, list] = {}  # the last member list this process sent or heard, per campaign
_checked: dict[int, float] = {}


def announce_presence(layer, campaign_id: int) -> None:
    state = _announcing.setdefault((asyncio.get_running_loop(), campaign_id), {"dirty": False, "task": None})
    state["dirty"] = True
    if state["task"] is None or state["task"].done():
        state["task"] = asyncio.create_task(_announce(layer, campaign_id, state))


async def _announce(layer, campaign_id: int, state: dict) -> None:
    while state["dirty"]:
        state["dirty"] = False
        try:
            members = await presence.store().members(campaign_id)
            _last_presence[campaign_id] = members
            await layer.group_send(group_name(campaign_id), {"type": "table.presence", "members": members})
        except Exception as e:  # presence is a nicety; never fail a socket over it
            log.warning("presence broadcast failed: %r", e)


async def check_presence(layer, campaign_id: int) -> None:
    """Once per heartbeat period and process: announce if the members changed unseen (a process died)."""
    loop = asyncio.get_running_loop()
    if loop.time() - _checked.get(campaign_id, float("-inf")) < settings.TABLE_HEARTBEAT_SECONDS:
        return
    _checked[campaign_id] = loop.time()
    try:
        members = await presence.store().members(campaign_id)
    except Exception as e:
        log.warning("presence check failed: %r", e)
        return
    if members != _last_presence.get(campaign_id):
        announce_presence(layer, campaign_id)
