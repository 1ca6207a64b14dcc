"""The command envelope read once for HTTP and the socket (campaign/pipeline.py)."""

import pytest

from campaign.actions import ActionError, Refused, rule_refusal
from campaign.pipeline import MAX_BYTES, check_size, http_status, parse_json, parse_whole_number
from rules import RuleError


@pytest.mark.parametrize("text, expected", [(None, 7), ("", 7), ("0", 0), ("42", 42), ("100", 100)])
def test_whole_numbers_in_ascii_digits_are_read(text, expected):
    assert parse_whole_number(text, "after", 0, 100, 7) == expected


@pytest.mark.parametrize("text", ["-1", "+1", "1.5", "0x1", " 1", "²", "\u0663", "101", "9" * 19, "9" * 5000])
def test_anything_else_is_a_clear_refusal(text):
    with pytest.raises(ActionError, match="'after' must be a whole number from 0 to 100"):
        parse_whole_number(text, "after", 0, 100, 7)


def test_one_size_limit_names_what_it_limits():
    check_size(MAX_BYTES)
    with pytest.raises(ActionError, match="Frames are limited to 64 KB") as refused:
        check_size(MAX_BYTES + 1, "Frames")
    assert (refused.value.code, http_status(refused.value)) == ("too_large", 413)


@pytest.mark.parametrize("raw, message", [(b"{", "not valid JSON"), (b"\xff", "not valid JSON"),
                                          ("[" * 100_000 + "]" * 100_000, "nested too deeply")])
def test_bad_json_is_a_bad_json_error(raw, message):
    with pytest.raises(ActionError, match=message) as refused:
        parse_json(raw)
    assert refused.value.code == "bad_json"


@pytest.mark.parametrize("code, status", [("invalid", 400), ("invalid_sheet", 400), ("unknown_action", 400),
                                          ("bad_notation", 400), ("no_resolve", 422)])
def test_rule_errors_map_to_one_status_for_commands_and_previews(code, status):
    error = rule_refusal(RuleError("no", code))
    assert (error.code, http_status(error)) == (code, status)
    assert isinstance(error, Refused) == (status == 422)


def test_a_bad_token_is_a_401():
    assert http_status(ActionError("That API token is not valid.", "unauthenticated")) == 401
