"""What a write answers when it can't be done: an :class:`ActionError` carrying an HTTP status,
a code and a message written for a person."""

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
