"""The pages' forms that send commands, signed by the member's browser like the table's commands.

The settings page and the advancement page's award form build their commands on the server from the
form's fields. A member's command must carry her signature (docs/fair-dice.md, "Signed commands"), and
only her browser holds her key, so such a form is sent in two steps by ``static/talekeeper/signed-form.js``:

1. the page posts the form's fields with ``_prepare=1``: the view builds the commands exactly as it would
   send them and answers them as JSON (:func:`prepared`), storing nothing;
2. the page signs each one and posts the form again with ``_signed``, the list of ``{id, action,
   signature}`` it signed: the view builds the commands again from the same fields and sends each with
   the signature given for exactly that action (:func:`envelope`). The server never signs: a command
   the page did not sign as built goes unsigned, and the pipeline refuses it (``unsigned``) where
   signatures are required.
"""

from __future__ import annotations

import json
import uuid

from django.http import JsonResponse

from .canonical import jcs
from .fairdice import current_commitment
from .models import Campaign

# Whether the pages sign what they send (the table, the verification page, these forms), in a campaign
# whose members sign (``Campaign.signed_from``); in one whose members do not, no page signs.
PAGES_SIGN = True

PREPARE = "_prepare"
SIGNED = "_signed"


def pages_sign(campaign: Campaign) -> bool:
    """Whether a page of ``campaign`` signs the commands it sends."""
    return PAGES_SIGN and campaign.signed_from is not None


def form_data(request, campaign: Campaign) -> dict:
    """What ``signed-form.js`` reads from the page (``templates/_signed_form.html``)."""
    return {"slug": campaign.slug, "username": request.user.username, "signing": pages_sign(campaign)}


def preparing(request) -> bool:
    return request.POST.get(PREPARE) == "1"


def prepared(campaign: Campaign, commands: list[dict]) -> JsonResponse:
    """The commands a form would send now (``[{"id", "action"}]``), and the session and commitment to sign them under."""
    return JsonResponse({"campaign": campaign.id, "session": campaign.current_session or None,
                         "commitment": current_commitment(campaign), "commands": commands})


def _signed(request) -> list[dict]:
    try:
        signed = json.loads(request.POST.get(SIGNED) or "[]")
    except ValueError:
        return []
    return [s for s in signed if isinstance(s, dict) and isinstance(s.get("id"), str) and isinstance(s.get("signature"), dict)] \
        if isinstance(signed, list) else []


def envelope(request, action: dict, command_id: str | None = None) -> dict:
    """The command to send: ``action`` under ``command_id`` with the signature the page posted for exactly
    that action (and id). ``command_id`` None: the id the page signed it under (a form whose id is drawn
    when it is prepared), or a new one when the page signed nothing."""
    wanted = jcs(action)
    for signed in _signed(request):
        if (command_id is None or signed["id"] == command_id) and _canonical(signed.get("action")) == wanted:
            return {"id": signed["id"], "action": action, "signature": signed["signature"]}
    return {"id": command_id or new_id(), "action": action}


def new_id() -> str:
    return f"form-{uuid.uuid4().hex}"


def _canonical(value) -> bytes | None:
    try:
        return jcs(value)
    except (TypeError, ValueError):
        return None
