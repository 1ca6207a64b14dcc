"""The test-only dice seam (``TEST_DICE_FILE``, campaign/dice.py) and the check that keeps it
out of production (campaign/settings.py)."""

import json
import os
import subprocess
import sys

import pytest

from campaign.dice import QueuedDice, Unscripted
from rules import ScriptedDice
from tests.servers import ROOT

# Does not depend on the database engine (the test dice seam): the SQLite pass leaves it out.
pytestmark = pytest.mark.one_database


def test_queued_faces_are_rolled_in_order_then_a_die_is_refused(tmp_path):
    path = tmp_path / "faces.json"
    path.write_text(json.dumps({"faces": [6, 1]}))
    dice = QueuedDice(str(path), real=ScriptedDice([4]))
    assert [dice.roll(6), dice.roll(6)] == [6, 1]
    with pytest.raises(Unscripted, match="No scripted face left for a d20"):
        dice.roll(20)  # not the real dice: the script never said so
    assert json.loads(path.read_text()) == {"faces": [], "refused": ["d20"]}  # noted for the test to report


def test_a_script_that_opts_in_rolls_the_real_dice_once_its_faces_are_used_up(tmp_path):
    path = tmp_path / "faces.json"
    path.write_text(json.dumps({"faces": [6], "real": True}))
    dice = QueuedDice(str(path), real=ScriptedDice([4]))
    assert [dice.roll(6), dice.roll(6)] == [6, 4]


def test_a_face_not_on_the_die_fails_loudly(tmp_path):
    path = tmp_path / "faces.json"
    path.write_text(json.dumps({"faces": [7]}))
    with pytest.raises(ValueError, match="not on a d6"):
        QueuedDice(str(path), real=ScriptedDice([])).roll(6)


def load_settings(**env) -> subprocess.CompletedProcess:
    environment = {**os.environ, "SECRET_KEY": "x" * 50, "TEST_DICE_FILE": "/tmp/faces.json", **env}
    environment.pop("REDIS_URL", None)
    return subprocess.run([sys.executable, "-c", "import django; django.setup()"], cwd=ROOT, env=environment,
                          capture_output=True, text=True, timeout=60)


def test_a_production_server_refuses_scripted_dice():
    refused = load_settings(DEBUG="0", DATABASE_URL="postgres://talekeeper@db:5432/talekeeper")
    assert refused.returncode != 0 and "TEST_DICE_FILE scripts the server's dice" in refused.stderr


@pytest.mark.parametrize("env", [{"DEBUG": "0", "DATABASE_URL": "postgres://postgres@127.0.0.1:5432/test_tk"},
                                 {"DEBUG": "1", "DATABASE_URL": "sqlite:///talekeeper.sqlite3"}])
def test_a_test_database_or_debug_allows_them(env):
    assert load_settings(**env).returncode == 0
