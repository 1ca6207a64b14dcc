"""A memory probe for soaks: where a long-running process's Python memory grows.

Started by ``campaign/asgi.py`` in a daphne process only when ``TRACEMALLOC_FILE`` is set (never by
default: tracing costs every allocation). A daemon thread takes a tracemalloc snapshot every
``TRACEMALLOC_SECONDS`` and appends one JSON line to the file: the process's RSS (``VmRSS``), the
memory tracemalloc traces now and at its peak, the objects the collector tracks, and the allocation
sites (file and line) that grew most since the first snapshot and since the previous one, with the
callers (``TRACEMALLOC_FRAMES`` deep) of the blocks alive at the top sites. RSS growing while the traced memory stays flat is the allocator
(fragmentation, arenas), not Python objects kept alive. ``bench/soak.py`` reads the file.
"""

from __future__ import annotations

import gc
import json
import os
import threading
import time
import tracemalloc

TOP = 15
TRACED_SITES = 5  # the growing sites whose callers (tracebacks) a sample records
# tracemalloc's and the import system's own allocations are not the server's.
IGNORED = (tracemalloc.__file__, "<frozen importlib._bootstrap>", "<frozen importlib._bootstrap_external>",
           "<unknown>")


def rss_kb() -> int | None:
    try:
        with open(f"/proc/{os.getpid()}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return None


def _snapshot() -> tracemalloc.Snapshot:
    return tracemalloc.take_snapshot().filter_traces(
        [tracemalloc.Filter(False, pattern) for pattern in IGNORED])


def _growth(new: tracemalloc.Snapshot, old: tracemalloc.Snapshot, key: str) -> list[dict]:
    out = []
    for stat in new.compare_to(old, key)[:TOP]:
        if stat.size_diff <= 0:
            break
        frames = stat.traceback if key == "traceback" else stat.traceback[:1]
        out.append({"kb": round(stat.size_diff / 1024, 1), "count": stat.count_diff,
                    "kb_now": round(stat.size / 1024, 1),
                    "at": [f"{f.filename}:{f.lineno}" for f in frames]})
    return out


def _callers(snap: tracemalloc.Snapshot, site: dict) -> dict:
    """Where the blocks now alive at a growing site (``file:line``) were allocated from, the largest
    first: the traces of that one line grouped by their whole traceback (grouping every trace by
    traceback, and comparing with the first snapshot, held the GIL for a minute in a soak)."""
    filename, _, lineno = site["at"][0].rpartition(":")
    stats = snap.filter_traces([tracemalloc.Filter(True, filename, int(lineno))]).statistics("traceback")
    return {**site, "callers": [{"kb": round(s.size / 1024, 1), "count": s.count,
                                 "at": [f"{f.filename}:{f.lineno}" for f in reversed(s.traceback)]}  # innermost first
                                for s in stats[:3]]}


class Probe:
    def __init__(self, path: str, every_s: float, frames: int):
        self.path, self.every_s, self.frames = path, every_s, frames
        self.stopped = threading.Event()

    def start(self) -> threading.Thread:
        if not tracemalloc.is_tracing():
            tracemalloc.start(self.frames)
        thread = threading.Thread(target=self.run, name="memwatch", daemon=True)
        thread.start()
        return thread

    def sample(self, first, previous) -> tuple[dict, tracemalloc.Snapshot]:
        t0 = time.perf_counter()
        snap = _snapshot()
        current, peak = tracemalloc.get_traced_memory()
        line = {"t": round(time.time(), 1), "pid": os.getpid(), "rss_kb": rss_kb(),
                "traced_kb": current // 1024, "traced_peak_kb": peak // 1024,
                "gc_objects": len(gc.get_objects()), "gc_frozen": gc.get_freeze_count()}
        if first is not None:
            line["since_first"] = _growth(snap, first, "lineno")
            line["since_previous"] = _growth(snap, previous, "lineno")[:TOP // 3]
            line["since_first_tracebacks"] = [_callers(snap, site) for site in line["since_first"][:TRACED_SITES]]
        line["sample_ms"] = round((time.perf_counter() - t0) * 1000)
        return line, snap

    def run(self) -> None:
        # The first sample (the baseline of "since_first") one interval in: after the start-up and
        # the first tables, so what a server allocates once does not read as growth.
        first = previous = None
        while not self.stopped.wait(self.every_s):
            try:
                line, snap = self.sample(first, previous)
                with open(self.path, "a") as f:
                    f.write(json.dumps(line) + "\n")
                first = first or snap
                previous = snap
            except Exception as e:  # noqa: BLE001 (a probe never takes the server down)
                with open(self.path, "a") as f:
                    f.write(json.dumps({"t": round(time.time(), 1), "error": repr(e)}) + "\n")


def start_from_settings() -> Probe | None:
    from django.conf import settings

    if not settings.TRACEMALLOC_FILE:
        return None
    probe = Probe(settings.TRACEMALLOC_FILE, max(1.0, settings.TRACEMALLOC_SECONDS), max(1, settings.TRACEMALLOC_FRAMES))
    probe.start()
    return probe
