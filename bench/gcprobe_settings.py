"""The app's settings, plus a log line for every garbage collection that pauses the process for more
than 5 ms (``GCPAUSE gen<n> <ms>ms collected=<count>``, on stderr: the daphne's log in
``bench/results/logs/<run>/``). For the garbage-collection experiment in docs/performance.md:

    .venv/bin/python bench/run.py --only live --live-procs 1 --live-scenarios rules --rounds 1 \\
        --app-settings bench.gcprobe_settings
    grep -h GCPAUSE bench/results/logs/<run>/app-*
"""

import gc
import sys
import time

from campaign.settings import *  # noqa: F401,F403

_started = [0.0]


def _log_pause(phase, info):
    if phase == "start":
        _started[0] = time.perf_counter()
        return
    ms = (time.perf_counter() - _started[0]) * 1000
    if ms > 5:
        print(f"GCPAUSE gen{info['generation']} {ms:.1f}ms collected={info['collected']}", file=sys.stderr, flush=True)


gc.callbacks.append(_log_pause)
