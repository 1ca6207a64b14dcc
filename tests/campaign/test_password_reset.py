"""A forgotten password: reset by email when the server sends mail, by the operator otherwise.

Mail goes to Django's locmem backend (``mailoutbox``). A reset link works once, an address no
account has gets the same answer as one that has, requests are limited per client address and
per email address, and a new password set by any path revokes the user's API tokens (its sockets
close through the same path: tests/sessions/test_socket_rights.py).
"""

from __future__ import annotations

import re

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.test import Client

from campaign.models import ApiToken

User = get_user_model()
NEW = "a lantern by the ford"


@pytest.fixture
def mail_on(settings):
    settings.PASSWORD_RESET_BY_EMAIL = True
    settings.DEFAULT_FROM_EMAIL = "talekeeper@example.org"


@pytest.fixture
def alice(table):
    table.alice.email = "alice@example.org"
    table.alice.save(update_fields=["email"])
    return table.alice


def ask(email: str, client: Client | None = None):
    return (client or Client()).post("/password/reset/", {"email": email})


def link_in(mail) -> str:
    found = re.search(r"http://testserver(/password/reset/[^/\s]+/[^/\s]+/)", mail.body)
    assert found, mail.body
    return found.group(1)


def set_password_by(link: str, password: str = NEW):
    """Follow the mail's link (Django moves the token into the session and redirects), then set
    the password; the last answer."""
    client = Client()
    res = client.get(link)
    if res.status_code != 302:
        return res
    return client.post(res["Location"], {"new_password1": password, "new_password2": password})


def test_the_login_page_offers_a_reset_only_when_the_server_sends_mail(db, settings):
    settings.PASSWORD_RESET_BY_EMAIL = False
    assert "Forgot your password?" not in Client().get("/login/").content.decode()
    settings.PASSWORD_RESET_BY_EMAIL = True
    assert "Forgot your password?" in Client().get("/login/").content.decode()


def test_without_mail_the_reset_page_names_the_operators_command_and_sends_nothing(alice, settings, mailoutbox):
    settings.PASSWORD_RESET_BY_EMAIL = False
    page = Client().get("/password/reset/")
    assert page.status_code == 200 and "changepassword" in page.content.decode()
    res = ask("alice@example.org")
    assert res.status_code == 200 and "changepassword" in res.content.decode() and mailoutbox == []
    assert "email" not in Client().get("/signup/").content.decode().lower()


def test_a_reset_mail_is_sent_and_its_link_sets_a_new_password_once(alice, mail_on, mailoutbox):
    res = ask("Alice@Example.org")
    assert res.status_code == 302 and res["Location"] == "/password/reset/done/"
    assert len(mailoutbox) == 1
    mail = mailoutbox[0]
    assert mail.to == ["alice@example.org"] and mail.from_email == "talekeeper@example.org"
    assert "alice" in mail.subject and "alice" in mail.body
    link = link_in(mail)
    done = set_password_by(link)
    assert done.status_code == 302 and done["Location"] == "/password/reset/complete/"
    assert Client().post("/login/", {"username": "alice", "password": NEW}).status_code == 302
    again = set_password_by(link, "a second lantern by the ford")
    assert again.status_code == 200 and "This link does not work" in again.content.decode()
    alice.refresh_from_db()
    assert alice.check_password(NEW)


def test_an_address_no_account_has_gets_the_same_answer_and_no_mail(alice, mail_on, mailoutbox):
    known, unknown = ask("alice@example.org"), ask("nobody@example.org")
    assert (unknown.status_code, unknown["Location"]) == (known.status_code, known["Location"])
    assert [m.to for m in mailoutbox] == [["alice@example.org"]]
    assert Client().get(unknown["Location"]).content == Client().get(known["Location"]).content


def test_reset_requests_are_limited_per_client_address(alice, mail_on, mailoutbox, settings):
    settings.LOGIN_FAILURES_PER_5_MINUTES = 3
    for n in range(3):
        assert ask(f"someone{n}@example.org").status_code == 302
    refused = ask("alice@example.org")
    assert refused.status_code == 200 and "Too many failed attempts" in refused.content.decode()
    assert mailoutbox == []
    # Elsewhere, alice asks for her own.
    assert ask("alice@example.org", Client(REMOTE_ADDR="10.0.0.9")).status_code == 302 and len(mailoutbox) == 1


def test_reset_mails_to_one_address_are_limited_whoever_asks(alice, mail_on, mailoutbox, settings):
    settings.PASSWORD_RESET_MAILS_PER_HOUR = 2
    for n in range(2):
        assert ask("alice@example.org", Client(REMOTE_ADDR=f"203.0.113.{n}")).status_code == 302
    for email in ("alice@example.org", "nobody@example.org"):  # the same refusal, known or not
        for n in range(3):
            ask(email, Client(REMOTE_ADDR=f"198.51.100.{n}"))
        refused = ask(email, Client(REMOTE_ADDR="198.51.100.99"))
        assert "Too many failed attempts" in refused.content.decode()
    assert len(mailoutbox) == 2


def test_a_reset_revokes_the_users_tokens_and_ends_her_other_sessions(alice, mail_on, mailoutbox):
    ApiToken.objects.create(user=alice)
    elsewhere = Client()
    elsewhere.force_login(alice)
    ask("alice@example.org")
    set_password_by(link_in(mailoutbox[0]))
    assert not ApiToken.objects.filter(user=alice).exists()
    assert elsewhere.get("/profile/").status_code == 302  # to the login


def test_the_operators_changepassword_revokes_tokens_too(alice, monkeypatch):
    ApiToken.objects.create(user=alice)
    monkeypatch.setattr("getpass.getpass", lambda prompt="": NEW)
    call_command("changepassword", "alice")
    alice.refresh_from_db()
    assert alice.check_password(NEW) and not ApiToken.objects.filter(user=alice).exists()


def test_a_password_rehashed_at_login_revokes_nothing(alice, settings):
    """Django stores a password again under a new hasher when one logs in with it: the same
    password, so her tokens stay."""
    ApiToken.objects.create(user=alice)
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.PBKDF2SHA1PasswordHasher",
                                 "django.contrib.auth.hashers.MD5PasswordHasher"]
    assert Client().post("/login/", {"username": "alice", "password": "pw-alice-123456"}).status_code == 302
    alice.refresh_from_db()
    assert alice.password.startswith("pbkdf2_sha1$") and ApiToken.objects.filter(user=alice).exists()


def test_signup_takes_an_optional_email_when_the_server_sends_mail(db, mail_on):
    form = {"username": "newcomer", "password1": "a long walk at dusk", "password2": "a long walk at dusk"}
    assert Client().post("/signup/", {**form, "email": "New@Example.ORG"}).status_code == 302
    assert User.objects.get(username="newcomer").email == "New@example.org"
    assert Client().post("/signup/", {**form, "username": "quiet"}).status_code == 302
    assert User.objects.get(username="quiet").email == ""
    bad = Client().post("/signup/", {**form, "username": "typo", "email": "not-an-address"})
    assert bad.status_code == 200 and not User.objects.filter(username="typo").exists()


def test_the_profile_changes_the_email_with_the_current_password_only(alice, mail_on):
    client = Client()
    client.force_login(alice)
    assert "alice@example.org" in client.get("/profile/").content.decode()
    wrong = client.post("/profile/", {"do": "email", "email": "mallory@example.org", "password": "guess"})
    assert wrong.status_code == 200 and "incorrectly" in wrong.content.decode()
    alice.refresh_from_db()
    assert alice.email == "alice@example.org"
    ok = client.post("/profile/", {"do": "email", "email": "alice@example.net", "password": "pw-alice-123456"})
    assert ok.status_code == 302
    alice.refresh_from_db()
    assert alice.email == "alice@example.net"
