"""The pages' forms that send commands, in two steps (campaign/signed_forms.py): the page asks what the
form would send (``_prepare``), signs it, and sends the form again with the signatures (``_signed``)."""

from __future__ import annotations

import json
import re

from django.test import RequestFactory

from campaign.models import Event
from campaign.signed_forms import envelope
from tests.campaign.served import client_for


def test_a_settings_form_prepared_answers_its_command_and_stores_nothing(table):
    gm = client_for(table.gm)
    before = table.campaign.last_seq
    res = gm.post("/campaigns/torn-road/settings/", {"do": "rename_campaign", "name": "The Long Road", "_prepare": "1"})
    body = res.json()
    assert res.status_code == 200 and body["campaign"] == table.campaign.id
    assert body["session"] is None and body["commitment"] is None
    [command] = body["commands"]
    assert command["action"] == {"type": "rename_campaign", "name": "The Long Road"}
    assert command["id"].startswith("settings-")
    table.campaign.refresh_from_db()
    assert table.campaign.last_seq == before and table.campaign.name != "The Long Road"


def test_a_settings_form_that_can_not_be_built_prepares_nothing(table):
    res = client_for(table.gm).post("/campaigns/torn-road/settings/", {"do": "no_such_change", "_prepare": "1"})
    assert res.json()["commands"] == []


def test_the_award_form_prepared_answers_one_command_per_character_under_the_form_s_ids(played):
    gm = client_for(played.gm)
    page = gm.get(f"/campaigns/{played.campaign.slug}/audit/advancement/").content.decode()
    token = re.search(r'name="token" value="([0-9a-f]{32})"', page).group(1)
    res = gm.post(f"/campaigns/{played.campaign.slug}/audit/advancement/award/",
                  {"token": token, f"points-{played.hero.id}": "2", "reason": "the bridge held", "_prepare": "1"})
    assert res.json()["commands"] == [{"id": f"award-{token}-{played.hero.id}", "action": {
        "type": "award_points", "character": played.hero.id, "points": 2, "reason": "the bridge held"}}]
    assert not Event.objects.filter(campaign=played.campaign, payload__reason="the bridge held").exists()


def test_a_signature_goes_only_with_the_very_action_and_id_signed():
    signature = {"key": "k", "session": None, "commitment": None, "sig": "s"}
    action = {"type": "rename_campaign", "name": "The Long Road"}
    signed = [{"id": "settings-1", "action": action, "signature": signature}]
    request = RequestFactory().post("/", {"_signed": json.dumps(signed)})
    assert envelope(request, dict(action)) == {"id": "settings-1", "action": action, "signature": signature}
    assert envelope(request, action, "settings-1")["signature"] == signature
    assert "signature" not in envelope(request, action, "settings-2")  # signed under another id
    assert "signature" not in envelope(request, {**action, "name": "The Short Road"})  # another action
    assert "signature" not in envelope(RequestFactory().post("/", {"_signed": "not json"}), action)
