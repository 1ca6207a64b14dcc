"""``GET /api/openapi.json``: the OpenAPI 3 description of the HTTP API, and
``GET /api/systems/<name>``: one rule system's declared actions, events and sheet.

Both are public: they describe the API, not any campaign.

``docs/openapi.json`` is served as it is. Its hand-written part (paths,
envelopes, errors) is edited there; the part that comes from the rules'
declarations (``rules/declare.py``) is generated into it by
``python manage.py openapi --write`` (``make openapi``) and never edited by
hand: one schema per declared action (``Action.<system>.<type>``), the action
vocabulary listed on ``Action`` (``x-action-types``), the sheet of each
system (``Sheet.<system>``) and the command endpoint's 503 answers
(``Unavailable``, from campaign/outages.py). ``tests/campaign/test_declared.py`` fails when
the file and the declarations disagree.
"""

from __future__ import annotations

import copy
import json
from functools import lru_cache
from pathlib import Path

from django.http import HttpResponse, JsonResponse
from django.views.decorators.http import require_GET

from rules import SYSTEM_MODULES, get_system
from rules.declare import ActionSpec, system_json
from rules.witness import CONTRIBUTE

from .actions import GM_TABLE_ACTIONS, SCENE_ACTIONS
from .actions.encounters import ENCOUNTER_ACTIONS
from .actions.fights import FIGHT_ACTIONS
from .actions.keys import KEY_ACTIONS
from .outages import MESSAGES, RETRY_AFTER_SECONDS

SPEC_PATH = Path(__file__).resolve().parent.parent / "docs" / "openapi.json"
# Component names generated from the declarations; anything else under components is hand-written.
GENERATED_PREFIXES = ("Action.", "Sheet.")


@lru_cache(maxsize=1)
def _spec_bytes() -> bytes:
    return SPEC_PATH.read_bytes()


@require_GET
def spec(request):
    return HttpResponse(_spec_bytes(), content_type="application/json")


@lru_cache(maxsize=None)
def declared(name: str) -> dict:
    """A system's declarations as JSON (they never change while the process runs)."""
    return system_json(get_system(name))


@require_GET
def system(request, name):
    if name not in SYSTEM_MODULES:
        known = ", ".join(sorted(SYSTEM_MODULES))
        return JsonResponse({"error": {"code": "not_found",
                                       "message": f"There is no rule system '{name[:40]}'. Known: {known}."}}, status=404)
    return JsonResponse(declared(name))


# --- the generated part of docs/openapi.json ---------------------------------------------------


def table_vocabulary() -> dict:
    """The platform's own action types (not a rule system's), from the code that runs them."""
    return {"table": ["roll", "add_seed", "create_character", *ENCOUNTER_ACTIONS, *FIGHT_ACTIONS, "post_message",
                      *KEY_ACTIONS, CONTRIBUTE],
            "gm_only": sorted([*SCENE_ACTIONS, *GM_TABLE_ACTIONS, "apply_damage"])}


def generated(spec: dict) -> dict:
    """``spec`` with its generated part rebuilt from the declarations (a new dict)."""
    out = copy.deepcopy(spec)
    schemas = out["components"]["schemas"]
    for key in [k for k in schemas if k.startswith(GENERATED_PREFIXES)]:
        del schemas[key]
    systems = {}
    for name in SYSTEM_MODULES:
        rules = get_system(name)
        specs = {t: s for t, s in sorted(rules.actions.items()) if isinstance(s, ActionSpec)}
        systems[name] = {
            "actions": sorted(rules.actions),
            "gm_only": sorted(rules.gm_actions),
            "schemas": {t: f"#/components/schemas/Action.{name}.{t}" for t in specs},
        }
        for t, s in specs.items():
            schemas[f"Action.{name}.{t}"] = s.json_schema()
        if rules.sheet is not None:
            schemas[f"Sheet.{name}"] = {"title": f"{rules.title}: a character sheet", **rules.sheet.json_schema()}
    schemas["Action"]["x-action-types"] = {**table_vocabulary(), "systems": systems}
    out["components"]["responses"]["Unavailable"] = unavailable_response()
    out["paths"]["/api/campaigns/{slug}/commands"]["post"]["responses"]["503"] = {
        "$ref": "#/components/responses/Unavailable"}
    return out


def unavailable_response() -> dict:
    """The command endpoint's 503s, from the code and messages campaign/outages.py answers with."""
    return {
        "description": "The database could not be reached: `database_unavailable` (nothing was stored) or "
                       "`outcome_unknown` (the connection broke while the command was being stored: resend "
                       "the same `id` to learn whether it was). Retry after the `Retry-After` seconds.",
        "headers": {"Retry-After": {"schema": {"type": "integer", "example": RETRY_AFTER_SECONDS},
                                    "description": "Seconds to wait before trying again."}},
        "content": {"application/json": {
            "schema": {"$ref": "#/components/schemas/Error"},
            "examples": {code: {"value": {"error": {"code": code, "message": message}}}
                         for code, message in sorted(MESSAGES.items())},
        }},
    }


def write() -> bool:
    """Regenerate docs/openapi.json in place; True if it changed."""
    before = SPEC_PATH.read_text()
    after = json.dumps(generated(json.loads(before)), indent=2, ensure_ascii=False) + "\n"
    if after != before:
        SPEC_PATH.write_text(after)
    return after != before
