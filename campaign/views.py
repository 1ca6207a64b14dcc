"""Pages: home, campaign creation, sign-up and login, joining by invite link, the profile,
the campaign's settings."""

from __future__ import annotations

import uuid

from django import forms
from django.conf import settings
from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_required
from django.contrib.auth.forms import AuthenticationForm
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import IntegrityError, transaction
from django.http import Http404
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods

from rules import get_settings, system_choices
from rules.options import flat

from .accounts import EmailForm, SignupForm, email_enabled
from .actions import ActionError, access_campaign, do_add_member, do_create_campaign, do_rotate_invite
from .actions.campaign_options import current_options
from .actions.platform import form_limits
from .models import ROLE_CHOICES, ROLE_PLAYER, ApiToken, Campaign, Membership
from .pipeline import submit
from .publish import close_sockets_on_commit
from .ratelimit import (RateLimited, account_failure_item, check_failures, check_user_rate, client_address,
                        record_failure)
from .signed_forms import envelope, form_data, prepared, preparing


class CampaignForm(forms.Form):
    name = forms.CharField(max_length=120, label="Campaign name")
    system = forms.ChoiceField(choices=system_choices, label="Rule system")


@login_required
def home(request):
    form = CampaignForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            check_user_rate(request.user.pk)  # a new campaign's log gets its first events: a write like a command
            campaign = do_create_campaign(request.user, form.cleaned_data["name"], form.cleaned_data["system"])
        except ActionError as e:
            form.add_error(None, e.message)
        else:
            messages.success(request, f"{campaign.name} is ready. Share the invite link with your players.")
            return redirect("table", slug=campaign.slug)
    memberships = Membership.objects.filter(user=request.user).select_related("campaign").order_by("-campaign__created_at")
    return render(request, "home.html", {"memberships": memberships, "form": form})


def safe_next(request) -> str | None:
    """``?next=`` if it is a path on this site (never another site, never ``javascript:``)."""
    target = request.POST.get("next") or request.GET.get("next") or ""
    if target.startswith("/") and url_has_allowed_host_and_scheme(
            target, allowed_hosts={request.get_host()}, require_https=request.is_secure()):
        return target
    return None


def auth_next(request) -> dict:
    """Context for every page: where "Log in" and "Sign up" lead back to (``auth_next``): the page's own
    ``?next=`` (an invite link's way through the login page), else the page itself; none on the login
    and sign-up pages themselves. So a visitor who came by an invite link keeps it whichever of the
    header's links she follows."""
    if request.user.is_authenticated:
        return {}
    target = safe_next(request)
    if target is None and request.path not in (reverse("login"), reverse("signup"), "/"):
        target = request.get_full_path()
    return {"auth_next": target or ""}


def signup(request):
    form = SignupForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            with transaction.atomic():
                user = form.save()
        except IntegrityError:  # the same name signed up a moment ago, between the form's check and the save
            form.add_error("username", "A user with that username already exists.")
        else:
            login(request, user)
            return redirect(safe_next(request) or settings.LOGIN_REDIRECT_URL)
    return render(request, "registration/signup.html", {"form": form, "next": safe_next(request) or ""})


KNOWN_DEVICE_COOKIE = "tk_known"
KNOWN_DEVICE_SALT = "talekeeper.known-device"
KNOWN_DEVICE_DAYS = 365
KNOWN_ACCOUNTS_KEPT = 5


def known_accounts(request) -> list[str]:
    """The accounts (lowercased usernames) this browser logged in to before: a signed cookie."""
    raw = request.get_signed_cookie(KNOWN_DEVICE_COOKIE, default="", salt=KNOWN_DEVICE_SALT,
                                    max_age=KNOWN_DEVICE_DAYS * 24 * 3600)
    return [name for name in raw.split("/") if name]


class ThrottledAuthenticationForm(AuthenticationForm):
    """Failed logins are limited per address (``LOGIN_FAILURES_PER_5_MINUTES``) and, more slowly,
    per account from anywhere (``LOGIN_ACCOUNT_FAILURES_PER_HOUR``). The account's limit does not
    stop a browser that logged in to it before: guessing from many addresses is capped, yet a
    stranger's wrong guesses never lock the owner out of her own devices (campaign.ratelimit)."""

    def clean(self):
        account = (self.data.get("username") or "")[:150].lower()
        address = client_address(self.request.META) if self.request else ""
        known = self.request is not None and account in known_accounts(self.request)
        try:
            check_failures("login", address=address)
            if not known:
                check_failures("login", account_failure_item(), account=account)
        except RateLimited as e:
            raise ValidationError(e.message, code="throttled")
        try:
            return super().clean()
        except ValidationError:
            record_failure("login", address=address)
            record_failure("login", account_failure_item(), account=account)
            raise


class LoginView(auth_views.LoginView):
    authentication_form = ThrottledAuthenticationForm

    def form_valid(self, form):
        """Logged in: this browser is a known device of the account from now on."""
        response = super().form_valid(form)
        account = form.get_user().get_username().lower()
        kept = [account] + [name for name in known_accounts(self.request) if name != account]
        response.set_signed_cookie(KNOWN_DEVICE_COOKIE, "/".join(kept[:KNOWN_ACCOUNTS_KEPT]), salt=KNOWN_DEVICE_SALT,
                                   max_age=KNOWN_DEVICE_DAYS * 24 * 3600, httponly=True,
                                   secure=settings.SESSION_COOKIE_SECURE, samesite="Lax")
        return response


login_view = LoginView.as_view()


class PasswordChangeView(auth_views.PasswordChangeView):
    """A new password ends what the old one may have let someone else open, as every new password
    does (campaign.accounts.end_other_access): the user's table sockets close and her API tokens
    are revoked. This browser stays logged in (Django keeps its session); other browsers' sessions
    are no longer valid (Django's session hash)."""

    success_url = "/password/done/"


@login_required
@require_http_methods(["GET", "POST"])
def join(request, code):
    campaign = Campaign.objects.filter(invite_code=code).first()
    if campaign is None or not campaign.invite_is_valid():
        raise Http404("This invite link is not valid (any more).")
    if request.method == "POST":
        do_add_member(campaign, request.user, ROLE_PLAYER)
        return redirect("table", slug=campaign.slug)
    already = Membership.objects.filter(campaign=campaign, user=request.user).exists()
    if already:
        return redirect("table", slug=campaign.slug)
    return render(request, "join.html", {"campaign": campaign})


class TokenForm(forms.Form):
    name = forms.CharField(max_length=60, required=False, label="Name (what the token is for)")


@never_cache  # the page may show a new token: no cache, no back button, may keep it
@login_required
@require_http_methods(["GET", "POST"])
def profile(request):
    new_token = None
    changing_email = request.method == "POST" and request.POST.get("do") == "email" and email_enabled()
    email_form = EmailForm(request.user, request.POST if changing_email else None,
                           initial={"email": request.user.email})
    if changing_email:
        if email_form.is_valid():
            email_form.save()
            messages.success(request, "Your email address was saved." if request.user.email
                             else "Your email address was removed.")
            return redirect("profile")
        return _profile_page(request, TokenForm(), None, email_form)
    form = TokenForm(request.POST or None)
    if request.method == "POST" and "revoke" in request.POST:
        tokens = ApiToken.objects.filter(user=request.user, pk__in=_ids(request.POST.getlist("revoke")))
        close_sockets_on_commit(request.user.pk, tokens=list(tokens.values_list("digest", flat=True)))
        revoked, _ = tokens.delete()
        messages.success(request, "The token was revoked." if revoked else "No such token.")
        return redirect("profile")
    if request.method == "POST" and form.is_valid():
        try:
            check_user_rate(request.user.pk)  # a script must not fill the table of tokens either
        except RateLimited as e:
            form.add_error(None, e.message)
        else:
            new_token = ApiToken.objects.create(user=request.user, name=form.cleaned_data["name"].strip())
            form = TokenForm()
    return _profile_page(request, form, new_token, email_form)


def _profile_page(request, form, new_token, email_form):
    tokens = ApiToken.objects.filter(user=request.user).order_by("-created_at")
    return render(request, "profile.html", {"tokens": tokens, "new_token": new_token, "form": form,
                                            "email_form": email_form if email_enabled() else None})


def _ids(values) -> list[int]:
    return [int(v) for v in values if v.isascii() and v.isdigit() and len(v) < 18]


@login_required
@require_http_methods(["GET", "POST"])
def campaign_settings(request, slug):
    """The GM's page for the campaign: rename it, members' roles and removal, a new invite link.

    Each change that concerns the table is a command like any other (an event in
    the log); the invite link is not (it is the GM's secret)."""
    try:
        campaign, membership = access_campaign(request.user, slug)
    except ActionError:
        membership = None
    if membership is None:  # an outsider learns nothing of the campaign
        raise Http404("There is no campaign here that you are a member of.")
    if not membership.is_gm:  # a member knows it is there: she is told the page is the GM's
        raise PermissionDenied("This page is the GM's: only the campaign's GM opens it.")
    if request.method == "POST":
        try:
            if request.POST.get("do") == "rotate_invite":
                check_user_rate(membership.user_id)  # not a command (the link is the GM's secret), but a write
                do_rotate_invite(membership)
                messages.success(request, "A new invite link was made; the old one no longer works.")
            elif preparing(request):  # the page asks what to sign (campaign/signed_forms.py)
                return prepared(campaign, [{"id": f"settings-{uuid.uuid4().hex}",
                                            "action": _settings_action(request.POST, campaign)}])
            else:  # through the pipeline's step 4, like every command: the user's limit, then the command
                submit(membership, envelope(request, _settings_action(request.POST, campaign)))
                messages.success(request, "Done.")
        except ActionError as e:
            if preparing(request):
                return prepared(campaign, [])  # nothing to sign: the form is sent as it is, and told why
            messages.error(request, e.message)
        return redirect("campaign-settings", slug=campaign.slug)
    campaign.refresh_from_db()
    return render(request, "campaign_settings.html", {
        "campaign": campaign,
        "members": campaign.memberships.select_related("user").order_by("role", "user__username"),
        "roles": ROLE_CHOICES,
        "invite_url": request.build_absolute_uri(f"/join/{campaign.invite_code}/"),
        "invite_valid": campaign.invite_is_valid(),
        "invite_days": settings.INVITE_DAYS,
        "options": _options_form(campaign),
        "signed_form": form_data(request, campaign),
        # Each platform action's declared fields by name (campaign/actions/declared.py): the forms' limits.
        "limits": form_limits(),
    })


SETTINGS_ACTIONS = {"rename_campaign": ("name",), "change_role": ("username", "role"), "remove_member": ("username",),
                    "require_signed_commands": ()}


def _settings_action(post, campaign) -> dict:
    kind = post.get("do")
    if kind == "configure_campaign":
        return {"type": kind, "settings": _changed_options(post, campaign), "reason": post.get("reason", "")}
    if kind not in SETTINGS_ACTIONS:
        raise ActionError("Unknown change.")
    return {"type": kind, **{field: post.get(field, "") for field in SETTINGS_ACTIONS[kind]}}


def _options_form(campaign) -> list[dict]:
    """Each declared setting of the campaign's system with its current value, for the form."""
    current = flat(get_settings(campaign.system), current_options(campaign))
    rows = []
    for option in get_settings(campaign.system):
        row = option.describe()
        value = current[option.key]
        row.update(value=value, field=f"opt:{option.key}", id="opt-" + option.key.replace(".", "-"),
                   shown=", ".join(map(str, value)) if option.kind == "int_list" else value)
        rows.append(row)
    return rows


def _changed_options(post, campaign) -> dict:
    """The settings the GM changed on the form, read as their kinds (the command checks the ranges)."""
    current = flat(get_settings(campaign.system), current_options(campaign))
    changed = {}
    for option in get_settings(campaign.system):
        raw = post.get(f"opt:{option.key}")
        if option.kind == "bool":
            value = raw == "on"
        elif raw is None:
            continue
        elif option.kind == "choice":
            value = raw
        else:
            try:
                value = [int(v) for v in raw.split(",")] if option.kind == "int_list" else int(raw)
            except ValueError:
                raise ActionError(f"{option.label}: whole numbers only"
                                  + (", separated by commas." if option.kind == "int_list" else "."))
        if value != current[option.key]:
            changed[option.key] = value
    return changed
