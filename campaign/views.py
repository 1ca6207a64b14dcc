"""Pages: home, campaign creation, joining by invite link, the profile."""

from __future__ import annotations

from django import forms
from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth.decorators import login_required
from django.contrib.auth.forms import UserCreationForm
from django.http import Http404
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods

from rules import system_choices

from .actions import ActionError, do_add_member, do_create_campaign
from .models import ROLE_PLAYER, ApiToken, Campaign, Membership


class CampaignForm(forms.Form):
    name = forms.CharField(max_length=120, label="Campaign name")
    system = forms.ChoiceField(choices=system_choices, label="Rule system")


@login_required
def home(request):
    form = CampaignForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            campaign = do_create_campaign(request.user, form.cleaned_data["name"], form.cleaned_data["system"])
        except ActionError as e:
            form.add_error(None, e.message)
        else:
            messages.success(request, f"{campaign.name} is ready. Share the invite link with your players.")
            return redirect("table", slug=campaign.slug)
    memberships = Membership.objects.filter(user=request.user).select_related("campaign").order_by("-campaign__created_at")
    return render(request, "home.html", {"memberships": memberships, "form": form})


def signup(request):
    form = UserCreationForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        user = form.save()
        login(request, user)
        return redirect(request.GET.get("next") or "home")
    return render(request, "registration/signup.html", {"form": form})


@login_required
@require_http_methods(["GET", "POST"])
def join(request, code):
    campaign = Campaign.objects.filter(invite_code=code).first()
    if campaign is None:
        raise Http404("This invite link is not valid (any more).")
    if request.method == "POST":
        do_add_member(campaign, request.user, ROLE_PLAYER)
        return redirect("table", slug=campaign.slug)
    already = Membership.objects.filter(campaign=campaign, user=request.user).exists()
    if already:
        return redirect("table", slug=campaign.slug)
    return render(request, "join.html", {"campaign": campaign})


@login_required
def profile(request):
    if request.method == "POST":
        ApiToken.objects.create(user=request.user)
        messages.success(request, "A new API token was created.")
        return redirect("profile")
    tokens = ApiToken.objects.filter(user=request.user).order_by("-created_at")
    return render(request, "profile.html", {"tokens": tokens})
