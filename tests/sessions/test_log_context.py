"""A table socket names itself, its campaign and its user on every line it logs (campaign/logs.py)."""

from __future__ import annotations

import pytest

from campaign.logs import bound
from sessions import consumers

from .test_table_consumer import connect, until_ready

pytestmark = pytest.mark.django_db(transaction=True)


async def test_what_a_socket_logs_names_the_socket_its_campaign_and_user(table, monkeypatch):
    seen = []
    read = consumers.events_after

    def reading(*args, **kwargs):  # runs on the database thread: the fields follow the socket there
        seen.append(bound())
        return read(*args, **kwargs)

    monkeypatch.setattr(consumers, "events_after", reading)
    comm = await connect(table, table.alice)
    await until_ready(comm)
    await comm.disconnect()
    (fields,) = seen
    assert fields["campaign"] == "torn-road" and fields["user"] == table.alice.pk and fields["socket"]
