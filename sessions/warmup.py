"""What a process does once, before it accepts a connection, so that its first tables don't pay it.

Without it the first commands after a start (or a rolling restart) paid, in their own latency:
opening a PostgreSQL connection for each socket database thread (the pool opens one at a time, on
demand), compiling templates and the URL resolver, and importing the modules only a rarer path
imports (which also leaves them out of the frozen generation, campaign/asgi.py). ``bench/`` reports
the first seconds of rolling after each start apart from the steady state.

Nothing here writes: a warm-up that fails (PostgreSQL still starting) is logged and the process
starts anyway; its first commands then pay what is left, as they would have.
"""

from __future__ import annotations

import importlib
import logging
import pkgutil
import threading
from time import perf_counter

from django.db import close_old_connections, connection
from django.template import TemplateDoesNotExist
from django.template.loader import get_template
from django.urls import get_resolver

from .db import concurrent, executor, workers

log = logging.getLogger(__name__)
PACKAGES = ("rules", "campaign", "sessions")
SKIPPED = {"campaign.asgi", "campaign.lan", "campaign.verifier"}  # entry points, not the server's code
PAGES = ("base.html", "table.html", "home.html", "verify.html", "audit.html", "403.html", "404.html", "503.html")


def _import_everything() -> int:
    count = 0
    for name in PACKAGES:
        package = importlib.import_module(name)
        for module in pkgutil.walk_packages(package.__path__, f"{name}."):
            if module.name in SKIPPED or ".migrations" in module.name or ".management" in module.name:
                continue
            importlib.import_module(module.name)
            count += 1
    return count


def _open_connections() -> int:
    """One pooled connection per socket database thread, all open at once (each thread holds its
    own until every thread has one, so the pool opens that many rather than lending one around)."""
    if not concurrent():
        return 0
    threads = workers()
    everyone = threading.Barrier(threads, timeout=10)

    def touch():
        close_old_connections()
        try:
            with connection.cursor() as cursor:
                cursor.execute("SELECT 1")
            everyone.wait()
        finally:
            close_old_connections()

    for done in [executor().submit(touch) for _ in range(threads)]:
        done.result()
    return threads


def warm() -> dict[str, float]:
    """Warm this process; returns how long each step took (ms), which it also logs."""
    took = {}
    for step, run in (("imports", _import_everything), ("connections", _open_connections),
                      ("templates", lambda: [_template(name) for name in PAGES]),
                      ("urls", lambda: get_resolver().reverse_dict)):
        start = perf_counter()
        try:
            run()
        except Exception as e:  # never a reason not to start: the first commands pay what is left
            log.warning("warm-up step %s failed: %r", step, e)
        took[step] = round((perf_counter() - start) * 1000, 1)
    log.info("warmed up in %s ms (%s)", round(sum(took.values()), 1),
             ", ".join(f"{step} {ms}" for step, ms in took.items()))
    return took


def _template(name: str) -> None:
    try:
        get_template(name)
    except TemplateDoesNotExist:
        pass
