"""Migration campaign/0007: tokens made before it keep working, stored from then on as digests."""

from __future__ import annotations

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.test import Client

from campaign.models import ApiToken, token_digest

BEFORE = [("campaign", "0006_character_snapshot")]


@pytest.mark.django_db(transaction=True)
def test_plain_tokens_become_digests_and_keep_working(transactional_table):
    executor = MigrationExecutor(connection)
    after = [key for key in executor.loader.graph.leaf_nodes() if key[0] == "campaign"]
    executor.migrate(BEFORE)
    old_apps = executor.loader.project_state(BEFORE).apps
    OldToken = old_apps.get_model("campaign", "ApiToken")
    OldToken.objects.create(user_id=transactional_table.alice.pk, key="plain-old-token-of-alice")

    executor = MigrationExecutor(connection)  # a fresh loader sees what is applied now
    executor.migrate(after)

    token = ApiToken.objects.get(user=transactional_table.alice)
    assert token.digest == token_digest("plain-old-token-of-alice") and token.prefix == "plain-"
    assert "plain-old-token-of-alice" not in str(list(ApiToken.objects.values_list()))
    res = Client().get("/api/campaigns/torn-road/events", HTTP_AUTHORIZATION="Bearer plain-old-token-of-alice")
    assert res.status_code == 200
