"""Deleting an account (``manage.py delete_user``): the person goes, her events stay.

After deletion she can't log in, nothing personal is left on her row, tokens and sessions are
gone, pages and the API name her ``former member <id>``, and the log, its dice and a member's
export still verify: the chain covers her id, never her name (docs/operations.md, "Deleting an
account").
"""

from __future__ import annotations

import io
import json

import pytest
from django.contrib.auth import get_user_model
from django.contrib.sessions.models import Session
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client

from campaign.models import ApiToken, Event, Membership
from tests.campaign.served import client_for
from tests.campaign.test_import import export, run as run_command, wipe
from tests.campaign.test_standalone_verifier import an_evening, download, key_file, keep_receipt, run as verifier

User = get_user_model()


def delete(username: str) -> str:
    out = io.StringIO()
    call_command("delete_user", username, "--yes", stdout=out)
    return out.getvalue()


@pytest.fixture
def evening(table):
    table.hero = table.create_character(table.alice, "Wren", dict(table.campaign.rules.example_sheet))
    an_evening(table)
    table.alice.email, table.alice.first_name = "alice@example.org", "Alice"
    table.alice.save()
    return table


def test_a_deleted_user_cant_log_in_and_nothing_personal_is_left(evening):
    table = evening
    ApiToken.objects.create(user=table.alice)
    browser = Client()
    assert browser.post("/login/", {"username": "alice", "password": "pw-alice-123456"}).status_code == 302
    seq_before = Event.objects.filter(campaign=table.campaign).count()
    said = delete("alice")
    assert f"'former member {table.alice.pk}'" in said
    gone = User.objects.get(pk=table.alice.pk)
    assert (gone.username, gone.email, gone.first_name, gone.is_active, gone.has_usable_password(), gone.last_login) \
        == (f"former member {table.alice.pk}", "", "", False, False, None)
    assert not ApiToken.objects.filter(user=gone).exists()
    assert not [s for s in Session.objects.all() if s.get_decoded().get("_auth_user_id") == str(gone.pk)]
    assert browser.get("/profile/").status_code == 302  # her session ended
    for username in ("alice", gone.username):
        assert Client().post("/login/", {"username": username, "password": "pw-alice-123456"}).status_code == 200
    # The log is as it was: nothing appended, nothing changed.
    assert Event.objects.filter(campaign=table.campaign).count() == seq_before
    assert Membership.objects.filter(user=gone, campaign=table.campaign).exists()
    with pytest.raises(CommandError, match="No user called 'alice'"):
        delete("alice")
    assert "deleted already" in delete(gone.username)


def test_pages_and_the_api_show_the_pseudonym(evening):
    table = evening
    name = f"former member {table.alice.pk}"
    delete("alice")
    bob = client_for(table.bob)
    page = bob.get("/api/campaigns/torn-road/events?after=0&limit=500").json()
    hers = [e for e in page["events"] if e.get("actor_id") == table.alice.pk]
    assert hers and {e["actor"] for e in hers} == {name}
    sheet = bob.get(f"/api/campaigns/torn-road/characters/{table.hero.id}").json()
    assert sheet["owner"] == name
    listed = bob.get("/api/campaigns/torn-road/characters").json()["characters"]
    assert [c["owner"] for c in listed if c["id"] == table.hero.id] == [name]
    table_page = bob.get("/campaigns/torn-road/").content.decode()
    assert name in table_page
    settings_page = client_for(table.gm).get("/campaigns/torn-road/settings/").content.decode()
    assert name in settings_page and ">alice<" not in settings_page
    # The GM removes the former member as any other, by the name the page shows.
    table.command(table.gm, {"type": "remove_member", "username": name})
    assert not Membership.objects.filter(user_id=table.alice.pk, campaign=table.campaign).exists()


def test_the_log_the_dice_and_an_export_still_verify(evening, tmp_path):
    table = evening
    receipt = keep_receipt(table, table.bob, tmp_path)
    delete("alice")
    assert run_command("verify_log", "torn-road").startswith("OK")
    assert run_command("verify_dice", "torn-road", "--session", "1").startswith("OK")
    result = verifier(download(table, table.bob, tmp_path), "--receipt", receipt, "--key-file", key_file(tmp_path))
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.splitlines()[-1].startswith("OK ")


def test_the_operators_export_of_a_deleted_member_imports_again(evening, tmp_path):
    table = evening
    delete("alice")
    path, text = export("torn-road", tmp_path)
    header = json.loads(text.splitlines()[0])
    assert {"id": table.alice.pk, "username": f"former member {table.alice.pk}", "email": "", "first_name": "",
            "last_name": "", "is_active": False} .items() <= {k: v for row in header["users"] if row["id"] == table.alice.pk
                                                              for k, v in row.items()}.items()
    wipe()
    run_command("import_log", path)
    assert User.objects.get(pk=table.alice.pk).username == f"former member {table.alice.pk}"
    assert run_command("verify_log", "torn-road").startswith("OK")


def test_sign_up_can_never_take_a_pseudonym(db):
    res = Client().post("/signup/", {"username": "former member 1", "password1": "a long walk at dusk",
                                     "password2": "a long walk at dusk"})
    assert res.status_code == 200 and not User.objects.filter(username="former member 1").exists()


def test_the_last_gm_deleted_is_named_for_the_operator(evening):
    assert "Campaign torn-road has no GM who can log in now." in delete("gm")
