"""``GET /api/openapi.json``: the OpenAPI 3 description of the HTTP API, ``GET /api/systems/<name>``:
one rule system's declared actions, events and sheet, and ``GET /api/actions``: the platform's
declared actions (campaign/actions/declared.py).

Both are public: they describe the API, not any campaign.

``docs/openapi.json`` is served as it is. Its hand-written part (paths,
envelopes, errors) is edited there; the part that comes from the rules'
declarations (``rules/declare.py``) is generated into it by
``python manage.py openapi --write`` (``make openapi``) and never edited by
hand: one schema per declared action (``Action.platform.<type>`` for the
platform's, ``Action.<system>.<type>`` for a rule system's), the description of
``Action`` and the action vocabulary listed on it (``x-action-types``), the
systems ``/api/systems/{name}`` names, the sheet of each
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

from .actions import MAX_ACTION_DEPTH, PLATFORM_ACTIONS
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


def platform_json() -> dict:
    """The platform's declared actions, as the forms read them (the same JSON as a system's actions)."""
    return {"actions": {t: spec.as_json() for t, spec in sorted(PLATFORM_ACTIONS.items())},
            "gmActions": sorted(t for t, spec in PLATFORM_ACTIONS.items() if spec.gm_only)}


@require_GET
def platform(request):
    return JsonResponse(platform_json())


@require_GET
def system(request, name):
    if name not in SYSTEM_MODULES:
        known = ", ".join(sorted(SYSTEM_MODULES))
        return JsonResponse({"error": {"code": "not_found",
                                       "message": f"There is no rule system '{name[:40]}'. Known: {known}."}}, status=404)
    return JsonResponse(declared(name))


# --- the generated part of docs/openapi.json ---------------------------------------------------


ACTION_DESCRIPTION = (
    "One action. `type` picks it; the other fields depend on the type. The platform's actions, the same in every "
    "system, are `Action.platform.<type>` (listed in `x-action-types.platform`; `gm_only` names the GM's); every "
    "other type belongs to the campaign's rule system, `Action.<system>.<type>` (`x-action-types.systems`, "
    "docs/rules.md), and needs a `character` id; in a contest it may name `vs_character`. Any action may carry "
    "`visibility`. A command is refused with `not_member` (403) once its sender was removed or deactivated. An "
    f"action may nest lists and objects at most {MAX_ACTION_DEPTH} levels deep (`too_deep`).")


def table_vocabulary() -> dict:
    """The platform's own action types (not a rule system's), from their declarations."""
    return {"table": [t for t, spec in PLATFORM_ACTIONS.items() if not spec.gm_only],
            "gm_only": sorted(t for t, spec in PLATFORM_ACTIONS.items() if spec.gm_only),
            "platform": {t: f"#/components/schemas/Action.platform.{t}" for t in sorted(PLATFORM_ACTIONS)}}


def generated(spec: dict) -> dict:
    """``spec`` with its generated part rebuilt from the declarations (a new dict)."""
    out = copy.deepcopy(spec)
    schemas = out["components"]["schemas"]
    for key in [k for k in schemas if k.startswith(GENERATED_PREFIXES)]:
        del schemas[key]
    for t, s in sorted(PLATFORM_ACTIONS.items()):
        schemas[f"Action.platform.{t}"] = s.json_schema()
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
    out["paths"]["/api/systems/{name}"]["get"]["parameters"][0]["schema"]["enum"] = list(SYSTEM_MODULES)
    schemas["Action"]["description"] = ACTION_DESCRIPTION
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
