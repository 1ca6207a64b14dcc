"""What a member receives, for tests that compare or inspect it.

Commands run through ``do_command`` with scripted dice; their answer is built
the way the commands API builds it (every event through the one visibility
filter), so a test sees exactly what the member's client would.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from django.test import Client

from campaign.actions import ActionError, do_command
from campaign.eventlog import serialize_event
from campaign.pipeline import error_json, http_status
from campaign.visibility import Viewer, for_viewer
from rules import ScriptedDice


@dataclass
class Answer:
    status: int
    body: dict

    def json(self) -> dict:
        return self.body


def send(membership, client_id: str, action: dict, faces=(), sign: bool = False) -> Answer:
    """Run ``action`` as ``membership``'s member with dice ``faces``; the answer as the commands API gives it.
    ``sign``: signed by her key (tests/signing.py), for the session running now."""
    body = {"id": client_id, "action": action}
    if sign:
        from tests.signing import signed

        body = signed(membership.campaign, membership.user.username, body)
    try:
        result = do_command(membership, body, dice=ScriptedDice(list(faces)))
    except ActionError as e:
        return Answer(http_status(e), error_json(e))
    events = [for_viewer(serialize_event(e), Viewer.of(membership)) for e in result.events]
    return Answer(200 if result.replayed else 201, {**events[0], "events": events})


def command(table, user, action: dict, faces=()) -> Answer:
    """``send`` as ``user`` of the personas' ``table``, under a new command id."""
    return send(table.membership(user), uuid.uuid4().hex, action, faces)


def client_for(user) -> Client:
    """A test client signed in as ``user``."""
    client = Client()
    client.force_login(user)
    return client


def seen(user, seq: int, slug: str = "torn-road") -> dict:
    """Event ``seq`` as ``user`` receives it from the events API."""
    page = client_for(user).get(f"/api/campaigns/{slug}/events?after={seq - 1}&limit=1").json()
    return page["events"][0]
