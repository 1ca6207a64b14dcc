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
system (``Sheet.<system>``), one schema per declared event (``Event.platform.<type>``,
``Event.<system>.<type>``, ``Event.common.<type>`` for rules/common.py's: its names, its payload's keys and types, its sentence) with each
system's ``oneOf`` of them by ``type`` (``Event.<system>``) and ``Event.logged``, what the event
feed, the command result and the export list, and the command endpoint's 503 answers
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
from rules.declare import ActionSpec, EventSpec, system_json
from rules.replay import RECORD_KEYS

from .actions import MAX_ACTION_DEPTH, PLATFORM_ACTIONS
from .outages import MESSAGES, RETRY_AFTER_SECONDS
from .platform_events import PLATFORM_EVENTS

SPEC_PATH = Path(__file__).resolve().parent.parent / "docs" / "openapi.json"
# Component names generated from the declarations; anything else under components is hand-written.
GENERATED_PREFIXES = ("Action.", "Sheet.", "Event.")


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
    schemas.update(event_schemas())
    logged = {"$ref": "#/components/schemas/Event.logged"}
    schemas["EventsPage"]["properties"]["events"]["items"] = logged
    schemas["CommandResult"]["allOf"][1]["properties"]["events"]["items"] = logged
    export = out["paths"]["/api/campaigns/{slug}/export.jsonl"]["get"]["responses"]["200"]["content"]
    export["application/x-ndjson"]["x-line-schema"] = logged
    out["components"]["responses"]["Unavailable"] = unavailable_response()
    out["paths"]["/api/campaigns/{slug}/commands"]["post"]["responses"]["503"] = {
        "$ref": "#/components/responses/Unavailable"}
    return out


# The JSON Schema of each type an event's payload declares (rules.declare.PAYLOAD_TYPES).
PAYLOAD_SCHEMAS = {"int": {"type": "integer"}, "num": {"type": "number"}, "str": {"type": "string"},
                   "bool": {"type": "boolean"}, "list": {"type": "array"}, "dict": {"type": "object"}, "any": {}}


def payload_schema(spec: EventSpec) -> dict:
    """An event's declared payload as a JSON Schema: its keys and their types, each required unless
    declared ``"type?"`` (then it may be null too), and what the platform records beside a decision
    (``RECORD_KEYS``); no other key. (Every event the code records declares its payload; a made-up one
    in a test may not.)"""
    if spec.payload is None:
        return {"type": "object"}
    properties, required = {}, []
    for key, kind in spec.payload.items():
        optional, kind = kind.endswith("?"), kind.rstrip("?")
        properties[key] = {**PAYLOAD_SCHEMAS[kind], **({"nullable": True} if optional and kind != "any" else {})}
        if not optional:
            required.append(key)
    properties.update({key: {} for key in sorted(RECORD_KEYS - set(properties))})
    return {"type": "object", **({"required": required} if required else {}), "properties": properties,
            "additionalProperties": False}


def event_schema(spec: EventSpec, where: str) -> dict:
    """One declared event as the log serves it: the ``Event`` envelope, its names (a row keeps the name
    it was stored under) and its payload."""
    names = [spec.type, *spec.formerly]
    described = f"“{spec.description}” (a template over the payload). " if spec.description else ""
    return {"title": f"{spec.type} ({where})",
            "description": f"{described}Payload version {spec.version}"
                           + (f"; stored under the former names {', '.join(spec.formerly)} too." if spec.formerly else "."),
            "allOf": [{"$ref": "#/components/schemas/Event"},
                      {"type": "object", "properties": {"type": {"type": "string", "enum": names},
                                                        "payload": payload_schema(spec)}}]}


SEALED_EVENT = {
    "title": "sealed",
    "description": "A hidden event the reader may not see (docs/fair-dice.md): its commitment, nothing of its body.",
    "allOf": [{"$ref": "#/components/schemas/Event"},
              {"type": "object", "properties": {
                  "type": {"type": "string", "enum": ["sealed"]},
                  "payload": {"type": "object", "required": ["hidden", "commitment"], "additionalProperties": False,
                              "properties": {"hidden": {"type": "boolean", "enum": [True]},
                                             "commitment": {"type": "string", "nullable": True}}}}}],
}


def event_schemas() -> dict:
    """``Event.platform.<type>``, ``Event.<system>.<type>``, ``Event.sealed``, each system's ``Event.<system>``
    (one of its events and the platform's, picked by ``type``) and ``Event.logged`` (an event of a
    campaign of any system)."""
    out = {f"Event.platform.{spec.type}": event_schema(spec, "the platform") for spec in PLATFORM_EVENTS}
    out["Event.sealed"] = SEALED_EVENT
    shared = {name: f"#/components/schemas/Event.platform.{spec.type}"
              for spec in PLATFORM_EVENTS for name in (spec.type, *spec.formerly)}
    shared["sealed"] = "#/components/schemas/Event.sealed"
    # Declared once for every system (rules/common.py): described once, as ``Event.common.<type>``.
    common = [spec for spec in get_system(next(iter(SYSTEM_MODULES))).events
              if all(get_system(name).events.specs.get(spec.type) is spec for name in SYSTEM_MODULES)]
    for spec in common:
        out[f"Event.common.{spec.type}"] = event_schema(spec, "every system")
    for name in SYSTEM_MODULES:
        rules = get_system(name)
        mapping = {}
        for spec in rules.events:
            ref = f"Event.common.{spec.type}" if spec in common else f"Event.{name}.{spec.type}"
            if spec not in common:
                out[ref] = event_schema(spec, rules.title)
            mapping.update({n: f"#/components/schemas/{ref}" for n in (spec.type, *spec.formerly)})
        mapping.update(shared)
        out[f"Event.{name}"] = {
            "description": f"An event of a {rules.title} campaign: one of its declared events or the platform's, "
                           "by `type`.",
            "oneOf": [{"$ref": ref} for ref in dict.fromkeys(mapping.values())],
            "discriminator": {"propertyName": "type", "mapping": mapping}}
    out["Event.logged"] = {
        "description": "An event of the log: `Event.<system>` of the campaign's system (each declared event's "
                       "payload is in `Event.<system>.<type>` and `Event.platform.<type>`).",
        "anyOf": [{"$ref": f"#/components/schemas/Event.{name}"} for name in SYSTEM_MODULES]}
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
