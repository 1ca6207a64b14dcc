"""Snapshots: a sheet as of any seq starts near it, and always equals a fold from seq 1.

The log here is short, so snapshots are taken every 3 events
(``PROJECTION_SNAPSHOT_EVERY``) to exercise every way a fold can start: from
a snapshot before a void, after it, with and without a skip set.
"""

from __future__ import annotations

import os

import pytest

from campaign import projections
from campaign.models import Campaign, Character, CharacterSnapshot, Event
from campaign.projections import rebuild, replay, state_as_of
from rules import ScriptedDice, get_system

EVERY = 3


@pytest.fixture
def evening(table_for, settings):
    settings.PROJECTION_SNAPSHOT_EVERY = EVERY
    table = table_for("wyrm")
    sheet = get_system("wyrm").example_sheet
    table.hero = table.create_character(table.alice, "Mira", sheet)
    table.rival = table.create_character(table.bob, "Grell", sheet)
    check = {"type": "check", "character": table.hero.id, "attribute": "rogue", "skills": ["Stealth"], "dl": 7}

    def grant(amount, who=None):
        who = who or table.hero
        return table.command(table.gm, {"type": "grant_fate", "character": who.id, "amount": amount}).events[-1].seq

    table.command(table.gm, {"type": "start_session"})
    table.command(table.gm, {"type": "start_scene"})
    for amount in (1, 2):
        grant(amount)
        grant(1, table.rival)
    table.voided_seq = grant(5)
    for _ in range(3):
        table.command(table.alice, check, dice=ScriptedDice([4]))
        grant(1, table.rival)
    table.void_seq = table.command(table.gm, {"type": "void", "seq": table.voided_seq, "reason": "too generous"}
                                   ).events[-1].seq
    table.hidden_seq = table.command(table.alice, {**check, "visibility": "secret"}, dice=ScriptedDice([6, 2])
                                     ).events[-1].seq
    table.command(table.gm, {"type": "end_scene"})
    for amount in (1, 3):
        table.command(table.alice, check, dice=ScriptedDice([3]))
        grant(amount)
    table.head = Campaign.objects.get(pk=table.campaign.pk).last_seq
    return table


def counting_folds(monkeypatch) -> list:
    """The events a replay folds from now on."""
    folded = []
    fold_one = projections._fold_one

    def counted(rules, event, *args):
        folded.append(event)
        return fold_one(rules, event, *args)

    monkeypatch.setattr(projections, "_fold_one", counted)
    return folded


def from_seq_one(character, seq, skip=frozenset()):
    states, _ = replay(character.campaign, upto=seq, character_id=character.id, skip=skip, snapshots=False)
    return states.get(character.id)


def test_appends_take_snapshots_as_the_log_grows(evening):
    seqs = list(CharacterSnapshot.objects.filter(character=evening.hero, skipped="").values_list("seq", flat=True))
    assert len(seqs) >= 3
    # One of them lies between the voided event and its void: a fold past the void must not start there.
    assert any(evening.voided_seq <= seq < evening.void_seq for seq in seqs)


@pytest.mark.parametrize("character", ["hero", "rival"])
def test_a_sheet_as_of_every_seq_equals_a_fold_from_seq_one(evening, character):
    character = getattr(evening, character)
    for _ in range(2):  # the first pass also stores the snapshots it passes; the second starts from them
        for seq in range(1, evening.head + 1):
            assert state_as_of(character, seq) == from_seq_one(character, seq), seq
    assert state_as_of(character, evening.head) == character.projection.__class__.objects.get(
        character=character).state


def test_the_voided_event_counts_only_before_its_void(evening):
    before, after = state_as_of(evening.hero, evening.void_seq - 1), state_as_of(evening.hero, evening.void_seq)
    assert before["fate"] - after["fate"] == 5


def test_a_skip_set_gets_snapshots_of_its_own(evening):
    skip = frozenset({evening.hidden_seq})
    for seq in range(1, evening.head + 1):
        assert state_as_of(evening.hero, seq, skip) == from_seq_one(evening.hero, seq, skip), seq
    assert CharacterSnapshot.objects.filter(character=evening.hero, seq__gt=evening.hidden_seq).exclude(
        skipped="").exists()
    assert state_as_of(evening.hero, evening.hidden_seq, skip) != state_as_of(evening.hero, evening.hidden_seq)


def test_a_sheet_as_of_the_head_folds_only_the_events_since_a_snapshot(evening, monkeypatch):
    folded = counting_folds(monkeypatch)
    state_as_of(evening.hero, evening.head)
    # The history has ~30 events; one block of the log holds at most EVERY of them.
    assert 0 < len(folded) <= EVERY


def test_a_sheet_as_of_the_head_costs_three_round_trips(evening, django_assert_num_queries):
    # the head with the voids up to it, the latest usable snapshot with its state, the rows since
    hero = Character.objects.select_related("campaign").get(pk=evening.hero.pk)  # as the sheet API reads it
    with django_assert_num_queries(3):
        state = state_as_of(hero, evening.head)
    assert state == from_seq_one(evening.hero, evening.head)


def test_a_void_replays_its_character_from_a_snapshot_before_the_voided_event(table_for, settings, monkeypatch):
    settings.PROJECTION_SNAPSHOT_EVERY = EVERY
    table = table_for("wyrm")
    hero = table.create_character(table.alice, "Mira", get_system("wyrm").example_sheet)
    seqs = [table.command(table.gm, {"type": "grant_fate", "character": hero.id, "amount": 1}).events[-1].seq
            for _ in range(12)]
    folded = counting_folds(monkeypatch)
    table.command(table.gm, {"type": "void", "seq": seqs[-2], "reason": "twice"})
    assert 0 < len(folded) < len(seqs)
    assert [row.seq for row in folded if row.type == "character_created"] == []
    assert hero.projection.__class__.objects.get(character=hero).state["fate"] == 2 + 11
    assert rebuild(Campaign.objects.get(pk=table.campaign.pk), check=True) == []


def test_rebuild_rewrites_snapshots_and_check_names_a_wrong_one(evening):
    campaign = Campaign.objects.get(pk=evening.campaign.pk)
    assert rebuild(campaign, check=True) == []
    wrong = CharacterSnapshot.objects.filter(character=evening.hero, skipped="").order_by("seq").first()
    CharacterSnapshot.objects.filter(pk=wrong.pk).update(state={"fate": 99})
    assert rebuild(campaign, check=True) == [f"Mira (id {evening.hero.id})"]
    assert CharacterSnapshot.objects.get(pk=wrong.pk).state == {"fate": 99}  # --check writes nothing
    rebuild(campaign)
    assert rebuild(campaign, check=True) == []
    assert CharacterSnapshot.objects.get(character=evening.hero, seq=wrong.seq, skipped="").state \
        == from_seq_one(evening.hero, wrong.seq)
    assert Event.objects.filter(campaign=campaign).count() == evening.head  # the log itself is untouched


def test_a_void_recorded_among_other_events_folds_as_if_each_came_alone(table_for):
    """One record() call holding a void and a later event of the same character (an import's batch):
    the events can't be folded before they are stored, so the void replays its character after the
    write, and the later event counts once."""
    from django.db import transaction

    from campaign.eventlog import Draft, lock_campaign, record

    table = table_for("wyrm")
    hero = table.create_character(table.alice, "Mira", get_system("wyrm").example_sheet)
    grant = table.command(table.gm, {"type": "grant_fate", "character": hero.id, "amount": 1}).events[-1]
    fate = Character.objects.get(pk=hero.pk).projection.state["fate"]
    with transaction.atomic():
        campaign = lock_campaign(table.campaign.pk)
        record(campaign, [Draft("event_voided", {"seq": grant.seq, "type": grant.type, "reason": "twice"}, 1, hero),
                          Draft(grant.type, {"amount": 2}, grant.version, hero)], actor=table.gm)
    assert Character.objects.get(pk=hero.pk).projection.state["fate"] == fate - 1 + 2
    assert rebuild(Campaign.objects.get(pk=table.campaign.pk), check=True) == []


def test_rebuilt_snapshots_are_each_a_fold_from_seq_one(evening):
    campaign = Campaign.objects.get(pk=evening.campaign.pk)
    rebuild(campaign)
    snapshots = CharacterSnapshot.objects.filter(character__campaign=campaign)
    assert snapshots.count() >= 4 and not snapshots.exclude(skipped="").exists()
    for snapshot in snapshots.select_related("character__campaign"):
        assert snapshot.state == from_seq_one(snapshot.character, snapshot.seq), snapshot.seq
    for seq in range(1, evening.head + 1):  # and every sheet as of a seq starts from them as before
        assert state_as_of(evening.hero, seq) == from_seq_one(evening.hero, seq), seq


def test_no_index_of_the_log_is_the_campaign_alone(db):
    """A planner with stale statistics (a campaign that grew since the last ANALYZE) took a lone
    campaign index to be as cheap as (campaign, seq) and read the whole log to replay one block
    of it (docs/performance.md). Every index starting with the campaign says more."""
    from django.db import connection

    with connection.cursor() as cursor:
        constraints = connection.introspection.get_constraints(cursor, Event._meta.db_table)
    indexes = [c["columns"] for c in constraints.values() if (c["index"] or c["unique"]) and not c["primary_key"]]
    assert ["campaign_id", "seq"] in indexes
    assert ["campaign_id"] not in indexes


def test_every_rule_system_is_imported_when_django_starts():
    """The first sheet of a process must not pay for importing its rules (60-230 ms measured).
    A process of its own: in this one, earlier tests may have imported them already."""
    import subprocess
    import sys

    script = ("import sys, django; django.setup(); from rules import SYSTEM_MODULES; "
              "print(sorted(m for m in SYSTEM_MODULES.values() if m not in sys.modules))")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True,
                         env={**os.environ, "DJANGO_SETTINGS_MODULE": "campaign.settings"})
    assert out.stdout.strip() == "[]", out.stderr
