"""The contract suites play every system's evening in a campaign whose members sign (as every new
campaign does): each command goes through the signature checks before the rules decide it. The
unsigned path is the rest of the suite's (``Table()``)."""

import pytest

from tests.conftest import Table


@pytest.fixture
def table_for(db):
    """``table_for("wyrm")``: a signed table playing that system (tests/conftest.py ``Table(signed=True)``)."""
    return lambda system: Table(system, signed=True)
