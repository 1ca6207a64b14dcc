"""The doorbell's sender (sessions.transport._Sender): what a commit hands it goes out in the order
it was handed over, one failed send stops nothing after it, and a Redis that stopped answering
leaves a bounded backlog behind, which the doorbells rung after it do not wait for."""

from __future__ import annotations

import threading

import pytest

from sessions import transport


class Layer:
    """A channel layer that notes each group send (and fails the ones asked to)."""

    def __init__(self, fail: set[int] = frozenset(), until: int = 1, held: bool = False):
        self.sent, self.fail, self.until, self.done = [], fail, until, threading.Event()
        self.started = threading.Event()  # the first send began
        self.held = held  # a Redis that stopped answering: the first send waits for let_go()
        self.released = None

    def let_go(self, loop) -> None:
        loop.call_soon_threadsafe(self.released.set)

    async def group_send(self, group, message):
        import asyncio

        if self.held and self.released is None:
            self.released = asyncio.Event()
            self.started.set()
            await self.released.wait()
        for _ in range(3 if message["n"] == 0 else 0):  # the first takes a few more steps on the wire
            await asyncio.sleep(0)
        self.sent.append((group, message["n"]))
        if len(self.sent) == self.until:
            self.done.set()
        if message["n"] in self.fail:
            raise ConnectionError("Redis went away")


@pytest.fixture
def sender():
    made = []

    def make(layer: Layer) -> transport._Sender:
        made.append(transport._Sender(layer))
        return made[-1]

    yield make
    for s in made:
        if not s.loop.is_closed():
            s.loop.call_soon_threadsafe(s.loop.stop)
            s.thread.join(10)
            s.loop.close()


def settled(s: transport._Sender) -> None:
    """Wait until the sender's loop has run everything handed to it so far (its current step included)."""
    async def nothing():
        pass

    transport.asyncio.run_coroutine_threadsafe(nothing(), s.loop).result(10)


def test_doorbells_go_out_in_the_order_they_rang_and_a_failure_stops_nothing(sender, caplog):
    layer = Layer(fail={1}, until=6)
    s = sender(layer)
    for n in range(6):
        s.submit(f"campaign-{n % 2}", {"type": "table.events", "n": n})
    assert layer.done.wait(10)
    assert layer.sent == [(f"campaign-{n % 2}", n) for n in range(6)]
    assert "broadcast failed" in caplog.text


def test_a_backlog_for_a_stalled_redis_keeps_the_newest_doorbells(sender, monkeypatch, caplog):
    monkeypatch.setattr(transport._Sender, "MAX_WAITING", 3)
    layer = Layer(until=4, held=True)
    s = sender(layer)
    s.submit("campaign-1", {"type": "table.events", "n": 0})
    assert layer.started.wait(10)  # the first is being sent, and hangs
    for n in range(1, 8):  # seven wait, for three places
        s.submit("campaign-1", {"type": "table.events", "n": n})
    layer.let_go(s.loop)
    assert layer.done.wait(10)
    settled(s)
    assert [n for _, n in layer.sent] == [0, 5, 6, 7]
    assert "4 doorbells waited too long" in caplog.text
    assert s.waiting == {}


def test_after_an_outage_the_new_doorbells_do_not_wait_behind_the_old(sender, caplog):
    clock = [100.0]
    layer = Layer(until=2, held=True)
    s = sender(layer)
    s.clock = lambda: clock[0]
    s.submit("campaign-1", {"type": "table.events", "n": 0})
    assert layer.started.wait(10)  # Redis stops answering during the first send
    for n in range(1, 4):
        s.submit("campaign-1", {"type": "table.events", "n": n})
    clock[0] += s.STALE_AFTER + 1  # the outage lasts
    s.submit("campaign-2", {"type": "table.events", "n": 4})  # rung just as Redis answers again
    layer.let_go(s.loop)
    assert layer.done.wait(10)
    settled(s)
    assert [n for _, n in layer.sent] == [0, 4]
    assert "3 doorbells waited too long" in caplog.text


def test_a_sender_whose_loop_has_closed_keeps_nothing_waiting(sender, caplog):
    s = sender(Layer())
    s.loop.call_soon_threadsafe(s.loop.stop)
    s.thread.join(10)
    s.loop.close()
    for n in range(2):  # each is refused at once; none is left behind for a drain that can't come
        s.submit("campaign-1", {"type": "table.events", "n": n})
        assert s.waiting == {}
    assert caplog.text.count("broadcast failed") == 2
