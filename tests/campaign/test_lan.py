"""`make run` reachable from the LAN: the host names it answers to (campaign/lan.py, Makefile)."""

from __future__ import annotations

import shutil
import socket
import subprocess
from pathlib import Path

import pytest

from campaign.lan import allowed_hosts, share_urls

ROOT = Path(__file__).resolve().parents[2]


def test_on_loopback_only_loopback_names_are_allowed():
    assert allowed_hosts("127.0.0.1") == ["127.0.0.1", "localhost"]


def test_on_every_interface_the_machine_names_are_allowed():
    hosts = allowed_hosts("0.0.0.0")
    name = socket.gethostname()
    assert hosts[:2] == ["127.0.0.1", "localhost"]
    assert name in hosts and f"{name}.local" in hosts
    assert "0.0.0.0" not in hosts and len(hosts) == len(set(hosts))
    assert allowed_hosts("192.168.1.20")[-1] == "192.168.1.20"  # bound to one address: that one too


def test_the_urls_to_share_name_the_machine_not_0_0_0_0():
    assert all("0.0.0.0" not in url for url in share_urls("0.0.0.0", "8000"))
    assert share_urls("127.0.0.1", "8000") == ["http://127.0.0.1:8000/"]


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
@pytest.mark.parametrize("args, hosts", [
    (["HOST=0.0.0.0"], ",".join(allowed_hosts("0.0.0.0"))),
    (["HOST=0.0.0.0", "ALLOWED_HOSTS=*"], "*"),
    ([], "127.0.0.1,localhost"),
])
def test_make_run_passes_the_allowed_hosts_to_daphne(args, hosts):
    dry = subprocess.run(["make", "-n", "-s", "run", *args], cwd=ROOT, capture_output=True, text=True, check=True,
                         env={"PATH": "/usr/bin:/bin"})
    daphne = next(line for line in dry.stdout.splitlines() if "daphne" in line)
    assert f"ALLOWED_HOSTS='{hosts}'" in daphne
