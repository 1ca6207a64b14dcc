"""The baseline: a bare Channels relay on the same Redis, with no database.

``daphne bench.relay:application`` (REDIS_URL must be set). A socket at
``/relay/<table>/`` joins the group of that table; a client frame
``{"type": "command", "id": ..., "action": ...}`` is answered with an ``ack``
and fanned out with one ``group_send`` to every socket of the table as an
``event`` frame shaped and sized like a Talekeeper roll event. Nothing is
stored, nothing is looked up, no dice rules run: what is left is daphne,
Channels, channels-redis and Redis, i.e. the floor under Talekeeper's
roll-to-every-client latency on this machine.
"""

from __future__ import annotations

import json
import os
import random
import secrets
from datetime import datetime, timezone

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "bench.relay_settings")

import django  # noqa: E402

django.setup()

from channels.generic.http import AsyncHttpConsumer  # noqa: E402
from channels.generic.websocket import AsyncWebsocketConsumer  # noqa: E402
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from django.urls import path  # noqa: E402


def fake_roll_event(client_id: str, seq: int) -> dict:
    """A dict with the keys and about the size of a serialized 2d6 roll event."""
    faces = [random.randint(1, 6), random.randint(1, 6)]
    return {
        "seq": seq,
        "id": client_id,  # the relay has no seq of record: clients match on the command id
        "type": "roll",
        "version": 1,
        "payload": {
            "notation": "2d6",
            "terms": [{"text": "+2d6", "sign": 1, "sides": 6,
                       "dice": [{"face": f, "kept": True} for f in faces], "value": sum(faces)}],
            "total": sum(faces),
            "counts_successes": False,
        },
        "actor": "bench-player",
        "actor_id": 1,
        "character": None,
        "character_name": None,
        "session": None,
        "scene": None,
        "visibility": "public",
        "created_at": datetime.now(timezone.utc).isoformat(timespec="microseconds"),
        "prev_hash": secrets.token_hex(32),
        "hash": secrets.token_hex(32),
    }


class RelayConsumer(AsyncWebsocketConsumer):
    group = None
    count = 0

    async def connect(self):
        table = self.scope["url_route"]["kwargs"]["table"]
        self.group = f"relay-{table}"
        await self.accept()
        await self.channel_layer.group_add(self.group, self.channel_name)
        await self.send(text_data=json.dumps({"type": "ready", "seq": 0}))

    async def disconnect(self, close_code):
        if self.group:
            await self.channel_layer.group_discard(self.group, self.channel_name)

    async def receive(self, text_data=None, bytes_data=None):
        try:
            frame = json.loads(text_data if text_data is not None else bytes_data)
        except (ValueError, TypeError):
            await self.send(text_data=json.dumps({"type": "error", "id": None, "code": "bad_json", "message": ""}))
            return
        if not isinstance(frame, dict) or frame.get("type") != "command" or not isinstance(frame.get("id"), str):
            await self.send(text_data=json.dumps({"type": "error", "id": None, "code": "bad_frame", "message": ""}))
            return
        RelayConsumer.count += 1
        event = fake_roll_event(frame["id"], RelayConsumer.count)
        await self.channel_layer.group_send(self.group, {"type": "relay.event", "event": event})
        await self.send(text_data=json.dumps({"type": "ack", "id": frame["id"], "seq": event["seq"],
                                              "seqs": [event["seq"]], "replayed": False}))

    async def relay_event(self, message):
        await self.send(text_data=json.dumps({"type": "event", "event": message["event"]}))


class RelayCommandConsumer(AsyncHttpConsumer):
    """``POST /relay/<table>/commands``: the HTTP writers' floor. Reads the JSON body, does the
    same one ``group_send`` as a command frame, answers a JSON ack; no database."""

    async def handle(self, body):
        try:
            frame = json.loads(body)
            client_id = str(frame["id"])
        except (ValueError, TypeError, KeyError):
            await self.send_response(400, b'{"error": {"code": "bad_json"}}',
                                     headers=[(b"Content-Type", b"application/json")])
            return
        RelayConsumer.count += 1
        event = fake_roll_event(client_id, RelayConsumer.count)
        table = self.scope["url_route"]["kwargs"]["table"]
        await self.channel_layer.group_send(f"relay-{table}", {"type": "relay.event", "event": event})
        await self.send_response(201, json.dumps({"id": client_id, "seq": event["seq"], "seqs": [event["seq"]],
                                                  "replayed": False}).encode(),
                                 headers=[(b"Content-Type", b"application/json")])


application = ProtocolTypeRouter({
    "websocket": URLRouter([path("relay/<slug:table>/", RelayConsumer.as_asgi())]),
    "http": URLRouter([path("relay/<slug:table>/commands", RelayCommandConsumer.as_asgi())]),
})
