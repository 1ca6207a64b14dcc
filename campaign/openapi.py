"""``GET /api/openapi.json``: the OpenAPI 3 description of the HTTP API.

The description lives in ``docs/openapi.json`` (edit it there); this view only
serves it. It is public: it describes the API, not any campaign.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from django.http import HttpResponse
from django.views.decorators.http import require_GET

SPEC_PATH = Path(__file__).resolve().parent.parent / "docs" / "openapi.json"


@lru_cache(maxsize=1)
def _spec_bytes() -> bytes:
    return SPEC_PATH.read_bytes()


@require_GET
def spec(request):
    return HttpResponse(_spec_bytes(), content_type="application/json")
