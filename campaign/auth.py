"""Who is asking: session login for browsers, bearer tokens for scripts.

``Authorization: Bearer <token>`` works on HTTP (``user_from_request``) and on the table's
WebSocket (sessions/auth.py, the transport's side, checks it with :func:`user_for_token`); tokens
come from ``manage.py create_token`` or the profile page. Nothing here knows Channels.
"""

from __future__ import annotations

import logging
from datetime import timedelta

from django.db import DatabaseError, transaction
from django.utils import timezone

from .models import ApiToken, token_digest
from .outages import database_away
from .ratelimit import check_failures, client_address, record_failure

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
