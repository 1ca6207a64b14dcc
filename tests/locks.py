"""A campaign's stream lock held by another connection, for as long as a test needs it."""

from __future__ import annotations

import contextlib
import threading


@contextlib.contextmanager
def stream_lock_held(campaign_id: int):
    """Hold the campaign's stream row (``campaign.eventlog.lock_campaign``) in a transaction on a thread
    and connection of its own until the ``with`` block ends (or it calls the ``release`` it is
    given); the block starts once the row is held."""
    from django.db import connections, transaction

    from campaign.eventlog import lock_campaign

    locked, release = threading.Event(), threading.Event()

    def hold():
        try:
            with transaction.atomic():
                lock_campaign(campaign_id)
                locked.set()
                release.wait(timeout=120)  # a bound on a hang, never what is checked
        finally:
            connections.close_all()

    holder = threading.Thread(target=hold, name="stream-lock-holder")
    holder.start()
    try:
        assert locked.wait(timeout=30), "the holder never got the lock"
        yield release.set
    finally:
        release.set()
        holder.join()
