"""The members' standalone verifier as one file, ``talekeeper-verify.pyz``, that runs with
``python3 -I talekeeper-verify.pyz EXPORT.jsonl`` and nothing installed.

``make verifier`` (``python3 -m campaign.verifier``) writes it to ``dist/``; the server offers the
same bytes at ``/talekeeper-verify.pyz`` (:func:`download`). Standard library only, like
campaign/lan.py, so any python3 builds it.

It holds ``tools/talekeeper_verify.py`` and every module of ``rules/`` (pure Python: the verifier
replays the rules with them). The build is reproducible: the same sources give the same bytes
(entries sorted, one fixed date and mode, no compiled files), so a member can rebuild it from a
checkout and compare its SHA-256 with the copy a server offers: a verifier fetched from the host
it checks is only as honest as that host until someone compares it.
"""

from __future__ import annotations

import functools
import hashlib
import io
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TARGET = ROOT / "dist" / "talekeeper-verify.pyz"
SHEBANG = b"#!/usr/bin/env python3\n"
FIXED_DATE = (1980, 1, 1, 0, 0, 0)  # the earliest a zip can say: no build time in the bytes
MAIN = b'''"""Talekeeper's standalone verifier (tools/talekeeper_verify.py, with rules/)."""
import sys

from talekeeper_verify import main

sys.exit(main())
'''


def sources() -> dict[str, bytes]:
    """The archive's entries by name: ``__main__.py``, the verifier, ``rules/`` (Python files only)."""
    entries = {"__main__.py": MAIN, "talekeeper_verify.py": (ROOT / "tools" / "talekeeper_verify.py").read_bytes()}
    for path in (ROOT / "rules").rglob("*.py"):
        if "__pycache__" not in path.parts:
            entries[path.relative_to(ROOT).as_posix()] = path.read_bytes()
    return entries


@functools.lru_cache(maxsize=1)
def archive() -> bytes:
    """The archive's bytes (the sources don't change while a server runs: made once per process)."""
    buffer = io.BytesIO()
    buffer.write(SHEBANG)
    with zipfile.ZipFile(buffer, "w") as out:
        for name, data in sorted(sources().items()):
            info = zipfile.ZipInfo(name, date_time=FIXED_DATE)
            info.compress_type = zipfile.ZIP_STORED  # no compressor whose output could vary by version
            info.external_attr = 0o644 << 16
            info.create_system = 3  # Unix, whatever machine builds it
            out.writestr(info, data)
    return buffer.getvalue()


def build(target: Path = TARGET) -> str:
    """Write the archive to ``target``; return its SHA-256 (hex)."""
    data = archive()
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(target.name + ".partial")
    partial.write_bytes(data)
    partial.chmod(0o755)
    partial.replace(target)
    return hashlib.sha256(data).hexdigest()


def download(request):
    """``GET /talekeeper-verify.pyz``: the verifier built from the code this server runs (public)."""
    # Here, not at the top: ``python3 -m campaign.verifier`` (make verifier) runs with no Django.
    from django.http import HttpResponse, HttpResponseNotAllowed

    if request.method not in ("GET", "HEAD"):
        return HttpResponseNotAllowed(["GET", "HEAD"])
    response = HttpResponse(archive(), content_type="application/zip")
    response["Content-Disposition"] = 'attachment; filename="talekeeper-verify.pyz"'
    response["X-Content-SHA256"] = hashlib.sha256(archive()).hexdigest()
    return response


if __name__ == "__main__":
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else TARGET
    digest = build(out)
    print(f"{out.relative_to(ROOT) if out.is_relative_to(ROOT) else out}  sha256 {digest}")
