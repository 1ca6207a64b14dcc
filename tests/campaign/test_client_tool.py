"""tools/talekeeper_client.py against a running server: a script registers its own key through the API
and sends signed commands, as docs/fair-dice.md ("Signed commands") says scripts do."""

from __future__ import annotations

import pytest

from campaign.models import ApiToken, Event
from tests.conftest import Table
from tools import talekeeper_client
from tools.talekeeper_client import Client, Refused, load_key

# Does not depend on the database engine (a script's signing, whichever database stores its commands): the
# SQLite pass leaves it out.
pytestmark = pytest.mark.one_database


@pytest.fixture
def signed_table(transactional_db):
    return Table(signed=True)


@pytest.fixture
def server(transactional_db):
    """A real server (daphne) on the test database: the client speaks HTTP to it as to any host."""
    from types import SimpleNamespace

    from tests.servers import daphne

    with daphne() as base:
        yield SimpleNamespace(url=f"http://{base}")


def client(server, table, user, key_file) -> Client:
    token = ApiToken.objects.create(user=user).key
    return Client(server.url, token, table.campaign.slug, load_key(str(key_file), create=True))


def test_a_script_registers_its_key_and_sends_signed_commands(server, signed_table, tmp_path):
    table = signed_table
    gm = client(server, table, table.gm, tmp_path / "gm.key")
    bot = client(server, table, table.bob, tmp_path / "bob.key")
    assert (tmp_path / "bob.key").stat().st_mode & 0o777 == 0o600
    added = bot.register("dice bot")
    assert added["type"] == "member_key_added" and added["payload"]["key"] == bot.public_key
    assert bot.register("dice bot")["added_seq"] == added["seq"]  # live already: nothing sent
    gm.register("gm's script")
    gm.send({"type": "start_session"})
    rolled = bot.send({"type": "roll", "notation": "2d6"})
    stored = Event.objects.get(campaign=table.campaign, seq=rolled["seq"]).payload
    assert stored["signature"]["key"] == bot.public_key and stored["signature"]["session"] == 1
    assert stored["action"] == {"type": "roll", "notation": "2d6"}


def test_a_stale_session_is_signed_again_under_a_new_id(server, signed_table, tmp_path, monkeypatch):
    table = signed_table
    bot = client(server, table, table.bob, tmp_path / "bob.key")
    bot.register("dice bot")
    table.command(table.gm, {"type": "start_session"})
    real = bot.keys
    monkeypatch.setattr(bot, "keys", lambda: {**real(), "session": None, "commitment": None})  # a page loaded before
    rolled = bot.send({"type": "roll", "notation": "1d20"})
    assert rolled["payload"]["signature"]["session"] == 1


def test_a_refusal_is_reported_and_a_server_that_stores_other_than_signed_is_named(server, signed_table,
                                                                                   tmp_path, capsys):
    table = signed_table
    key_file = tmp_path / "alice.key"
    token = ApiToken.objects.create(user=table.alice).key
    args = ["--server", server.url, "--token", token, "--campaign", table.campaign.slug, "--key-file",
            str(key_file)]
    with pytest.raises(SystemExit, match="run 'register' first"):
        talekeeper_client.main([*args, "send", '{"type": "roll", "notation": "1d6"}'])
    assert talekeeper_client.main([*args, "register", "--label", "alice's bot"]) == 0
    assert talekeeper_client.main([*args, "send", '{"type": "roll", "notation": "1d6"}']) == 0
    capsys.readouterr()
    assert talekeeper_client.main([*args, "send", '{"type": "start_session"}']) == 1  # the GM's to start
    assert "refused: 403 forbidden" in capsys.readouterr().err
    with pytest.raises(SystemExit, match="other than it was signed"):
        talekeeper_client._check_stored({"seq": 9, "payload": {"command_id": "x", "action": {"type": "roll",
                                         "notation": "1d6", "modifier": 20}, "signature": {}}},
                                        {"id": "x", "action": {"type": "roll", "notation": "1d6"}, "signature": {}})


def test_the_bytes_it_signs_are_the_servers():
    from campaign.member_keys import command_message

    for action in [{"type": "roll", "b": 1, "a": [1.5, 1e21, 1e-7, -0.0, "é\u2028\n"]},
                   {"\u00e9": None, "z": True, "€": 0.1 + 0.2, "x": 2**60}]:
        assert talekeeper_client.command_message(7, 3, "ab" * 32, "c-1", action) == \
            command_message(7, 3, "ab" * 32, "c-1", action)
    assert isinstance(Refused(400, {"code": "x", "message": "y"}), Exception)


def test_a_script_s_key_is_vouched_for_by_her_earlier_key(server, signed_table, tmp_path):
    """docs/fair-dice.md, "Vouching for a new key": ``endorse`` run with her earlier key's file vouches for the
    script's key, and verify_log's warning about it goes."""
    import io
    import json

    from cryptography.hazmat.primitives import serialization
    from django.core.management import call_command

    from tests.signing import b64url, private_key

    table = signed_table
    bot = client(server, table, table.bob, tmp_path / "bot.key")
    added = bot.register("dice bot")

    def warnings() -> str:
        err = io.StringIO()
        call_command("verify_log", table.campaign.slug, stdout=io.StringIO(), stderr=err)
        return err.getvalue()

    assert f"WARNING seq {added['seq']}: bob's key" in warnings()
    raw = private_key("bob").private_bytes(serialization.Encoding.Raw, serialization.PrivateFormat.Raw,
                                           serialization.NoEncryption())
    (tmp_path / "laptop.key").write_text(json.dumps({"algorithm": "ed25519", "private_key": b64url(raw)}))
    token = ApiToken.objects.create(user=table.bob).key
    args = ["--server", server.url, "--token", token, "--campaign", table.campaign.slug,
            "--key-file", str(tmp_path / "laptop.key")]
    assert talekeeper_client.main([*args, "endorse", bot.public_key]) == 0
    assert "WARNING" not in warnings()
