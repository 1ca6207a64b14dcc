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

# Does not depend on the database engine (static files): the SQLite pass leaves it out.
pytestmark = pytest.mark.one_database

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


def _imports(text: str) -> list[str]:
    return re.findall(r'from "(\.{1,2}/[^"]+)"', text)


def test_every_collected_module_imports_the_current_hashed_names():
    """A module's hashed name covers the names it imports, level by level (campaign/staticstorage.py):
    every module imports the manifest's own name of each module, none a plain or an older one."""
    import json

    from django.conf import settings

    root = Path(settings.STATIC_ROOT)
    paths = json.loads((root / "staticfiles.json").read_text())["paths"]
    current = set(paths.values())
    modules = [name for name in current if name.startswith("talekeeper/") and name.endswith(".js")]
    assert "talekeeper/state.js" in paths and len(modules) > 30
    for name in modules:
        for imported in _imports((root / name).read_text()):
            target = os.path.normpath(os.path.join(os.path.dirname(name), imported))
            assert target in current and re.search(r"\.[0-9a-f]{12}\.js$", target), (name, imported)


def test_the_table_page_preloads_every_module_it_imports(table):
    """table.js is one of three dozen modules, a dozen imports deep: the page names them all at once
    (modulepreload) instead of letting the browser find each level after the one before."""
    static = ROOT / "static"
    wanted, todo = set(), ["talekeeper/table.js"]
    while todo:
        name = todo.pop()
        for imported in _imports((static / name).read_text()):
            target = os.path.normpath(os.path.join(os.path.dirname(name), imported))
            if target not in wanted:
                wanted.add(target)
                todo.append(target)
    page = client_for(table.alice).get(f"/campaigns/{table.campaign.slug}/").content.decode()
    preloaded = {re.sub(r"\.[0-9a-f]{12}\.js$", ".js", href.removeprefix("/static/"))
                 for href in re.findall(r'<link rel="modulepreload" href="([^"]+)">', page)}
    assert preloaded == wanted


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


def test_the_readmes_nginx_caches_for_good_exactly_the_hashed_names():
    """The README's nginx example serves STATIC_ROOT itself: its location for hashed names must match
    every name collectstatic hashed (else an upgrade's files are cached for 60 s only) and no plain
    name (else a plain name's old content would be cached for good)."""
    import json

    from django.conf import settings

    readme = (ROOT / "README.md").read_text()
    [nginx] = re.findall(r"```nginx\n(.*?)```", readme, re.S)
    [pattern] = re.findall(r'location ~ "([^"]+)" \{\s*#[^\n]*\n\s*expires max;', nginx)
    hashed = re.compile(pattern)
    paths = json.loads((Path(settings.STATIC_ROOT) / "staticfiles.json").read_text())["paths"]
    assert len(paths) > 30
    for plain, name in paths.items():
        assert hashed.search("/static/" + name) and not hashed.search("/static/" + plain), (plain, name, pattern)


def test_an_upgrades_collectstatic_keeps_the_last_releases_files_for_the_tabs_still_open(settings, tmp_path):
    """docs/operations.md, "Upgrades" step 2: the next release collected into the same STATIC_ROOT adds
    its hashed files beside the last one's, and a process started after serves both: a tab opened
    before the upgrade still loads the modules it names, a tab opened after gets the new ones."""
    import json
    import shutil

    source = tmp_path / "static"
    shutil.copytree(ROOT / "static", source)
    settings.STATICFILES_DIRS = [source]
    settings.STATIC_ROOT = str(tmp_path / "collected")

    def release() -> dict[str, str]:
        call_command("collectstatic", interactive=False, verbosity=0)
        return json.loads((tmp_path / "collected" / "staticfiles.json").read_text())["paths"]

    before = release()
    changed = source / "talekeeper" / "format.js"
    changed.write_text(changed.read_text() + "\n// the next release\n")
    after = release()
    assert after["talekeeper/format.js"] != before["talekeeper/format.js"]
    # Its importers' names change with it: an old tab's modules import only old names.
    assert after["talekeeper/table.js"] != before["talekeeper/table.js"]
    client = Client()  # a process started after the upgrade: its WhiteNoise scans STATIC_ROOT now
    for name in (before["talekeeper/table.js"], before["talekeeper/format.js"], after["talekeeper/table.js"]):
        assert client.get(f"/static/{name}").status_code == 200, name
