"""What a request answers when it can't be done: an :class:`ActionError` carrying an HTTP status,
a code and a message written for a person.

The one error mapping, for HTTP and the socket alike (``campaign/pipeline.py`` delivers it): each
class's ``status`` is what HTTP answers (the socket sends the ``code``), and :func:`rule_refusal`
decides which rule errors are malformed input (400) and which the rules saying no (422)."""

from __future__ import annotations

from rules import RuleError


class ActionError(Exception):
    status = 400
    code = "invalid"

    def __init__(self, message: str, code: str | None = None):
        super().__init__(message)
        self.message = message
        if code:
            self.code = code

    def as_json(self) -> dict:
        return {"code": self.code, "message": self.message}


class Unauthenticated(ActionError):
    """No user, or a bearer token that is not valid."""

    status = 401
    code = "unauthenticated"


class NotFound(ActionError):
    status = 404
    code = "not_found"


class Forbidden(ActionError):
    status = 403
    code = "forbidden"


class Conflict(ActionError):
    status = 409
    code = "conflict"


class Refused(ActionError):
    """The rules refuse the action (spending Resolve you do not have, ...)."""

    status = 422
    code = "refused"


INPUT_ERRORS = frozenset({"invalid", "invalid_sheet", "unknown_action", "bad_notation"})


def rule_refusal(e: RuleError) -> ActionError:
    """What a client is told when the rules raise: malformed input is a 400, anything else is
    the rules saying no (422). The one mapping, for commands and previews alike."""
    return ActionError(e.message, e.code) if e.code in INPUT_ERRORS else Refused(e.message, e.code)
