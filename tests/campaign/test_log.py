"""The event log: gap-free seq, hash chain, immutability, idempotent commands."""

from __future__ import annotations

import threading

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import DatabaseError, connection, transaction

from campaign import triggers
from campaign.actions import ActionError, Conflict, do_command
from campaign.eventlog import verify_chain
from campaign.models import Campaign, Event, ImmutableError
from rules import ScriptedDice, get_system
from rules.base import DiceExhausted


def roll(table, user, notation="2d6", **kw):
    return table.command(user, {"type": "roll", "notation": notation}, **kw)


def test_campaign_log_starts_with_its_creation_and_members(table):
    types = list(Event.objects.filter(campaign=table.campaign).values_list("type", flat=True))
    assert types == ["campaign_created", "member_joined", "member_joined", "member_joined"]
    assert verify_chain(table.campaign).ok


def test_appends_are_gap_free_and_chained(table):
    for _ in range(5):
        roll(table, table.alice)
    events = list(Event.objects.filter(campaign=table.campaign).order_by("seq"))
    assert [e.seq for e in events] == list(range(1, len(events) + 1))
    for previous, event in zip(events, events[1:]):
        assert event.prev_hash == previous.hash
    table.campaign.refresh_from_db()
    assert table.campaign.last_seq == len(events)
    assert table.campaign.head_hash == events[-1].hash


def test_record_only_stores_and_the_command_rings_the_doorbell_on_commit(
        table, django_capture_on_commit_callbacks, doorbells):
    """The log layer publishes nothing: record() registers no doorbell, do_command does, after it
    recorded, to ring once the transaction commits (campaign.publish.publish_on_commit)."""
    from campaign.eventlog import Draft, lock_campaign, record

    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        with transaction.atomic():
            stored = record(lock_campaign(table.campaign.id), [Draft("roll", {"notation": "1d6", "total": 4})],
                            actor=table.gm)
    assert stored and callbacks == [] and doorbells.rung == []
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        result = roll(table, table.alice)
    assert len(callbacks) == 1 and doorbells.seqs() == [[e.seq for e in result.events]]


def test_roll_records_every_die_from_the_server(table):
    result = roll(table, table.alice, "4d6kh3+1", dice=ScriptedDice([2, 6, 5, 1]))
    payload = result.events[0].payload
    term = payload["terms"][0]
    assert [d["face"] for d in term["dice"]] == [2, 6, 5, 1]
    assert [d["kept"] for d in term["dice"]] == [True, True, True, False]
    assert payload["total"] == 2 + 6 + 5 + 1


class TestImmutability:
    def test_model_refuses_save_and_delete(self, table):
        event = Event.objects.filter(campaign=table.campaign).first()
        event.type = "forged"
        with pytest.raises(ImmutableError):
            event.save()
        with pytest.raises(ImmutableError):
            event.delete()

    def test_queryset_refuses_update_and_delete(self, table):
        with pytest.raises(ImmutableError):
            Event.objects.filter(campaign=table.campaign).update(type="forged")
        with pytest.raises(ImmutableError):
            Event.objects.filter(campaign=table.campaign).delete()

    @pytest.mark.parametrize("sql", [
        "UPDATE campaign_event SET type = 'forged'",
        "DELETE FROM campaign_event",
    ])
    def test_database_trigger_refuses_raw_sql(self, table, sql):
        with pytest.raises(DatabaseError, match="append-only"):
            with transaction.atomic(), connection.cursor() as cursor:
                cursor.execute(sql)
        assert Event.objects.filter(campaign=table.campaign, type="forged").count() == 0

    def test_campaign_with_a_log_cannot_be_deleted(self, table):
        from django.db.models import ProtectedError

        with pytest.raises(ProtectedError):
            Campaign.objects.filter(pk=table.campaign.pk).delete()


class TestIdempotency:
    def test_repeated_id_returns_the_original_and_never_rolls_again(self, table):
        first = roll(table, table.alice, client_id="click-1", dice=ScriptedDice([3, 4]))
        # The scripted dice are empty: a second roll would raise DiceExhausted.
        again = roll(table, table.alice, client_id="click-1", dice=ScriptedDice([]))
        assert again.replayed and not first.replayed
        assert [e.seq for e in again.events] == [e.seq for e in first.events]
        assert again.events[0].payload == first.events[0].payload
        assert Event.objects.filter(campaign=table.campaign, type="roll").count() == 1

    def test_repeated_id_with_a_different_action_is_a_conflict(self, table):
        roll(table, table.alice, "1d6", client_id="x1")
        with pytest.raises(Conflict):
            roll(table, table.alice, "2d6", client_id="x1")
        assert Event.objects.filter(campaign=table.campaign, type="roll").count() == 1

    def test_ids_are_per_member(self, table):
        roll(table, table.alice, "1d6", client_id="same")
        result = roll(table, table.bob, "1d6", client_id="same")
        assert not result.replayed

    def test_refused_command_stores_nothing(self, table):
        head = table.campaign.last_seq
        with pytest.raises(ActionError):
            roll(table, table.alice, "1d6+", dice=ScriptedDice([]))
        table.campaign.refresh_from_db()
        assert table.campaign.last_seq == head

    def test_refused_command_leaves_its_id_free(self, table):
        # The id is claimed by inserting the command row first; a refusal must take it back.
        with pytest.raises(ActionError):
            roll(table, table.alice, "1d6+", client_id="retry-me", dice=ScriptedDice([]))
        result = roll(table, table.alice, "1d6", client_id="retry-me", dice=ScriptedDice([5]))
        assert not result.replayed and result.events[0].payload["total"] == 5

    def test_crash_mid_command_leaves_no_half_written_event(self, table):
        head = Event.objects.filter(campaign=table.campaign).count()
        with pytest.raises(DiceExhausted):
            roll(table, table.alice, "3d6", dice=ScriptedDice([1]))  # dies mid-roll
        assert Event.objects.filter(campaign=table.campaign).count() == head
        assert verify_chain(Campaign.objects.get(pk=table.campaign.pk)).ok


@pytest.mark.postgres
@pytest.mark.usefixtures("require_postgres")
class TestRoundTrips:
    """What one command costs PostgreSQL: every statement is a round trip. (SQLite runs in
    process: the write's parts are separate statements there, and no round trips.)

    Inside a test the transaction is a savepoint: SAVEPOINT/RELEASE stand for BEGIN/COMMIT.
    The budget is the bare floor's (begin, lock, insert, commit): the lock's round trip also
    reads the membership, an earlier use of the id, the dice seed and the character; one
    statement writes the command, the events, the head and the projections.
    """

    def test_a_roll_is_the_lock_and_one_write(self, table, django_assert_num_queries):
        membership = table.membership(table.alice)
        with django_assert_num_queries(4) as captured:
            do_command(membership, {"id": "r1", "action": {"type": "roll", "notation": "2d6"}}, dice=ScriptedDice([2, 3]))
        lock, write = (q["sql"] for q in captured.captured_queries[1:3])
        assert "FOR UPDATE" in lock and '"campaign_membership"' in lock and '"campaign_command"' in lock
        assert write.startswith("WITH cmd AS (INSERT") and '"campaign_event"' in write and "UPDATE" in write

    def test_a_roll_in_a_session_reads_its_seed_with_the_lock(self, table, django_assert_num_queries):
        table.command(table.gm, {"type": "start_session"})
        membership = table.membership(table.alice)
        with django_assert_num_queries(4):
            result = do_command(membership, {"id": "r1", "action": {"type": "roll", "notation": "2d6"}})
        assert "dice_scheme" in result.events[0].payload  # derived from the session's seed, so verifiable

    def test_a_rules_action_reads_its_character_with_the_lock(self, table_for, django_assert_num_queries):
        table = table_for("wyrm")
        hero = table.create_character(table.alice, "Hero", get_system("wyrm").example_sheet)
        membership = table.membership(table.alice)
        action = {"type": "check", "character": hero.id, "attribute": "rogue", "skills": ["Stealth"], "dl": 7}
        # The lock also reads whether the character has any hidden change (none here: no query
        # for who may see them, docs/hidden-information.md); the projection's update is part of the write
        with django_assert_num_queries(4):
            do_command(membership, {"id": "check-1", "action": action}, dice=ScriptedDice([4]))
        hero.projection.refresh_from_db()
        assert hero.projection.state["rolls"] == 1
        # With a hidden change, who may see it is read as before: the GM's roll shaped the sheet.
        table.command(table.gm, {**action, "visibility": "gm"}, dice=ScriptedDice([4]))
        again = do_command(membership, {"id": "check-2", "action": action}, dice=ScriptedDice([4]))
        assert [e.visibility for e in again.events] == ["gm"]

    def test_the_lock_and_the_write_are_prepared_once_per_connection(self, table):
        # Django opens connections with preparing off, and psycopg then ignored prepare=True:
        # PostgreSQL would parse and plan both statements for every command.
        membership = table.membership(table.alice)
        for n in range(2):
            do_command(membership, {"id": f"p{n}", "action": {"type": "roll", "notation": "2d6"}},
                       dice=ScriptedDice([2, 3]))
        with connection.cursor() as cursor:
            cursor.execute("SELECT statement FROM pg_prepared_statements WHERE NOT from_sql")
            prepared = [row[0] for row in cursor.fetchall()]
        assert any("FOR UPDATE" in sql and '"campaign_command"' in sql for sql in prepared)
        assert any(sql.startswith("WITH cmd AS (INSERT") for sql in prepared)
        # Only the record path's own statements are prepared: Django's queries stay as they were.
        assert all("FOR UPDATE" in sql or sql.startswith("WITH ") for sql in prepared), prepared

    def test_the_lock_is_planned_once_per_connection_and_looks_for_hidden_events_by_campaign(self, table):
        # PostgreSQL planned the lock again for every command (custom plans: 1-2 ms of its CPU each),
        # and a plan made once must not read every event of the campaign (or every hidden event of
        # every campaign) to learn whether the character has a hidden change.
        hero = table.create_character(table.alice, "Hero", get_system("tote").example_sheet)
        membership = table.membership(table.alice)
        with connection.cursor() as cursor:
            # A test database is small enough for a scan of the whole table to look cheapest, whatever
            # the statistics of the moment; what this asks is whether the plan can look by campaign.
            cursor.execute("SET LOCAL enable_seqscan = off")
        for n in range(8):  # past the five custom plans PostgreSQL tries first
            do_command(membership, {"id": f"g{n}", "action": {"type": "roll", "notation": "2d6",
                                                              "character": hero.id}}, dice=ScriptedDice([2, 3]))
        with connection.cursor() as cursor:
            cursor.execute("SELECT name, statement, generic_plans, custom_plans FROM pg_prepared_statements "
                           "WHERE NOT from_sql AND statement LIKE '%%FOR UPDATE%%'")
            rows = cursor.fetchall()
            assert rows and all(custom == 0 and generic > 0 for _, _, generic, custom in rows), rows
            name = next(name for name, sql, _, _ in rows if "EXISTS" in sql)
            # The plan of record, with any ids: EXPLAIN EXECUTE of the prepared statement uses its generic plan.
            params = ", ".join(["NULL"] * sum(sql.count("$") for n, sql, _, _ in rows if n == name))
            cursor.execute(f"EXPLAIN EXECUTE {name}({params})")
            plan = "\n".join(row[0] for row in cursor.fetchall())
        assert "campaign_event_hidden_by_camp" in plan and "Index Cond: (campaign_id = $" in plan, plan

    def test_a_socket_command_and_its_acks_head_are_the_same_four(self, table, django_assert_num_queries):
        from sessions.consumers import _command_and_head
        from sessions.heads import log_head

        membership = table.membership(table.alice)
        body = {"id": "s1", "action": {"type": "roll", "notation": "2d6"}}
        with django_assert_num_queries(4):  # the head comes from the locked row, not a read after COMMIT
            result, head = _command_and_head(membership, body)
        assert head == log_head(table.campaign.id) and head["seq"] == result.events[-1].seq
        table.command(table.bob, {"type": "roll", "notation": "1d6"})
        with django_assert_num_queries(4):  # a repeat: the lock, then the original events
            again, head = _command_and_head(membership, body)
        assert again.replayed and head == log_head(table.campaign.id)

    def test_a_repeat_reads_the_original_instead_of_rolling(self, table, django_assert_num_queries):
        membership = table.membership(table.alice)
        body = {"id": "again", "action": {"type": "roll", "notation": "2d6"}}
        do_command(membership, body, dice=ScriptedDice([2, 3]))
        # the lock finds the id taken; then the original events
        with django_assert_num_queries(4):
            again = do_command(membership, body, dice=ScriptedDice([]))
        assert again.replayed


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_a_command_waits_for_postgresql_four_times_as_the_bare_loop(transactional_table, require_postgres):
    """Outside a test's transaction the command's own transaction is real: psycopg's BEGIN, the
    lock, the write, COMMIT, and nothing else (no read after COMMIT; the pooled connection's check
    costs none either: tests/campaign/test_postgresql_backend.py). BEGIN with the lock and COMMIT
    with the write in psycopg pipelines made two, but cost more CPU than the waits they saved on
    loopback: docs/performance.md."""
    from bench.store import round_trips  # libpq's trace: the bench counts the same way

    table = transactional_table
    membership = table.membership(table.alice)
    body = {"id": "four-trips", "action": {"type": "roll", "notation": "2d6"}}
    # The lock and the write are prepared on a connection's first command (a round trip each, once).
    do_command(membership, {"id": "first", "action": body["action"]}, dice=ScriptedDice([1, 1]))
    assert round_trips(lambda: do_command(membership, body, dice=ScriptedDice([2, 3]))) == 4
    assert Event.objects.filter(command__client_id="four-trips").count() == 1
    # A repeat writes nothing: BEGIN, the lock, the original events, COMMIT.
    assert round_trips(lambda: do_command(membership, body)) == 4
    assert verify_chain(Campaign.objects.get(pk=table.campaign.pk)).ok


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_concurrent_appends_are_gap_free_duplicate_free_and_chained(transactional_table, require_postgres):
    """8 threads x 100 commands against the real PostgreSQL server."""
    table = transactional_table
    threads_n, per_thread = 8, 100
    errors = []
    start = threading.Barrier(threads_n)

    def worker(n):
        from django.db import connections

        try:
            membership = table.membership(table.alice if n % 2 else table.bob)
            start.wait()
            for i in range(per_thread):
                do_command(membership, {"id": f"t{n}-{i}", "action": {"type": "roll", "notation": "1d20"}})
        except Exception as e:  # pragma: no cover - reported below
            errors.append(repr(e))
        finally:
            connections.close_all()

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(threads_n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    seqs = list(Event.objects.filter(campaign=table.campaign).order_by("seq").values_list("seq", flat=True))
    assert seqs == list(range(1, len(seqs) + 1))
    assert Event.objects.filter(campaign=table.campaign, type="roll").count() == threads_n * per_thread
    report = verify_chain(Campaign.objects.get(pk=table.campaign.pk))
    assert report.ok, report


@pytest.mark.django_db(transaction=True)
def test_concurrent_appends_on_this_database(transactional_table):
    """The same guarantee on whichever database this run uses (SQLite included)."""
    table = transactional_table
    errors = []

    def worker(n):
        from django.db import connections

        try:
            membership = table.membership(table.alice)
            for i in range(25):
                do_command(membership, {"id": f"s{n}-{i}", "action": {"type": "roll", "notation": "1d6"}})
        except Exception as e:  # pragma: no cover
            errors.append(repr(e))
        finally:
            connections.close_all()

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(4)]
    [t.start() for t in threads]
    [t.join() for t in threads]
    assert errors == []
    campaign = Campaign.objects.get(pk=table.campaign.pk)
    assert verify_chain(campaign).ok
    assert Event.objects.filter(campaign=campaign, type="roll").count() == 100


def test_the_lock_finds_a_hidden_change_its_character_is_only_a_side_of(table):
    """``any_hidden_changes`` covers the events naming the character in ``sides`` (a contest's
    opponent), on every database: SQLite tests that key with a JSON path holding the id, which
    kept the query's stand-in id (the lock said "none" and the opponent's next decision was public)."""
    from campaign.visibility import EVERYONE, hidden_shaped
    from campaign.eventlog import Draft, lock_stream, record
    from rules import get_system

    hero = table.create_character(table.alice, "Hero", get_system("tote").example_sheet)
    rival = table.create_character(table.bob, "Rival", get_system("tote").example_sheet)
    with transaction.atomic():
        campaign = Campaign.objects.select_for_update().get(pk=table.campaign.pk)
        record(campaign, [Draft("bundle", {"events": [], "sides": {str(rival.id): True}}, character=hero,
                                visibility="gm")], actor=table.gm)
    for character in (hero, rival):
        with transaction.atomic():
            stream = lock_stream(table.membership(table.bob), "any", character.id)
        assert stream.character.any_hidden_changes is True, character.name
        assert hidden_shaped(stream.character, [EVERYONE]) == [True], character.name


class TestVerifyLog:
    def test_ok(self, table, capsys):
        roll(table, table.alice)
        call_command("verify_log", table.campaign.slug)
        assert capsys.readouterr().out.strip() == (f"OK {table.campaign.last_seq + 1} events, not signed (the log "
                                                   "predates signed commands: the host could have sent any member event)")

    def test_edit_behind_the_servers_back_is_detected(self, table):
        for _ in range(3):
            roll(table, table.alice)
        target = Event.objects.filter(campaign=table.campaign, type="roll").order_by("seq")[1]
        triggers.uninstall(connection)  # what an operator with database access could do
        try:
            with connection.cursor() as cursor:
                cursor.execute(
                    "UPDATE campaign_event SET payload = %s WHERE id = %s",
                    ['{"notation": "2d6", "total": 12, "terms": []}', target.id],
                )
        finally:
            triggers.install(connection)
        with pytest.raises(CommandError, match=f"BAD seq {target.seq}"):
            call_command("verify_log", table.campaign.slug)

    def test_unknown_campaign(self, db):
        with pytest.raises(CommandError, match="No campaign"):
            call_command("verify_log", "nope")


def _command_behind_the_lock(table, first, second):
    """Run ``first()`` while holding the campaign's lock, after ``second()`` (a command in another
    thread) has started and is waiting for that lock; returns ``second()``'s result.

    On PostgreSQL the waiting statement's snapshot is older than what ``first()`` commits: only
    the locked row itself is read again once the lock is granted (READ COMMITTED)."""
    from django.db import connections

    from campaign.eventlog import lock_campaign

    locked, results, errors = threading.Event(), [], []

    def holder():
        try:
            with transaction.atomic():
                lock_campaign(table.campaign.pk)
                locked.set()
                with connection.cursor() as cursor:  # until the other command waits for the lock
                    for _ in range(200):
                        cursor.execute("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                                       "AND wait_event_type = 'Lock'")
                        if cursor.fetchone()[0]:
                            break
                        threading.Event().wait(0.05)
                first()
        except Exception as e:  # pragma: no cover - reported below
            errors.append(repr(e))
        finally:
            connections.close_all()

    def waiter():
        try:
            locked.wait(10)
            results.append(second())
        except Exception as e:  # pragma: no cover - reported below
            errors.append(repr(e))
        finally:
            connections.close_all()

    threads = [threading.Thread(target=holder), threading.Thread(target=waiter)]
    [t.start() for t in threads]
    [t.join(30) for t in threads]
    assert errors == []
    return results[0]


STRIKE = {"type": "skill_test", "skill": "Strike", "target": 12}


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_a_command_that_waited_for_the_lock_folds_onto_the_sheet_as_it_was_left(transactional_table,
                                                                                   require_postgres):
    """The lock's own query also reads the character's sheet: a command that waited for the lock
    must not fold onto the sheet as it was before the command it waited for (a lost update)."""
    from campaign.models import CharacterProjection
    from campaign.projections import rebuild
    from rules import get_system

    table = transactional_table
    hero = table.create_character(table.alice, "Ayasha", get_system("tote").example_sheet)
    _command_behind_the_lock(
        table,
        lambda: table.command(table.gm, {"type": "adjust_sheet", "character": hero.id, "reason": "a wound",
                                         "changes": {"resolve": 1}}),
        lambda: table.command(table.alice, {**STRIKE, "character": hero.id}, dice=ScriptedDice([3, 3, 3])))
    assert CharacterProjection.objects.get(character=hero).state["resolve"] == 1
    assert rebuild(Campaign.objects.get(pk=table.campaign.pk), check=True) == []


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_a_command_that_waited_for_the_lock_sees_the_hidden_event_before_it(transactional_table, require_postgres):
    """A GM's hidden event stored while a player's command waited for the lock shapes that
    command's decision: it must not be stored for everyone (docs/hidden-information.md)."""
    from rules import get_system

    table = transactional_table
    hero = table.create_character(table.alice, "Ayasha", get_system("tote").example_sheet)
    result = _command_behind_the_lock(
        table,
        lambda: table.command(table.gm, {"type": "mark_injury", "character": hero.id, "visibility": "gm"}),
        lambda: table.command(table.alice, {**STRIKE, "character": hero.id}, dice=ScriptedDice([3, 3, 3])))
    assert [e.visibility for e in result.events] == ["gm"]


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_a_command_that_waited_for_a_rebuild_folds_onto_the_rebuilt_sheet(transactional_table, require_postgres):
    """``rebuild_projections`` holds the campaign's lock while it rewrites the sheets, and moves no
    head: a command that waited for it must still read the sheet it left (before: the lock's
    query, begun before the rebuild committed, read the old sheet, and the command wrote it back)."""
    from campaign.models import CharacterProjection
    from campaign.projections import rebuild
    from rules import get_system

    table = transactional_table
    hero = table.create_character(table.alice, "Ayasha", get_system("tote").example_sheet)
    wrong = CharacterProjection.objects.get(character=hero).state
    right = wrong["resolve"]
    CharacterProjection.objects.filter(character=hero).update(state={**wrong, "resolve": right + 5})  # a stale cache
    _command_behind_the_lock(
        table,
        lambda: rebuild(Campaign.objects.select_for_update().get(pk=table.campaign.pk)),
        lambda: table.command(table.alice, {**STRIKE, "character": hero.id}, dice=ScriptedDice([3, 3, 3])))
    assert CharacterProjection.objects.get(character=hero).state["resolve"] == right
    assert rebuild(Campaign.objects.get(pk=table.campaign.pk), check=True) == []
