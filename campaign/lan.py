"""The host names a friend on your network may type to reach ``make run``.

``make run HOST=0.0.0.0`` listens on every interface; Django (and the WebSocket origin
check) then only answers to names in ``ALLOWED_HOSTS``, so this lists the ones that reach
this machine: its loopback names, its host name (and ``<name>.local``, which mDNS resolves
on most home networks) and its addresses. Standard library only: the Makefile runs it.

    python -m campaign.lan HOST            -> comma-separated ALLOWED_HOSTS for HOST
    python -m campaign.lan --urls HOST PORT -> the addresses to share, one per line
"""

from __future__ import annotations

import socket
import sys

LOOPBACK = ["127.0.0.1", "localhost"]
EVERY_INTERFACE = {"0.0.0.0", "::", ""}


def machine_addresses() -> list[str]:
    """This machine's IPv4 addresses other than loopback, best first (the default route's)."""
    found: list[str] = []
    try:
        # Connecting a UDP socket sends nothing; it only makes the kernel pick the
        # address it would route from (the one friends on the LAN can reach).
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
            probe.connect(("192.0.2.1", 9))  # TEST-NET-1: never a real destination
            found.append(probe.getsockname()[0])
    except OSError:
        pass  # no route at all (offline): the host name's addresses below still count
    try:
        found += [info[4][0] for info in socket.getaddrinfo(socket.gethostname(), None, socket.AF_INET)]
    except OSError:
        pass
    return [a for i, a in enumerate(found) if a not in found[:i] and not a.startswith("127.")]


def allowed_hosts(host: str) -> list[str]:
    """ALLOWED_HOSTS for a server bound to ``host``."""
    if host in LOOPBACK:
        return list(LOOPBACK)
    name = socket.gethostname()
    names = [*LOOPBACK, name, f"{name}.local", *machine_addresses()]
    if host not in EVERY_INTERFACE:
        names.append(host)  # bound to one address: that one
    return [n for i, n in enumerate(names) if n and n not in names[:i]]


def share_urls(host: str, port: str) -> list[str]:
    """What to tell friends: the machine's addresses when listening on every interface."""
    if host in EVERY_INTERFACE:
        return [f"http://{a}:{port}/" for a in machine_addresses()] or [f"http://{socket.gethostname()}.local:{port}/"]
    return [f"http://{host}:{port}/"]


def main(argv: list[str]) -> int:
    if argv[:1] == ["--urls"] and len(argv) == 3:
        print("Talekeeper is at " + "  or  ".join(share_urls(argv[1], argv[2])) + " (Ctrl-C stops it)")
        return 0
    if len(argv) == 1:
        print(",".join(allowed_hosts(argv[0])))
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
