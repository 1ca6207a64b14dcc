"""The table page: the log, the sheets, the dice."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import Http404
from django.shortcuts import render

from campaign.actions import ActionError, access_campaign
from campaign.models import Character


@login_required
def table(request, slug):
    try:
        campaign, membership = access_campaign(request.user, slug)
    except ActionError:
        raise Http404("There is no campaign here that you are a member of.")
    characters = Character.objects.filter(campaign=campaign).select_related("owner", "projection")
    members = campaign.memberships.select_related("user").order_by("role", "user__username")
    invite_url = request.build_absolute_uri(f"/join/{campaign.invite_code}/") if membership.is_gm else None
    return render(request, "table.html", {
        "campaign": campaign,
        "membership": membership,
        "characters": characters,
        "members": members,
        "invite_url": invite_url,
    })
