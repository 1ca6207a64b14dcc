"""Projections: updated with each append, rebuilt from the log, and as of any seq."""

from __future__ import annotations

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from campaign.actions import Forbidden, Refused
from campaign.models import CharacterProjection, Event
from campaign.projections import state_as_of
from rules import get_system


@pytest.fixture
def wyrm(table_for):
    table = table_for("wyrm")
    sheet = get_system("wyrm").example_sheet
    table.hero = table.create_character(table.alice, "Mira", sheet)
    table.rival = table.create_character(table.bob, "Grell", sheet)
    return table


def fate(character):
    return CharacterProjection.objects.get(character=character).state["fate"]


def test_projection_follows_each_append(wyrm):
    assert fate(wyrm.hero) == 2
    result = wyrm.command(wyrm.gm, {"type": "grant_fate", "character": wyrm.hero.id, "amount": 3, "reason": "heroics"})
    projection = CharacterProjection.objects.get(character=wyrm.hero)
    assert projection.state["fate"] == 5
    assert projection.last_seq == result.events[-1].seq
    assert fate(wyrm.rival) == 2  # untouched


def test_only_the_gm_takes_gm_actions(wyrm):
    with pytest.raises(Forbidden):
        wyrm.command(wyrm.alice, {"type": "grant_fate", "character": wyrm.hero.id, "amount": 3})
    assert fate(wyrm.hero) == 2


def test_a_player_acts_only_for_their_own_character(wyrm):
    with pytest.raises(Forbidden):
        wyrm.command(wyrm.alice, {"type": "check", "character": wyrm.rival.id, "attribute": "rogue", "dl": 5})


def test_rules_refusal_is_422_and_stores_nothing(wyrm):
    head = Event.objects.filter(campaign=wyrm.campaign).count()
    with pytest.raises(Refused):
        wyrm.command(wyrm.gm, {"type": "approve_fate", "character": wyrm.hero.id})
    assert Event.objects.filter(campaign=wyrm.campaign).count() == head


def test_state_as_of_any_seq(wyrm):
    first = wyrm.command(wyrm.gm, {"type": "grant_fate", "character": wyrm.hero.id, "amount": 1}).events[-1].seq
    second = wyrm.command(wyrm.gm, {"type": "grant_fate", "character": wyrm.hero.id, "amount": 4}).events[-1].seq
    assert state_as_of(wyrm.hero, first - 1)["fate"] == 2
    assert state_as_of(wyrm.hero, first)["fate"] == 3
    assert state_as_of(wyrm.hero, second)["fate"] == 7
    created = Event.objects.get(campaign=wyrm.campaign, type="character_created", character=wyrm.hero).seq
    assert state_as_of(wyrm.hero, created - 1) is None


def test_rebuild_check_names_each_differing_character(wyrm, capsys):
    wyrm.command(wyrm.gm, {"type": "grant_fate", "character": wyrm.hero.id, "amount": 1})
    call_command("rebuild_projections", "--check")
    assert "OK" in capsys.readouterr().out
    CharacterProjection.objects.filter(character=wyrm.hero).update(state={"fate": 99})
    with pytest.raises(CommandError, match="1 row"):
        call_command("rebuild_projections", "--check", "--campaign", wyrm.campaign.slug)
    assert "Mira" in capsys.readouterr().err
    assert fate(wyrm.hero) == 99  # --check changed nothing
    call_command("rebuild_projections")
    assert fate(wyrm.hero) == 3
    call_command("rebuild_projections", "--check")


def test_rebuilt_projection_equals_the_live_one(wyrm):
    for amount in (1, 2, 3):
        wyrm.command(wyrm.gm, {"type": "grant_fate", "character": wyrm.rival.id, "amount": amount})
    live = {p.character_id: (p.state, p.last_seq) for p in CharacterProjection.objects.all()}
    CharacterProjection.objects.all().delete()
    call_command("rebuild_projections")
    rebuilt = {p.character_id: (p.state, p.last_seq) for p in CharacterProjection.objects.all()}
    assert rebuilt == live


def test_player_creates_a_character_with_a_valid_sheet_only(wyrm):
    from campaign.actions import ActionError

    with pytest.raises(ActionError, match="sheet"):
        wyrm.command(wyrm.alice, {"type": "create_character", "name": "Bad", "sheet": {"attributes": {"warrior": 99}}})
    with pytest.raises(Forbidden):
        wyrm.command(wyrm.watcher, {"type": "create_character", "name": "Peeker", "sheet": {}})
