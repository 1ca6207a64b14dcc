"""Witnesses' commands stored together (campaign.actions.do_contributions; docs/fair-dice.md, "Witnessed
rolls"): the ``witness_commit`` and ``witness_roll`` commands a table's socket gathered while they waited
for its turn are stored in one transaction, each answered as ``do_command`` would answer it alone, and
the roll they complete closed (commitments) or decided (reveals) in that transaction, once.

Who is online is scripted (``online``), as in test_witnessed_rolls.py."""

from __future__ import annotations

import contextlib
import uuid

import pytest

from campaign.actions import ActionError, CommandResult, commands, do_contributions
from campaign.models import Event, WitnessedRoll
from tests.campaign.test_witnessed_rolls import (  # noqa: F401
    commit, commitment_of, digest_of, entropy, events_after, head, online, table)
from tests.signing import signed


def envelope(table, user, seq, tag=None, command_id=None, **changes):
    """``user``'s signed ``witness_roll`` (her reveal) for roll ``seq`` (``changes``: replaced in the action
    after signing)."""
    action = {"type": "witness_roll", "roll": seq, "entropy": entropy(tag or user.username)}
    body = signed(table.campaign, user.username, {"id": command_id or uuid.uuid4().hex, "action": action})
    if changes:
        body = {**body, "action": {**action, **changes}}
    return body


def commitment(table, user, seq, tag=None):
    """``user``'s signed ``witness_commit`` to the entropy :func:`envelope` reveals."""
    action = {"type": "witness_commit", "roll": seq,
              "commitment": commitment_of(seq, user.pk, entropy(tag or user.username))}
    return signed(table.campaign, user.username, {"id": uuid.uuid4().hex, "action": action})


def together(table, *bodies):
    """``do_contributions`` of ``(user, body)`` pairs, as the table socket hands them over."""
    return do_contributions([(table.membership(user), body) for user, body in bodies])


def gm_roll(table) -> Event:
    [pending] = table.command(table.gm, {"type": "roll", "notation": "2d6"}).events
    assert pending.type == "roll_pending"
    return pending


def closed_roll(table, *users) -> tuple[Event, Event]:
    """A GM's roll each of ``users`` has committed to (one by one): its pending event and its close."""
    pending = gm_roll(table)
    for user in users:
        commit(table, user, pending.seq)
    closed = Event.objects.filter(campaign=table.campaign).latest("seq")
    assert closed.type == "commitments_closed"
    return pending, closed


@pytest.fixture
def transactions(monkeypatch):
    """How many command transactions ran (``campaign.outages.command_transaction``, as the pipeline opens them)."""
    opened = []
    real = commands.command_transaction

    @contextlib.contextmanager
    def counted():
        opened.append(1)
        with real():
            yield
    monkeypatch.setattr(commands, "command_transaction", counted)
    return opened


def test_commitments_then_reveals_stored_together_are_stored_in_order_and_close_then_decide_their_roll(
        table, online, transactions):
    table.command(table.gm, {"type": "start_session"})
    online("gm", "alice", "bob", "watcher")
    pending = gm_roll(table)
    order = (table.bob, table.watcher, table.alice)
    transactions.clear()
    committed = together(table, *((u, commitment(table, u, pending.seq)) for u in order))
    assert transactions == [1], "one transaction for all three and the close"
    assert all(isinstance(o, CommandResult) and not o.replayed for o in committed), committed
    commits = [o.events[0].seq for o in committed]
    assert commits == [pending.seq + 1, pending.seq + 2, pending.seq + 3], "stored in the order they came"
    [closed] = events_after(table, commits[-1])
    assert closed.type == "commitments_closed" and closed.payload["committed"] == commits
    transactions.clear()
    outcomes = together(table, *((u, envelope(table, u, pending.seq)) for u in order))
    assert transactions == [1], "one transaction for all three and the decision"
    assert all(isinstance(o, CommandResult) and not o.replayed for o in outcomes), outcomes
    seqs = [o.events[0].seq for o in outcomes]
    assert seqs == [closed.seq + 1, closed.seq + 2, closed.seq + 3], "stored in the order they came"
    stored = events_after(table, closed.seq)
    assert [(e.type, e.actor_id) for e in stored[:3]] == [("roll_witnessed", u.pk) for u in order]
    [decided] = stored[3:]
    assert decided.type == "roll" and decided.payload["command_of"] == pending.seq
    assert decided.payload["witnessed_by"] == seqs
    assert decided.payload["witness_digest"] == digest_of(
        [(seq, u.pk, entropy(u.username)) for seq, u in zip(seqs, order)])
    assert [o.head["seq"] for o in outcomes] == seqs, "each acked with the head it left"
    assert WitnessedRoll.objects.get(campaign=table.campaign, pending_seq=pending.seq).resolved_seq == decided.seq


def test_contributions_stored_together_ring_one_doorbell_then_their_decisions(
        table, online, doorbells, django_capture_on_commit_callbacks):
    """Every event still reaches every socket, in order: the contributions in one doorbell, the decision
    after them."""
    table.command(table.gm, {"type": "start_session"})
    online("gm", "alice", "bob")
    pending, _ = closed_roll(table, table.alice, table.bob)
    with django_capture_on_commit_callbacks(execute=True):
        outcomes = together(table, (table.alice, envelope(table, table.alice, pending.seq)),
                            (table.watcher, envelope(table, table.watcher, pending.seq)),  # refused: not a witness
                            (table.bob, envelope(table, table.bob, pending.seq)))
    stored = [outcomes[0].events[0].seq, outcomes[2].events[0].seq]
    assert doorbells.seqs() == [stored, [stored[-1] + 1]]


def test_a_bad_contribution_is_refused_alone_and_spoils_none_of_the_others(table, online):
    table.command(table.gm, {"type": "start_session"})
    online("gm", "alice", "bob")
    pending, closed = closed_roll(table, table.alice, table.bob)
    outcomes = together(
        table,
        (table.alice, envelope(table, table.alice, pending.seq)),
        (table.watcher, envelope(table, table.watcher, pending.seq)),              # not listed: not online then
        (table.bob, envelope(table, table.bob, pending.seq, entropy=entropy("other"))),  # not what bob signed
        (table.alice, envelope(table, table.alice, pending.seq, tag="again")),     # her second contribution
        (table.bob, envelope(table, table.bob, pending.seq, tag="ground")),        # not what bob committed to
        (table.bob, {"id": "", "action": {"type": "witness_roll"}}),               # no id
        (table.bob, envelope(table, table.bob, pending.seq)),
    )
    codes = [o.code if isinstance(o, ActionError) else "stored" for o in outcomes]
    assert codes == ["stored", "not_a_witness", "bad_signature", "already_witnessed", "reveal_mismatch", "bad_id",
                     "stored"]
    alices, bobs = outcomes[0].events[0].seq, outcomes[6].events[0].seq
    stored = events_after(table, closed.seq)
    assert [e.seq for e in stored[:2]] == [alices, bobs] == [closed.seq + 1, closed.seq + 2]
    [decided] = stored[2:]
    assert decided.payload["witnessed_by"] == [alices, bobs]


def test_a_batched_contribution_sent_again_is_answered_with_its_events(table, online):
    """The page resends a command whose answer it lost (the same id): stored once, whether the first try
    was in an earlier batch or earlier in the same one."""
    table.command(table.gm, {"type": "start_session"})
    online("gm", "alice", "bob", "watcher")
    pending, closed = closed_roll(table, table.alice, table.bob, table.watcher)
    alices = envelope(table, table.alice, pending.seq)
    first, again = together(table, (table.alice, alices), (table.alice, alices))
    assert not first.replayed and again.replayed and again.events == first.events
    before = head(table)
    [later] = together(table, (table.alice, alices))
    assert later.replayed and later.events == first.events and head(table) == before
    [changed] = together(table, (table.alice, {**alices, "action": {**alices["action"], "entropy": entropy("x")}}))
    assert isinstance(changed, ActionError) and changed.code == "conflict"
    assert [e.actor_id for e in events_after(table, closed.seq)] == [table.alice.pk], "nothing else stored"


def test_each_roll_is_closed_and_decided_exactly_once(table, online):
    """Commitments to two rolls in one batch close both, and reveals to both in one batch decide both,
    each once, after all of the batch's commands; a reveal to a decided roll, alone or in a batch, stores
    nothing, and the timer finds nothing left."""
    table.command(table.gm, {"type": "start_session"})
    online("gm", "alice", "bob")
    first, second = gm_roll(table), gm_roll(table)
    committed = together(table, (table.alice, commitment(table, table.alice, first.seq)),
                         (table.alice, commitment(table, table.alice, second.seq, tag="a2")),
                         (table.bob, commitment(table, table.bob, first.seq)),
                         (table.bob, commitment(table, table.bob, second.seq, tag="b2")))
    assert all(isinstance(o, CommandResult) for o in committed), committed
    closes = [e for e in events_after(table, second.seq) if e.type == "commitments_closed"]
    assert [e.payload["command_of"] for e in closes] == [first.seq, second.seq]
    assert closes[0].seq == committed[-1].events[0].seq + 1
    outcomes = together(table, (table.alice, envelope(table, table.alice, first.seq)),
                        (table.alice, envelope(table, table.alice, second.seq, tag="a2")),
                        (table.bob, envelope(table, table.bob, first.seq)),
                        (table.bob, envelope(table, table.bob, second.seq, tag="b2")))
    assert all(isinstance(o, CommandResult) for o in outcomes), outcomes
    stored = events_after(table, closes[-1].seq)
    decisions = [e for e in stored if "witness_digest" in e.payload]
    assert [e.payload["command_of"] for e in decisions] == [first.seq, second.seq]
    assert [e.seq for e in stored[:4]] == [o.events[0].seq for o in outcomes]
    assert decisions[0].payload["witnessed_by"] == [outcomes[0].events[0].seq, outcomes[2].events[0].seq]
    assert decisions[1].payload["witnessed_by"] == [outcomes[1].events[0].seq, outcomes[3].events[0].seq]
    before = head(table)
    [late] = together(table, (table.bob, envelope(table, table.bob, first.seq, tag="late")))
    assert isinstance(late, ActionError) and late.code == "roll_resolved" and head(table) == before
    from tests.campaign.test_witnessed_rolls import overdue

    overdue(table)
    commands.resolve_overdue(table.campaign.id)
    assert head(table) == before, "no roll closed or decided twice"


@pytest.mark.django_db(transaction=True)
async def test_the_table_socket_stores_contributions_through_the_gathered_turn(online, monkeypatch):
    """Over the socket, a ``witness_commit`` and a ``witness_roll`` go to ``do_contributions`` by their
    table's gathered turn (sessions.db.together), however many arrived with them, and are acked like any
    command."""
    from channels.db import database_sync_to_async

    import sessions.consumers
    from tests.conftest import Table
    from tests.sessions.test_table_consumer import connect, receive, until_ready

    gathered = []
    real = sessions.consumers.submit_contributions

    def recorded(items):
        gathered.append([membership.user.username for membership, _ in items])
        return real(items)

    monkeypatch.setattr(sessions.consumers, "submit_contributions", recorded)
    t = await database_sync_to_async(Table)(signed=True)
    await database_sync_to_async(t.command)(t.gm, {"type": "configure_campaign", "settings": {"witnessed_rolls": "gm"}})
    await database_sync_to_async(t.command)(t.gm, {"type": "start_session"})
    online("gm", "alice")
    pending = await database_sync_to_async(gm_roll)(t)
    alice = await connect(t, t.alice)
    await until_ready(alice)
    committed = await database_sync_to_async(commitment)(t, t.alice, pending.seq)
    await alice.send_json_to({"type": "command", **committed})
    frames = [await receive(alice) for _ in range(3)]  # its event, the close, the ack: in any order
    [ack] = [f for f in frames if f["type"] == "ack"]
    assert ack["id"] == committed["id"] and ack["seq"] == pending.seq + 1
    [closed] = [f["event"] for f in frames if f["type"] == "event" and f["event"]["seq"] == pending.seq + 2]
    assert closed["type"] == "commitments_closed" and closed["payload"]["committed"] == [pending.seq + 1]
    body = await database_sync_to_async(envelope)(t, t.alice, pending.seq)
    await alice.send_json_to({"type": "command", **body})
    frames = [await receive(alice) for _ in range(3)]  # its event, the decision, the ack: in any order
    [ack] = [f for f in frames if f["type"] == "ack"]
    assert ack["id"] == body["id"] and ack["seq"] == pending.seq + 3 and gathered == [["alice"], ["alice"]]
    [decided] = [f["event"] for f in frames if f["type"] == "event" and f["event"]["seq"] == pending.seq + 4]
    assert decided["payload"]["witnessed_by"] == [pending.seq + 3]
    await alice.disconnect()
