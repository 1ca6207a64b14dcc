"""Who is asking: session login for browsers, bearer tokens for scripts.

``Authorization: Bearer <token>`` works on both HTTP (``user_from_request``)
and WebSocket (``BearerTokenMiddleware``); tokens come from
``manage.py create_token`` or the profile page.
"""

from __future__ import annotations

from channels.db import database_sync_to_async
from channels.security.websocket import OriginValidator
from django.conf import settings
from django.contrib.auth.models import AnonymousUser

from .models import ApiToken


class InvalidToken(Exception):
    pass


def user_for_token(key: str):
    token = ApiToken.objects.select_related("user").filter(key=key).first()
    if token is None or not token.user.is_active:
        raise InvalidToken()
    return token.user


def bearer_key(header_value: str | None) -> str | None:
    """The token of an ``Authorization: Bearer <token>`` header, or None."""
    if not header_value:
        return None
    scheme, _, key = header_value.partition(" ")
    if scheme.lower() != "bearer":
        return None
    return key.strip() or None


def user_from_request(request):
    """The request's user: a bearer token if one is sent, else the session login.

    Raises :class:`InvalidToken` for a token that matches nobody.
    """
    key = bearer_key(request.headers.get("Authorization"))
    if key is not None:
        return user_for_token(key)
    return request.user


class BearerTokenMiddleware:
    """Sets ``scope["user"]`` from a bearer token; marks a bad one."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        headers = dict(scope.get("headers") or [])
        raw = headers.get(b"authorization")
        key = bearer_key(raw.decode("latin1")) if raw else None
        if key is not None:
            scope = dict(scope)
            try:
                scope["user"] = await database_sync_to_async(user_for_token)(key)
            except InvalidToken:
                scope["user"] = AnonymousUser()
                scope["invalid_token"] = True
        return await self.app(scope, receive, send)


class BrowserOriginValidator(OriginValidator):
    """Refuse WebSockets from other sites' pages; allow clients with no Origin.

    Browsers always send Origin, so a missing one means a script or bot (which
    must then authenticate with a token or a session cookie it holds itself).
    """

    def valid_origin(self, parsed_origin):
        if parsed_origin is None:
            return True
        return self.validate_origin(parsed_origin)


def origin_validator(app):
    hosts = list(settings.ALLOWED_HOSTS)
    if settings.DEBUG and not hosts:
        hosts = ["localhost", "127.0.0.1", "[::1]"]
    return BrowserOriginValidator(app, hosts)
