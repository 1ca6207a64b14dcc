"""The Django admin (campaign/admin.py): staff find campaigns, memberships and events, and change
none of them there (each change is an event the game's commands make)."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.test import Client


@pytest.fixture
def staff(table):
    user = get_user_model().objects.create_superuser("operator", "op@example.org", "x" * 20)
    client = Client()
    client.force_login(user)
    return client


def test_staff_list_and_open_campaigns_memberships_and_events(table, staff):
    table.command(table.alice, {"type": "roll", "notation": "2d6"})
    event = table.campaign.events.order_by("-seq").first()
    for url, text in [("/admin/campaign/campaign/", table.campaign.slug),
                      (f"/admin/campaign/campaign/{table.campaign.pk}/change/", "alice"),
                      ("/admin/campaign/membership/?q=alice", "alice"),
                      (f"/admin/campaign/event/?q={table.campaign.slug}", "roll"),
                      (f"/admin/campaign/event/{event.pk}/change/", "roll"),
                      ("/admin/auth/user/", "alice")]:
        res = staff.get(url)
        assert res.status_code == 200 and text in res.content.decode(), url


def test_nothing_of_a_campaign_or_its_log_is_changed_there(table, staff):
    event = table.campaign.events.order_by("-seq").first()
    page = staff.get(f"/admin/campaign/campaign/{table.campaign.pk}/change/").content.decode()
    assert 'name="_save"' not in page
    assert staff.post(f"/admin/campaign/campaign/{table.campaign.pk}/change/", {"name": "Renamed"}).status_code == 403
    assert staff.get("/admin/campaign/event/add/").status_code == 403
    assert staff.post(f"/admin/campaign/event/{event.pk}/delete/", {"post": "yes"}).status_code == 403
    table.campaign.refresh_from_db()
    assert table.campaign.name != "Renamed"
    assert table.campaign.events.filter(pk=event.pk).exists()


def test_a_member_who_is_not_staff_is_sent_to_log_in(table):
    from tests.campaign.served import client_for

    res = client_for(table.gm).get("/admin/campaign/event/")
    assert res.status_code == 302 and "/admin/login/" in res["Location"]
