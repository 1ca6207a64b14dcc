"""Fixtures shared by the campaign tests."""

import pytest

from tests.campaign.test_audit import play


@pytest.fixture
def played(table):
    """The Torn Road after an evening of play (see ``tests.campaign.test_audit.play``)."""
    return play(table)
