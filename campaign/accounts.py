"""Accounts: what a new password ends, an optional email address, and resetting a forgotten password.

A password set by any path (``/password/``, a reset link, ``manage.py changepassword``, the
admin) ends what the old one may have let someone else open: every table socket of the user
closes and her API tokens are revoked (:func:`end_other_access`, called from the ``post_save``
receiver in campaign/signals.py). Other browsers' sessions end by themselves: Django's session
hash is made from the password.

Deleting an account (``manage.py delete_user``, :func:`delete_account`) erases the person and keeps
the log: the user row stays, because every event she made names it by id inside the hashed chain,
but it is emptied and renamed to a pseudonym, ``former member <id>``, which sign-up can never give
(it has spaces). docs/operations.md, "Deleting an account", says what stays and why.

Password reset by email is offered only when the server sends email (``EMAIL_HOST``, or
``EMAIL_CONSOLE`` in development: campaign/settings.py). Asking for a reset answers the same
whether or not an account has the address, and is limited per client address and per email
address (campaign/ratelimit.py), so it neither tells who is registered nor fills a mailbox.
"""

from __future__ import annotations

import re

from django import forms
from django.conf import settings
from django.contrib.auth import views as auth_views
from django.contrib.auth.forms import PasswordResetForm, UserCreationForm
from django.contrib.sessions.models import Session
from django.core.exceptions import ValidationError
from django.db import transaction

from .models import ROLE_GM, ApiToken, Campaign, Membership
from .publish import close_sockets_on_commit
from .ratelimit import RateLimited, check_failures, client_address, record_failure, reset_mail_item


def end_other_access(user) -> None:
    """The user's password changed: revoke her API tokens and close her table sockets (once the
    transaction commits). The pages reconnect with their own session, which is still valid only in
    the browser that made the change."""
    ApiToken.objects.filter(user=user).delete()
    close_sockets_on_commit(user.pk)


PSEUDONYM = "former member {id}"
_PSEUDONYM = re.compile(r"former member ([1-9][0-9]*)")


def pseudonym(user_id: int) -> str:
    """The name a deleted account is shown by: its id (already in every event it made), nothing of
    the person; never a name sign-up accepts (a space), so nobody can take or imitate it."""
    return PSEUDONYM.format(id=user_id)


def is_pseudonym(username: str, user_id: int) -> bool:
    """Whether ``username`` is the pseudonym of the deleted account ``user_id``."""
    found = _PSEUDONYM.fullmatch(username)
    return found is not None and int(found.group(1)) == user_id


def delete_account(user) -> list[str]:
    """Erase ``user``'s personal data and keep her events: the row is renamed to her pseudonym,
    its email, names, password, staff rights, groups and last login emptied, and it can never log
    in again; her API tokens and sessions go and her sockets close. Her memberships (a role and a
    date), characters, commands' ids and events stay, under the pseudonym. Returns the campaigns
    she leaves with no GM who can log in, for the operator to hear of."""
    with transaction.atomic():
        user = type(user).objects.select_for_update().get(pk=user.pk)
        user.username = pseudonym(user.pk)
        user.email = user.first_name = user.last_name = ""
        user.is_active = user.is_staff = user.is_superuser = False
        user.last_login = None
        user.set_unusable_password()
        user.save()  # inactive: campaign.signals closes her sockets
        user.groups.clear()
        user.user_permissions.clear()
        end_other_access(user)
        _end_sessions(user.pk)
        led = Membership.objects.filter(user=user, role=ROLE_GM).values_list("campaign_id", flat=True)
        other_gms = set(Membership.objects.filter(campaign_id__in=list(led), role=ROLE_GM, user__is_active=True)
                        .values_list("campaign_id", flat=True))
        return sorted(Campaign.objects.filter(pk__in=set(led) - other_gms).values_list("slug", flat=True))


def _end_sessions(user_id: int) -> None:
    """Every stored session logged in as ``user_id`` (the session hash would refuse them anyway, as
    the password changed; deleting them leaves nothing of hers behind)."""
    mine = [s.pk for s in Session.objects.iterator() if s.get_decoded().get("_auth_user_id") == str(user_id)]
    Session.objects.filter(pk__in=mine).delete()


def email_enabled() -> bool:
    """Whether the server sends email, so a forgotten password can be reset by mail."""
    return settings.PASSWORD_RESET_BY_EMAIL


def email_context(request) -> dict:
    """Every page's ``email_enabled`` (the login page links the reset only when it works)."""
    return {"email_enabled": email_enabled()}


EMAIL_HELP = "Optional: only to reset a forgotten password. Never shown to other members."


class SignupForm(UserCreationForm):
    """Django's sign-up form, with an optional email address when the server sends email."""

    email = forms.EmailField(required=False, max_length=254, help_text=EMAIL_HELP)

    class Meta(UserCreationForm.Meta):
        fields = ("username", "email")

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if not email_enabled():  # no address is asked for (or kept) that nothing would use
            del self.fields["email"]


class EmailForm(forms.Form):
    """The profile's email address: changing it needs the current password, as a password change
    does, since the address can reset the password."""

    email = forms.EmailField(required=False, max_length=254, label="Email address", help_text=EMAIL_HELP)
    password = forms.CharField(label="Your current password", strip=False,
                               widget=forms.PasswordInput(attrs={"autocomplete": "current-password"}))

    def __init__(self, user, *args, **kwargs):
        self.user = user
        super().__init__(*args, **kwargs)

    def clean_password(self):
        password = self.cleaned_data["password"]
        if not self.user.check_password(password):
            raise ValidationError("Your current password was entered incorrectly.", code="password_incorrect")
        return password

    def save(self) -> None:
        self.user.email = self.user.__class__.objects.normalize_email(self.cleaned_data["email"])
        self.user.save(update_fields=["email"])


class ThrottledPasswordResetForm(PasswordResetForm):
    """Django's reset form: each request counts against the client's address
    (``LOGIN_FAILURES_PER_5_MINUTES``, as failed logins do) and the address asked about
    (``PASSWORD_RESET_MAILS_PER_HOUR``); past either, the form says so whoever the address is."""

    request = None

    def clean_email(self):
        email = self.cleaned_data["email"].strip().lower()
        address = client_address(self.request.META) if self.request is not None else ""
        try:
            check_failures("reset", address=address)
            check_failures("reset-mail", reset_mail_item(), email=email)
        except RateLimited as e:
            raise ValidationError(e.message, code="throttled")
        record_failure("reset", address=address)
        record_failure("reset-mail", reset_mail_item(), email=email)
        return self.cleaned_data["email"]


class PasswordResetView(auth_views.PasswordResetView):
    """``/password/reset/``: without email it explains how else to get a new password."""

    form_class = ThrottledPasswordResetForm
    email_template_name = "registration/password_reset_email.txt"
    subject_template_name = "registration/password_reset_subject.txt"
    success_url = "/password/reset/done/"

    def get_form(self, form_class=None):
        form = super().get_form(form_class)
        form.request = self.request
        return form

    def post(self, request, *args, **kwargs):
        if not email_enabled():  # nothing is sent, nothing is counted: the page says whom to ask
            return self.get(request, *args, **kwargs)
        return super().post(request, *args, **kwargs)


class PasswordResetConfirmView(auth_views.PasswordResetConfirmView):
    """The link from the mail: Django's, which checks the token (valid once: it is made from the
    password hash and the last login) and the validators; the new password ends other access
    (:func:`end_other_access`, through the ``post_save`` receiver)."""

    success_url = "/password/reset/complete/"
