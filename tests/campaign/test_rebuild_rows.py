"""The rows the log names (campaign/roster.py): written from the events by the record path, and
restored from the log alone by ``rebuild_projections`` (PostgreSQL and SQLite alike)."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import transaction

from campaign import member_keys, roster
from campaign.accounts import delete_account
from campaign.actions import do_add_member
from campaign.eventlog import Draft, lock_campaign, record
from campaign.models import Campaign, Character, Event, Membership
from rules import get_system
from rules.senders import Seats

STREAM = ("name", "system", "signed_from", "witnessed_rolls", "last_seq", "head_hash", "session_count", "current_session",
          "scene_count", "current_scene")


def rows(campaign: Campaign) -> dict:
    """Every column the log decides, as the database holds it now."""
    row = Campaign.objects.get(pk=campaign.pk)
    return {
        "campaign": {c: getattr(row, c) for c in STREAM},
        "members": {m.user_id: m.role for m in Membership.objects.filter(campaign=campaign)},
        "characters": {c.id: (c.name, c.owner_id, c.npc, c.shown) for c in Character.objects.filter(campaign=campaign)},
    }


@pytest.fixture
def played(table_for):
    """A signed campaign played through every change the log makes to its rows."""
    table = table_for("tote", signed=True)
    gm = table.gm
    table.command(gm, {"type": "rename_campaign", "name": "The Long Road"})
    table.command(gm, {"type": "configure_campaign", "settings": {"witnessed_rolls": "everyone"}})
    table.command(gm, {"type": "configure_campaign", "settings": {"witnessed_rolls": "gm"}})
    table.command(gm, {"type": "change_role", "username": "bob", "role": "spectator"})
    table.command(gm, {"type": "remove_member", "username": "watcher"})
    do_add_member(table.campaign, table.watcher, "player")  # back by a new invite link
    table.command(gm, {"type": "change_role", "username": "alice", "role": "gm"})
    sheet = get_system("tote").example_sheet
    table.hero = table.create_character(table.alice, "Mira", sheet)
    table.command(gm, {"type": "create_character", "name": "Tomas", "owner": "watcher", "sheet": sheet})
    made = table.command(gm, {"type": "create_character", "name": "The Stranger", "npc": True, "quick": {"template": "minion"}})
    table.npc = made.events[0].character_id
    table.command(gm, {"type": "show_npc", "character": table.npc, "shown": "name"})
    table.command(gm, {"type": "start_session", "title": "One"})
    table.command(gm, {"type": "start_scene", "title": "The inn"})
    table.command(gm, {"type": "show_npc", "character": table.npc, "shown": "full"})
    return table


def test_the_record_path_writes_the_rows_the_events_say(played):
    now = rows(played.campaign)
    assert now["campaign"]["name"] == "The Long Road"
    assert now["campaign"]["signed_from"] == 1 and now["campaign"]["witnessed_rolls"] == "gm"
    assert (now["campaign"]["current_session"], now["campaign"]["current_scene"]) == (1, 1)
    assert now["members"] == {played.gm.pk: "gm", played.alice.pk: "gm", played.bob.pk: "spectator",
                              played.watcher.pk: "player"}
    assert now["characters"][played.npc] == ("The Stranger", played.gm.pk, True, "full")
    tomas = Character.objects.get(campaign=played.campaign, name="Tomas")
    assert tomas.owner_id == played.watcher.pk and not tomas.npc


def test_rebuild_restores_every_row_from_the_log_alone(played, capsys):
    before = rows(played.campaign)
    call_command("rebuild_projections", "--check")
    campaign = played.campaign
    # Wiped and garbled behind the log's back:
    Membership.objects.filter(campaign=campaign).delete()
    Membership.objects.create(campaign=campaign, user=played.outsider, role="gm")
    Campaign.objects.filter(pk=campaign.pk).update(
        name="Garbled", signed_from=None, witnessed_rolls="off", last_seq=3, head_hash="f" * 64, session_count=7, current_session=None,
        scene_count=0, current_scene=None)
    Character.objects.filter(pk=played.npc).update(shown="hidden", name="Nobody", npc=False, owner=played.bob)
    Character.objects.filter(pk=played.hero.pk).update(owner=played.outsider)
    with pytest.raises(CommandError, match="row"):
        call_command("rebuild_projections", "--check", "--campaign", campaign.slug)
    err = capsys.readouterr().err
    for said in ("the campaign's name", "the campaign's signed_from", "the campaign's witnessed_rolls", "the campaign's head_hash", "alice's membership",
                 "outsider's membership", "The Stranger", "Mira"):
        assert said in err
    assert rows(campaign)["campaign"]["name"] == "Garbled"  # --check changed nothing
    call_command("rebuild_projections")
    assert rows(campaign) == before
    call_command("rebuild_projections", "--check")
    # The membership made again dates from the event that seated her.
    joined = Event.objects.filter(campaign=campaign, type="member_joined", payload__user_id=played.watcher.pk)
    assert Membership.objects.get(campaign=campaign, user=played.watcher).joined_at == joined.latest("seq").created_at
    # And the table plays on, from the head the rebuild put back.
    played.command(played.gm, {"type": "post_message", "text": "On we go."})
    call_command("rebuild_projections", "--check")


def test_a_removed_member_stays_removed_and_a_wiped_campaign_row_is_refolded(played):
    Campaign.objects.filter(pk=played.campaign.pk).update(name="x", system="wyrm")
    Membership.objects.create(campaign=played.campaign, user=played.outsider, role="player")
    with transaction.atomic():
        differing, unread = roster.rebuild(lock_campaign(played.campaign.pk))
    assert set(differing) == {"the campaign's name", "the campaign's system", "outsider's membership"}
    assert unread == []
    assert not Membership.objects.filter(campaign=played.campaign, user=played.outsider).exists()
    assert Campaign.objects.get(pk=played.campaign.pk).system == "tote"


def _old(table, drafts, actor):
    """Events as servers stored them before events named members by id (no ``user_id``/``owner_id``)."""
    with transaction.atomic():
        record(lock_campaign(table.campaign.pk), drafts, actor=actor)


def test_an_older_log_rebuilds_by_the_names_its_events_give(table):
    User = get_user_model()
    dora, erin = User.objects.create_user("dora"), User.objects.create_user("erin")
    # As the old code wrote them: the row by hand, the event without the id.
    Membership.objects.create(campaign=table.campaign, user=dora, role="player")
    _old(table, [Draft("member_joined", {"username": "dora", "role": "player"})], dora)  # by the invite link
    Membership.objects.create(campaign=table.campaign, user=erin, role="player")
    _old(table, [Draft("member_joined", {"username": "erin", "role": "player"})], table.gm)  # the GM added her
    Membership.objects.filter(campaign=table.campaign, user=erin).update(role="spectator")
    _old(table, [Draft("member_role_changed", {"username": "erin", "from": "player", "role": "spectator"})], table.gm)
    npc = Character.objects.create(campaign=table.campaign, owner=table.gm, name="Old Ned", npc=True, shown="name")
    sheet = get_system("tote").example_sheet
    _old(table, [Draft("character_created", {"name": "Old Ned", "owner": "gm", "sheet": sheet, "npc": True,
                                              "shown": "name"}, 1, npc, "gm")], table.gm)
    before = rows(table.campaign)
    Membership.objects.filter(campaign=table.campaign, user__in=[dora, erin]).delete()
    Character.objects.filter(pk=npc.pk).update(owner=None, shown="full")
    call_command("rebuild_projections")
    assert rows(table.campaign) == before

    # Erin's account is deleted: her name in the GM's old events is no account's now. Dora joined by
    # the invite link herself, so her events still say who she is.
    delete_account(erin)
    delete_account(dora)
    with transaction.atomic():
        differing, unread = roster.rebuild(lock_campaign(table.campaign.pk), check=True)
    assert differing == []
    assert [line.split(" ")[:2] for line in unread] == [["#6", "member_joined"], ["#7", "member_role_changed"]]
    # Rows it can't read stand: a membership the log can't place is not removed.
    Membership.objects.create(campaign=table.campaign, user=table.outsider, role="player")
    call_command("rebuild_projections")
    assert Membership.objects.filter(campaign=table.campaign, user=table.outsider).exists()
    assert Membership.objects.get(campaign=table.campaign, user=erin).role == "spectator"


def test_the_rebuild_reads_an_older_logs_members_as_every_verifier_does(table):
    """One reading of who a membership event names (rules/senders.py), the rebuild's and the verifiers':
    on a log of events without ids, where a verifier ties a name to an id (an earlier event's, a later
    event's actor) the rebuild reads the same member, and what neither can read (a renamed account, a
    deleted one) both leave unread."""
    User = get_user_model()
    dora, erin, frank, gina = (User.objects.create_user(name) for name in ("dora", "erin", "frank", "gina"))

    def said():
        return Draft("message_posted", {"text": "Hello."})

    _old(table, [Draft("member_joined", {"username": "dora", "role": "player"})], dora)  # by the invite link
    _old(table, [Draft("member_joined", {"username": "erin", "role": "player"})], table.gm)  # the GM added her
    _old(table, [Draft("member_joined", {"username": "frank", "role": "player"})], table.gm)
    _old(table, [Draft("member_joined", {"username": "gina", "role": "spectator"})], table.gm)
    _old(table, [said()], erin)  # the first event a verifier ties "erin" to her by
    _old(table, [said()], frank)
    User.objects.filter(pk=dora.pk).update(username="dorothy")  # renamed since: her old name is an event's
    _old(table, [Draft("member_role_changed", {"username": "dora", "from": "player", "role": "spectator"})],
         table.gm)
    _old(table, [Draft("member_role_changed", {"username": "erin", "from": "player", "role": "gm"})], table.gm)
    _old(table, [Draft("member_removed", {"username": "frank", "role": "player"})], table.gm)
    User.objects.filter(pk=frank.pk).update(username="fred")  # no account is called "frank" now
    delete_account(gina)

    read = roster.fold(table.campaign)
    events = (Event.objects.filter(campaign=table.campaign).order_by("seq").select_related("actor")
              .only(*member_keys.SEEN_FIELDS))
    verifier = Seats()
    for event in events:
        verifier.see(member_keys.as_seen(event))
    assert read.members == verifier.roles == {
        table.gm.pk: "gm", table.alice.pk: "player", table.bob.pk: "player", table.watcher.pk: "spectator",
        dora.pk: "spectator", erin.pk: "gm"}
    # Frank's and Gina's events: the verifier waits for an actor called so, the host has no account called so.
    assert set(verifier.unnamed) == {"frank", "gina"}
    assert [line.split(" ")[:2] for line in read.unread] == [
        ["#7", "member_joined"], ["#8", "member_joined"], ["#13", "member_removed"]]
    assert read.members_unread
