"""Who is asking: session login for browsers, bearer tokens for scripts.

``Authorization: Bearer <token>`` works on both HTTP (``user_from_request``)
and WebSocket (``BearerTokenMiddleware``, checked by ``socket_user``); tokens come from
``manage.py create_token`` or the profile page.
"""

from __future__ import annotations

import logging
from datetime import timedelta
from urllib.parse import urlparse

from channels.auth import AuthMiddleware, UserLazyObject, get_user
from channels.sessions import CookieMiddleware, SessionMiddleware
from channels.security.websocket import OriginValidator, WebsocketDenier
from django.conf import settings
from django.contrib.auth.models import AnonymousUser
from django.http.request import validate_host
from django.utils import timezone
from django.db import DatabaseError, transaction
from django.utils.functional import empty

from .models import ApiToken, token_digest
from .outages import database_away
from .ratelimit import RateLimited, check_failures, client_address, record_failure

log = logging.getLogger(__name__)
LAST_USE_PRECISION = timedelta(minutes=1)  # last use is written at most once a minute per token


class InvalidToken(Exception):
    pass


def user_for_token(key: str, address: str):
    """The active user a token belongs to; wrong tokens count against ``address``
    (:class:`RateLimited` for a wrong one once it guessed too often)."""
    # Looked up first: a valid token is never refused for the wrong ones sent from its address (a
    # shared NAT, a script with a stale token beside a good one); only guessing is throttled.
    token = ApiToken.objects.select_related("user").filter(digest=token_digest(key)).first()
    if token is None or not token.user.is_active:
        check_failures("token", address=address)
        record_failure("token", address=address)
        raise InvalidToken()
    now = timezone.now()
    if token.last_used_at is None or now - token.last_used_at > LAST_USE_PRECISION:
        note_last_use(token.pk, now)
    return token.user


def note_last_use(token_id: int, now) -> None:
    """Best-effort: a database that only reads (a standby after a failover) or is out of room must
    not refuse a read for the sake of this note. In a savepoint, so a failed write leaves the
    request's transaction usable; any other database error passes on."""
    try:
        with transaction.atomic():
            ApiToken.objects.filter(pk=token_id).update(last_used_at=now)
    except DatabaseError as e:
        if not database_away(e):
            raise
        log.warning("token last use not written: %r", e)


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
        return user_for_token(key, client_address(request.META))
    return request.user


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

    Synchronous (run it on a database thread). Raises :class:`InvalidToken` for
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
