"""The soak's memory probe (sessions/memwatch.py): off unless TRACEMALLOC_FILE is set, and when on it
names the line that allocated what grew."""

import json
import tracemalloc

from django.test import override_settings

from sessions import memwatch


@override_settings(TRACEMALLOC_FILE="")
def test_off_by_default():
    assert memwatch.start_from_settings() is None


def test_a_sample_names_the_site_that_grew(tmp_path):
    was_tracing = tracemalloc.is_tracing()
    if not was_tracing:
        tracemalloc.start(4)
    try:
        probe = memwatch.Probe(str(tmp_path / "memwatch.jsonl"), 300, 4)
        first_line, first = probe.sample(None, None)
        assert "since_first" not in first_line and first_line["traced_kb"] >= 0
        kept = [bytearray(1024) for _ in range(2000)]  # about 2 MB, alive until the next sample
        line, _ = probe.sample(first, first)
        assert kept
        top = line["since_first"][0]
        assert top["at"] == [f"{__file__}:{test_a_sample_names_the_site_that_grew.__code__.co_firstlineno + 8}"]
        assert top["kb"] >= 1900
        callers = line["since_first_tracebacks"][0]["callers"][0]
        assert callers["kb"] >= 1900 and callers["at"][0] == top["at"][0]
        assert json.loads(json.dumps(line)) == line
    finally:
        if not was_tracing:
            tracemalloc.stop()


def test_the_settings_switch_it_on(tmp_path, monkeypatch):
    started = []
    monkeypatch.setattr(memwatch.Probe, "start", lambda self: started.append(self))
    with override_settings(TRACEMALLOC_FILE=str(tmp_path / "m.jsonl"), TRACEMALLOC_SECONDS=60, TRACEMALLOC_FRAMES=3):
        probe = memwatch.start_from_settings()
    assert started == [probe] and (probe.every_s, probe.frames) == (60, 3)
