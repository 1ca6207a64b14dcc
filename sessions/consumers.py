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
first seq is beyond the next expected one, or a heartbeat that finds a newer
seq, makes the consumer read what it missed from the database.
"""

from __future__ import annotations

import asyncio
import json
import logging
from urllib.parse import parse_qs

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncWebsocketConsumer
from django.conf import settings

from campaign.actions import ActionError, access_campaign
from campaign.broadcast import group_name, user_group
from campaign.log import events_after
from campaign.ratelimit import SocketBucket
from campaign.outages import DATABASE_OUTAGE, UNKNOWN_MESSAGE, UnknownOutcome
from campaign.pipeline import MAX_SEQ, command_of, outage_error, parse_whole_number, read_json, submit
from campaign.visibility import Viewer, for_viewer

from . import models as presence
from .heads import log_head, reported_head

log = logging.getLogger(__name__)

CLOSE_UNAUTHENTICATED = 4401
CLOSE_NOT_FOUND = 4404
CLOSE_BAD_REQUEST = 4400
CLOSE_REVOKED = 4403  # logged out, deactivated, removed or given another role: reconnect (or not) with today's rights
CLOSE_TOO_MANY = 4429


class TableConsumer(AsyncWebsocketConsumer):
    campaign_id: int | None = None
    last_sent = 0
    heartbeat_task: asyncio.Task | None = None

    async def connect(self):
        await self.accept()
        self.send_lock = asyncio.Lock()
        self.bucket = SocketBucket()
        query = parse_qs(self.scope.get("query_string", b"").decode("latin1"))
        try:
            after = parse_whole_number((query.get("after") or ["0"])[0], "after", 0, MAX_SEQ, 0)
        except ActionError as e:
            await self._refuse(CLOSE_BAD_REQUEST, "bad_request", f"{e.message} (the last seq you saw)")
            return
        if self.scope.get("invalid_token"):
            await self._refuse(CLOSE_UNAUTHENTICATED, "unauthenticated", "That API token is not valid.")
            return
        try:
            campaign, membership = await database_sync_to_async(access_campaign)(
                self.scope.get("user"), self.scope["url_route"]["kwargs"]["slug"]
            )
        except ActionError as e:
            code = CLOSE_UNAUTHENTICATED if e.code == "unauthenticated" else CLOSE_NOT_FOUND
            await self._refuse(code, e.code, e.message)
            return
        if await database_sync_to_async(presence.sockets_of)(membership.user_id) >= settings.SOCKETS_PER_USER:
            await self._refuse(CLOSE_TOO_MANY, "too_many_sockets",
                               f"You already have {settings.SOCKETS_PER_USER} table connections open: close one first.")
            return
        self.campaign_id = campaign.id
        self.membership = membership
        await self._join_user_group()
        self.viewer = Viewer.of(membership)
        self.last_sent = after
        # Join the group before reading the backlog, or an event committed
        # in between would be in neither.
        try:
            await self.channel_layer.group_add(group_name(campaign.id), self.channel_name)
        except Exception as e:  # the layer is down: heartbeats keep this socket in sync
            log.warning("group_add failed, relying on heartbeats: %r", e)
        await self.catch_up()
        await self._send_json({
            "type": "ready",
            "seq": self.last_sent,
            "head": await database_sync_to_async(_head)(campaign.id, self.channel_name),
            "campaign": {"slug": campaign.slug, "name": campaign.name, "system": campaign.system},
            "you": {"username": membership.user.username, "role": membership.role},
        })
        self.heartbeat_task = asyncio.create_task(self.heartbeat())
        members = await database_sync_to_async(presence.arrive)(
            campaign.id, membership.user_id, membership.role, self.channel_name)
        await self._announce_presence(members)

    async def _announce_presence(self, members: list[dict]):
        try:
            await self.channel_layer.group_send(group_name(self.campaign_id),
                                                {"type": "table.presence", "members": members})
        except Exception as e:  # presence is a nicety; never fail a socket over it
            log.warning("presence broadcast failed: %r", e)

    async def table_presence(self, message):
        await self._send_json({"type": "presence", "members": message["members"]})

    async def _refuse(self, close_code: int, code: str, message: str):
        await self.send(text_data=json.dumps({"type": "error", "id": None, "code": code, "message": message}))
        await self.close(code=close_code)

    # --- rights that end while the socket is open ---------------------------------

    async def _join_user_group(self):
        """Listen for ``table.revoke`` (campaign.broadcast.close_sockets_on_commit)."""
        try:
            await self.channel_layer.group_add(user_group(self.membership.user_id), self.channel_name)
        except Exception as e:  # every command re-checks the membership anyway
            log.warning("user group_add failed: %r", e)

    async def table_revoke(self, message):
        if message.get("campaign") in (None, self.campaign_id):
            await self._revoked()

    async def _revoked(self):
        await self._error(None, "revoked", "Your access to this table changed: reload the page.")
        await self.close(code=CLOSE_REVOKED)

    async def disconnect(self, close_code):
        if self.heartbeat_task:
            self.heartbeat_task.cancel()
        if self.campaign_id is not None:
            try:
                await self.channel_layer.group_discard(user_group(self.membership.user_id), self.channel_name)
            except Exception as e:
                log.warning("user group discard failed: %r", e)
            members = await database_sync_to_async(presence.leave)(self.campaign_id, self.channel_name)
            await self._announce_presence(members)
            try:
                await self.channel_layer.group_discard(group_name(self.campaign_id), self.channel_name)
            except Exception as e:
                log.warning("group discard failed: %r", e)

    # --- sending the log -------------------------------------------------------

    async def _send_json(self, data: dict):
        await self.send(text_data=json.dumps(data))

    async def catch_up(self):
        """Send every stored event after the last one sent, in order."""
        async with self.send_lock:
            while True:
                page, revealed = await database_sync_to_async(events_after)(
                    self.campaign_id, self.last_sent, settings.EVENTS_PAGE_MAX
                )
                for data in page:
                    await self._send_event(data, revealed)
                if len(page) < settings.EVENTS_PAGE_MAX:
                    return

    async def _send_event(self, data: dict, revealed=frozenset()):
        # Caller holds send_lock. Anything at or below the last seq sent is a
        # duplicate (a doorbell for an event the backlog already carried).
        if data["seq"] != self.last_sent + 1:
            return
        await self._send_json({"type": "event", "event": for_viewer(data, self.viewer, revealed)})
        self.last_sent = data["seq"]

    async def table_events(self, message):
        """A doorbell from the channel layer, carrying freshly committed events."""
        events = message["events"]
        if not events or events[-1]["seq"] <= self.last_sent:
            return
        if events[0]["seq"] > self.last_sent + 1:
            await self.catch_up()  # we missed something: the database has it
            return
        async with self.send_lock:
            for data in events:
                if data["seq"] == self.last_sent + 1:
                    await self._send_event(data)

    async def heartbeat(self):
        """Every few seconds: catch up from the database, tell the client the head, and
        re-join this socket's groups.

        It survives every error, logging it and trying again on the next beat: a database
        outage (OperationalError, PoolTimeout) or a Redis restart must never end it, or the
        socket stays open, looks live and misses every later event (docs/operations.md).
        Re-joining each beat also puts the socket back into groups a restarted Redis lost,
        and keeps its membership younger than the layer's group expiry.
        """
        try:
            while True:
                await asyncio.sleep(settings.TABLE_HEARTBEAT_SECONDS)
                try:
                    head = await database_sync_to_async(_head)(self.campaign_id, self.channel_name)
                    if head["seq"] > self.last_sent:
                        await self.catch_up()
                    await self._send_json({"type": "heartbeat", "seq": head["seq"], "head": head})
                except Exception as e:
                    log.warning("heartbeat failed, trying again in %ss: %r", settings.TABLE_HEARTBEAT_SECONDS, e)
                for group in (group_name(self.campaign_id), user_group(self.membership.user_id)):
                    try:
                        await self.channel_layer.group_add(group, self.channel_name)
                    except Exception as e:  # Redis away: the heartbeat keeps us in sync anyway
                        log.warning("group refresh failed: %r", e)
        except asyncio.CancelledError:
            pass

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
            head = await database_sync_to_async(log_head)(self.campaign_id)
            await self._send_json({"type": "pong", "seq": self.last_sent, "head": head})
            return
        if kind == "head":
            await self._report_head(frame)
            return
        if kind != "command":
            await self._error(client_id, "bad_frame", "Unknown frame type: send {\"type\": \"command\", ...}.")
            return
        try:
            result, head = await database_sync_to_async(_command_and_head)(self.membership, command_of(frame))
        except ActionError as e:
            await self._error(client_id, e.code, e.message)
            if e.code == "not_member":
                await self._revoked()
            return
        except Exception as e:
            outage = outage_error(e)  # database_unavailable or outcome_unknown (campaign/outages.py)
            if outage is not None:
                log.warning("command %r: %s: %r", client_id, outage.code, e)
                await self._error(client_id, outage.code, outage.message)
                return
            log.exception("command failed")
            # Not "nothing was stored": we do not know where it failed. The client resends the same id.
            await self._error(client_id, "server_error", "Something went wrong on the server.")
            return
        await self._send_json({
            "type": "ack",
            "id": client_id,
            "seq": result.events[0].seq,
            "seqs": [e.seq for e in result.events],
            "replayed": result.replayed,
            "head": head,
        })

    async def _report_head(self, frame: dict):
        """A client's last verified head: stored with its presence, announced if it changed."""
        try:
            head = reported_head(frame)
        except ActionError as e:
            await self._error(None, e.code, e.message)
            return
        members = await database_sync_to_async(presence.report_head)(self.campaign_id, self.channel_name, head)
        if members is not None:
            await self._announce_presence(members)

    async def _error(self, client_id, code: str, message: str):
        await self._send_json({"type": "error", "id": client_id, "code": code, "message": message})


def _head(campaign_id: int, channel_name: str) -> dict:
    presence.still_here(channel_name)
    return log_head(campaign_id)


def _command_and_head(membership, body: dict):
    """Run a command through the pipeline (rate limit, then the command), then read the head
    its ack carries: one trip to the database thread."""
    result = submit(membership, body)
    try:
        return result, log_head(membership.campaign_id)
    except DATABASE_OUTAGE as e:  # stored, but unconfirmed: the client's resend gets the stored ack
        raise UnknownOutcome(UNKNOWN_MESSAGE) from e
