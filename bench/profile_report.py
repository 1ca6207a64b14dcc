"""Summarise py-spy collapsed stacks (``run.py --py-spy``): where the daphne processes spent their time.

    .venv/bin/python bench/profile_report.py bench/results/profiles/<run>-*.txt [--top 25] [--grep TEXT]

py-spy samples wall-clock stacks of running threads. Samples whose top frame
is a wait for work (the event loop's ``select``, an idle worker's queue) are
dropped. For all the files together this prints the share of the remaining
samples under a few buckets that matter for Talekeeper, both of all threads
and of the one database thread per process (``database_sync_to_async`` runs
every database call of a process on one thread, so its time is the
per-process bottleneck), then the functions most often on the stack.
"""

from __future__ import annotations

import argparse
import re
from collections import Counter
from pathlib import Path

FRAME = re.compile(r"^(?P<func>.+?) \((?P<file>[^()]*?)(?::(?P<line>\d+))?\)$")

IDLE_TOPS = ("EpollSelector.select", "select (selectors.py", "Condition.wait", "SimpleQueue.get",
             "_worker (concurrent", "wait (threading.py")

BUCKETS = {
    "PostgreSQL connect (new connection)": ("connect (psycopg/connection.py", "get_new_connection", "ensure_connection"),
    "SQL execute (round trips + ORM)": ("execute (django/db/backends/utils.py",),
    "commit": ("commit (django/db/backends/base/base.py",),
    "do_command": ("do_command (campaign/actions/commands.py",),
    "channel layer (channels_redis)": ("channels_redis/",),
    "django cache (rate limit)": ("django/core/cache/",),
    "presence (sessions/presence.py)": ("sessions/presence.py",),
    "json encode/decode": ("json/encoder.py", "json/decoder.py"),
    "rules engines": ("/rules/",),
    "twisted/autobahn (socket I/O)": ("twisted/", "autobahn/"),
}


def _short(frame: str) -> str:
    m = FRAME.match(frame.strip())
    if not m:
        return frame.strip()
    path = m.group("file")
    for marker in ("site-packages/", "/work/main/", "lib/python3.11/"):
        if marker in path:
            path = path.split(marker, 1)[1]
    return f"{m.group('func')} ({path})"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("files", nargs="+", type=Path)
    p.add_argument("--top", type=int, default=25)
    p.add_argument("--grep", help="only functions whose name or file contains this")
    a = p.parse_args(argv)
    inclusive, selfc, buckets, db_buckets = Counter(), Counter(), Counter(), Counter()
    total = db_total = idle = 0
    for path in a.files:
        for line in path.read_text().splitlines():
            stack, _, count = line.rpartition(" ")
            if not stack or not count.isdigit():
                continue
            n = int(count)
            frames = [_short(f) for f in stack.split(";")]
            if frames and frames[-1].startswith(IDLE_TOPS):
                idle += n
                continue
            total += n
            joined = ";".join(frames)
            on_db_thread = "DatabaseSyncToAsync.thread_handler" in joined
            db_total += n if on_db_thread else 0
            for f in set(frames):
                inclusive[f] += n
            if frames:
                selfc[frames[-1]] += n
            for name, needles in BUCKETS.items():
                if any(needle in joined for needle in needles):
                    buckets[name] += n
                    if on_db_thread:
                        db_buckets[name] += n
    if not total:
        print("no samples")
        return 1
    print(f"{total} busy samples ({idle} idle dropped) in {len(a.files)} file(s); "
          f"{db_total} on the database thread ({100 * db_total / total:.1f}%)\n")
    print(f"  {'bucket':<40} {'all':>6} {'db thread':>10}")
    for name, n in buckets.most_common():
        db = f"{100 * db_buckets[name] / db_total:9.1f}%" if db_total else "        -"
        print(f"  {name:<40} {100 * n / total:5.1f}% {db}")
    print(f"\ntop {a.top} functions by inclusive share (self share):")
    shown = 0
    for f, n in inclusive.most_common():
        if a.grep and a.grep not in f:
            continue
        print(f"  {100 * n / total:5.1f}%  ({100 * selfc[f] / total:4.1f}%)  {f}")
        shown += 1
        if shown >= a.top:
            break
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
