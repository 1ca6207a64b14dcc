"""Play sessions and scenes: GM-only events that stamp everything in between."""

import pytest

from campaign.actions import Forbidden, Refused
from campaign.models import Event


def test_events_carry_the_session_and_scene_they_happened_in(table):
    table.command(table.gm, {"type": "start_session"})
    in_session = table.command(table.alice, {"type": "roll", "notation": "1d6"}).events[0]
    table.command(table.gm, {"type": "start_scene"})
    in_scene = table.command(table.alice, {"type": "roll", "notation": "1d6"}).events[0]
    ended = table.command(table.gm, {"type": "end_scene"}).events[0]
    table.command(table.gm, {"type": "end_session"})
    after = table.command(table.alice, {"type": "roll", "notation": "1d6"}).events[0]
    table.command(table.gm, {"type": "start_session"})
    second = table.command(table.gm, {"type": "start_scene"}).events[0]
    assert (in_session.session, in_session.scene) == (1, None)
    assert (in_scene.session, in_scene.scene) == (1, 1)
    assert (ended.session, ended.scene, ended.payload) == (1, 1, {"scene": 1})
    assert (after.session, after.scene) == (None, None)
    assert (second.session, second.scene, second.payload) == (2, 2, {"scene": 2})


@pytest.mark.parametrize("steps, refused", [
    (["start_scene"], "Start a session"),
    (["end_session"], "No session"),
    (["end_scene"], "No scene"),
    (["start_session", "start_session"], "still running"),
    (["start_session", "start_scene", "start_scene"], "still running"),
    (["start_session", "start_scene", "end_session"], "end it first"),
])
def test_out_of_order_is_refused(table, steps, refused):
    *ok, last = steps
    for step in ok:
        table.command(table.gm, {"type": step})
    head = Event.objects.filter(campaign=table.campaign).count()
    with pytest.raises(Refused, match=refused):
        table.command(table.gm, {"type": last})
    assert Event.objects.filter(campaign=table.campaign).count() == head


@pytest.mark.parametrize("who", ["alice", "watcher"])
def test_only_the_gm_runs_sessions(table, who):
    with pytest.raises(Forbidden):
        table.command(getattr(table, who), {"type": "start_session"})


def test_a_scene_the_gm_names_says_its_name_in_the_log_and_on_the_table_page(table):
    from django.test import Client

    from campaign.audit import describe
    from campaign.eventlog import serialize_event

    table.command(table.gm, {"type": "start_session"})
    named = table.command(table.gm, {"type": "start_scene", "name": "  The elk hunt "}).events[0]
    assert named.payload == {"scene": 1, "name": "The elk hunt"}
    assert describe(serialize_event(named)) == "started scene 1: “The elk hunt”"
    client = Client()
    client.force_login(table.alice)
    page = client.get(f"/campaigns/{table.campaign.slug}/", secure=True).content.decode()
    assert "Session 1, scene 1: The elk hunt" in page and '"sceneName": "The elk hunt"' in page
    table.command(table.gm, {"type": "end_scene"})
    plain = table.command(table.gm, {"type": "start_scene", "name": ""}).events[0]
    assert plain.payload == {"scene": 2} and describe(serialize_event(plain)) == "started scene 2"
    page = client.get(f"/campaigns/{table.campaign.slug}/", secure=True).content.decode()
    assert "Session 1, scene 2</span>" in page and '"sceneName": null' in page


@pytest.mark.parametrize("name, why", [
    ("x" * 81, "'name' must be text of 1 to 80 characters"), (7, "'name' must be text"),
    ("The\nford", "control characters"), ("\u202eford", "text-direction"),
])
def test_a_scene_name_that_is_not_a_name_is_refused_and_stores_nothing(table, name, why):
    from campaign.actions import ActionError

    table.command(table.gm, {"type": "start_session"})
    head = Event.objects.filter(campaign=table.campaign).count()
    with pytest.raises(ActionError, match=why):
        table.command(table.gm, {"type": "start_scene", "name": name})
    assert Event.objects.filter(campaign=table.campaign).count() == head


@pytest.mark.parametrize("reason", ["oops\u202e!sdrawkcab", "\u200fmark", "bell\x07"])
def test_a_reason_with_a_text_direction_mark_is_refused_and_stores_nothing(table, reason):
    """A reason is read on every member's log and audit row: a direction override reorders it."""
    from campaign.actions import ActionError

    rolled = table.command(table.alice, {"type": "roll", "notation": "1d6"}).events[0]
    head = Event.objects.filter(campaign=table.campaign).count()
    with pytest.raises(ActionError, match="text-direction marks"):
        table.command(table.gm, {"type": "void", "seq": rolled.seq, "reason": reason})
    assert Event.objects.filter(campaign=table.campaign).count() == head
    voided = table.command(table.gm, {"type": "void", "seq": rolled.seq, "reason": "a typo\nin the notation"}).events[0]
    assert voided.payload["reason"] == "a typo\nin the notation"  # line breaks stay
