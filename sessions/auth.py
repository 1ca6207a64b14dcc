"""Who is on the table's socket: the handshake's bearer token or session login, and whether the
page that opened it is this server's (Channels' middleware, the transport's side of
campaign/auth.py, which checks the tokens).

``socket_stack`` and ``origin_validator`` wrap the socket routes in campaign/asgi.py;
``socket_user`` is read by the consumer once the handshake is accepted."""

from __future__ import annotations

from urllib.parse import urlparse

from channels.auth import AuthMiddleware, UserLazyObject, get_user
from channels.security.websocket import OriginValidator, WebsocketDenier
from channels.sessions import CookieMiddleware, SessionMiddleware
from django.conf import settings
from django.contrib.auth.models import AnonymousUser
from django.http.request import validate_host
from django.utils.functional import empty

from campaign.auth import bearer_key, user_for_token
from campaign.ratelimit import client_address


class BearerTokenMiddleware:
    """Notes a bearer token in ``scope["bearer_key"]``; :func:`socket_user` checks it after accept.

    Checking it here, before the handshake is accepted, queued every reconnect
    behind the database and daphne aborts handshakes not accepted within 5 s
    (a reconnect storm would collapse into retries)."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        headers = dict(scope.get("headers") or [])
        raw = headers.get(b"authorization")
        key = bearer_key(raw.decode("latin1")) if raw else None
        if key is not None:
            scope = dict(scope, bearer_key=key)
        return await self.app(scope, receive, send)


class LazySessionAuthMiddleware(AuthMiddleware):
    """Channels' ``AuthMiddleware`` without its database read before the consumer:
    ``scope["user"]`` stays unresolved until :func:`socket_user` (after accept)."""

    async def resolve_scope(self, scope):
        pass


def socket_stack(inner):
    """Cookies, session and the lazy logins for the table socket."""
    return CookieMiddleware(SessionMiddleware(LazySessionAuthMiddleware(BearerTokenMiddleware(inner))))


def socket_user(scope):
    """The user of a socket's handshake: its bearer token, else its session login.

    Synchronous (run it on a database thread). Raises ``campaign.auth.InvalidToken`` for
    a token that matches nobody and ``RateLimited`` for an address that guessed
    too often."""
    key = scope.get("bearer_key")
    if key is not None:
        return user_for_token(key, client_address(scope))
    user = scope.get("user")
    if isinstance(user, UserLazyObject):
        if user._wrapped is empty:
            # channels.auth.get_user without its own hop to the synchronous thread (this already runs on a
            # database thread): the hop bench/patches.py measures for dispatch, once per handshake.
            # ``.func`` is Channels' internal; pinned by tests/test_patched_internals.py.
            user._wrapped = get_user.func(scope)
        return user._wrapped
    return user if user is not None else AnonymousUser()


class BrowserOriginValidator(OriginValidator):
    """Refuse WebSockets from other sites' pages; allow clients with no Origin.

    A page's Origin must be this server's own origin, scheme, host and port, as
    Django's CSRF check wants it: ``<scheme>://<Host header>`` with the Host in
    ALLOWED_HOSTS (the scheme is https for wss, or behind a proxy that says so),
    or exactly one of CSRF_TRUSTED_ORIGINS. Browsers always send Origin, so a
    missing one means a script or bot (which must then authenticate with a
    token or a session cookie it holds itself).
    """

    def __init__(self, application):
        super().__init__(application, [])

    async def __call__(self, scope, receive, send):
        origin = None
        for name, value in scope.get("headers", []):
            if name == b"origin":
                origin = urlparse(value.decode("latin1"))
        if origin is None or origin_allowed(scope, origin):
            return await self.application(scope, receive, send)
        return await WebsocketDenier()(scope, receive, send)


def _own_origin(scope) -> str | None:
    headers = dict(scope.get("headers") or [])
    host = headers.get(b"host", b"").decode("latin1").lower()
    hostname = urlparse("//" + host).hostname if host else None
    if not hostname or not validate_host(hostname, _allowed_hosts()):
        return None
    secure = scope.get("scheme") == "wss"
    if settings.SECURE_PROXY_SSL_HEADER:
        secure = secure or headers.get(b"x-forwarded-proto", b"").decode("latin1").lower() == "https"
    return f"{'https' if secure else 'http'}://{host}"


def _allowed_hosts() -> list[str]:
    hosts = list(settings.ALLOWED_HOSTS)
    if settings.DEBUG and not hosts:
        hosts = ["localhost", "127.0.0.1", "[::1]"]
    return hosts


def origin_allowed(scope, parsed_origin) -> bool:
    """Scheme, host and port of ``parsed_origin`` are this server's own, or a trusted origin's."""
    checker = OriginValidator(None, list(settings.CSRF_TRUSTED_ORIGINS))
    if parsed_origin.scheme not in ("http", "https") or not parsed_origin.hostname:
        return False
    own = _own_origin(scope)
    if own is not None and checker.match_allowed_origin(parsed_origin, own):
        return True
    return checker.validate_origin(parsed_origin)


def origin_validator(app):
    return BrowserOriginValidator(app)
