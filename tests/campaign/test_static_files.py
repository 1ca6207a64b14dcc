"""Static files with DEBUG off (campaign/staticstorage.py): hashed names a release never shares with
another, compressed, cached for good; and a clear refusal when they were not collected."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import SystemCheckError
from django.test import Client

from campaign.checks import static_files_problem
from tests.campaign.served import client_for

ROOT = Path(__file__).resolve().parents[2]
HASHED = re.compile(r"/static/talekeeper/table\.[0-9a-f]{12}\.js")


def test_pages_name_hashed_modules_and_those_import_hashed_modules(table):
    page = client_for(table.alice).get(f"/campaigns/{table.campaign.slug}/").content.decode()
    [script] = HASHED.findall(page)
    assert re.search(r'"systemModule": "/static/talekeeper/systems/tote\.[0-9a-f]{12}\.js"', page)
    res = Client().get(script, HTTP_ACCEPT_ENCODING="gzip")
    assert res.status_code == 200 and res["Content-Encoding"] == "gzip"
    assert "immutable" in res["Cache-Control"] and "max-age=315360000" in res["Cache-Control"]
    body = b"".join(res.streaming_content)
    import gzip

    imports = re.findall(r'from "(\./[^"]+)"', gzip.decompress(body).decode())
    assert imports and all(re.search(r"\.[0-9a-f]{12}\.js$", path) for path in imports), imports


def test_uncollected_static_files_stop_check_deploy_and_the_server(settings, tmp_path, db):
    settings.STATIC_ROOT = str(tmp_path)
    assert "collectstatic" in static_files_problem()
    with pytest.raises(SystemCheckError, match="talekeeper.E002"):
        call_command("check", "--deploy", "--fail-level", "ERROR")
    env = {**os.environ, "STATIC_ROOT": str(tmp_path), "DEBUG": "0"}
    done = subprocess.run([sys.executable, "-c", "import campaign.asgi"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 1 and "can't start" in done.stderr and "collectstatic" in done.stderr


def test_debug_serves_the_files_as_they_are_without_collecting(settings, tmp_path):
    settings.DEBUG = True
    settings.STATIC_ROOT = str(tmp_path)
    assert static_files_problem() is None
