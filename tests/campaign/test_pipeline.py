"""The command pipeline, one for HTTP and the socket (campaign/pipeline.py)."""

import json

import pytest
from channels.db import database_sync_to_async
from django.test import AsyncClient

from campaign.actions import ActionError, Refused, Unauthenticated, rule_refusal
from campaign.pipeline import MAX_BYTES, check_size, http_status, parse_json, parse_whole_number, read_json
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
    assert http_status(Unauthenticated("That API token is not valid.")) == 401


def test_size_is_counted_in_bytes_on_both_transports():
    fits = "é" * (MAX_BYTES // 2)  # two bytes each: exactly the limit
    assert read_json(f'"{fits[:-1]}"', "frame") == fits[:-1]
    with pytest.raises(ActionError, match="Frames are limited") as refused:
        read_json(f'"{fits}"', "frame")  # under the limit in characters, over it in bytes
    assert refused.value.code == "too_large"
    with pytest.raises(ActionError, match="Requests are limited"):
        read_json(f'"{fits}"'.encode())


# --- the same bad command over HTTP and over the socket --------------------------------------------

ROLL = {"type": "roll", "notation": "2d6"}


def nested(depth: int) -> dict:
    action = {"type": "roll", "notation": "1d6", "label": []}
    inner = action["label"]
    for _ in range(depth):
        inner.append([])
        inner = inner[0]
    return action


# (what is wrong, the command (an envelope, or raw text), the code both transports answer, the HTTP status).
# ``{hero}``/``{rival}``: alice's character and bob's.
BAD_COMMANDS = [
    ("not JSON", '{"id": "x", "action": ', "bad_json", 400),
    ("too large", '{"id": "x", "action": {"type": "roll", "notation": "' + "9" * MAX_BYTES + '"}}', "too_large", 413),
    ("bad id", {"id": "", "action": ROLL}, "bad_id", 400),
    ("no action", {"id": "x"}, "invalid", 400),
    ("action without a type", {"id": "x", "action": {"notation": "2d6"}}, "invalid", 400),
    ("nested too deep", {"id": "x", "action": nested(20)}, "too_deep", 400),
    ("unknown visibility", {"id": "x", "action": {**ROLL, "visibility": "everyone"}}, "invalid", 400),
    ("unknown action", {"id": "x", "action": {"type": "dance"}}, "unknown_action", 400),
    ("bad notation", {"id": "x", "action": {"type": "roll", "notation": "2q6"}}, "bad_notation", 400),
    ("rules: malformed", {"id": "x", "action": {"type": "skill_test", "character": "{hero}", "skill": "Juggle",
                                                "target": 8}}, "invalid", 400),
    ("rules: no", {"id": "x", "action": {"type": "spend_resolve", "character": "{hero}", "totem": "Bear"}},
     "rules", 422),
    ("no such character", {"id": "x", "action": {**ROLL, "character": 10**9}}, "not_found", 404),
    ("someone else's character", {"id": "x", "action": {**ROLL, "character": "{rival}"}}, "forbidden", 403),
    ("GM only", {"id": "x", "action": {"type": "start_scene"}}, "forbidden", 403),
    ("no session for a seed", {"id": "x", "action": {"type": "add_seed", "seed": "lucky"}}, "refused", 422),
    ("id used for another action", {"id": "used", "action": {"type": "roll", "notation": "1d4"}}, "conflict", 409),
]


def filled(command, ids: dict):
    """The command with ``{hero}``/``{rival}`` replaced by the characters' ids."""
    if isinstance(command, str):
        return command
    text = json.dumps(command)
    for name, ident in ids.items():
        text = text.replace(f'"{{{name}}}"', str(ident))
    return json.loads(text)


@pytest.mark.django_db(transaction=True)
async def test_http_and_the_socket_answer_a_bad_command_alike(transactional_table, settings):
    """One pipeline: every kind of bad command gets the same code over both transports, and
    the status the one mapping gives it over HTTP; neither stores anything."""
    from tests.sessions.test_table_consumer import connect, head, receive, token_for, until_ready

    table = transactional_table

    def setup():
        hero = table.create_character(table.alice, "Hero", table.campaign.rules.example_sheet)
        rival = table.create_character(table.bob, "Rival", table.campaign.rules.example_sheet)
        table.command(table.alice, ROLL, client_id="used")
        return {"hero": hero.id, "rival": rival.id}

    ids = await database_sync_to_async(setup)()
    key = await token_for(table.alice)
    http = AsyncClient()
    socket = await connect(table, None, token=key)
    await until_ready(socket)
    before = await head(table)

    async def over_http(command) -> tuple[str, int]:
        body = command if isinstance(command, str) else json.dumps(command)
        res = await http.post("/api/campaigns/torn-road/commands", data=body, content_type="application/json",
                              headers={"Authorization": f"Bearer {key}"})
        return json.loads(res.content)["error"]["code"], res.status_code

    async def over_socket(command) -> str:
        frame = command if isinstance(command, str) else json.dumps({"type": "command", **command})
        await socket.send_to(text_data=frame)
        reply = await receive(socket)
        assert reply["type"] == "error", reply
        return reply["code"]

    try:
        answers = {}
        for what, command, code, status in BAD_COMMANDS:
            command = filled(command, ids)
            answers[what] = (await over_http(command), await over_socket(command))
        assert answers == {what: ((code, status), code) for what, _, code, status in BAD_COMMANDS}

        settings.RATE_LIMIT_USER_PER_MINUTE = 0  # every command over the limit, whatever the minute
        command = {"id": "y", "action": ROLL}
        assert (await over_http(command), await over_socket(command)) == (("rate_limited", 429), "rate_limited")
        assert await head(table) == before
    finally:
        await socket.disconnect()
