"""LiveReports (results/live.py): a trial's end asks for the reports and returns at once; the thread coalesces the
asks into few rewrites; close(final=True) writes the last state before returning and raises what that write raises."""
from __future__ import annotations

import threading
import time

import pytest

from playground.sweeps.results.live import LiveReports


def test_an_update_returns_while_a_rewrite_is_under_way_and_asks_are_coalesced():
    release, started = threading.Event(), threading.Event()
    writes = []

    def write() -> None:
        writes.append(time.monotonic())
        started.set()
        release.wait()

    live = LiveReports(write, min_seconds=0.2)
    live.update()
    assert started.wait(60)
    began = time.monotonic()
    for _ in range(100):      # a slot never waits for the reports: these return while write() is blocked
        live.update()
    assert len(writes) == 1
    release.set()
    time.sleep(0.3)
    live.close(final=True)
    elapsed = time.monotonic() - began
    # 100 asks: the first rewrite, at most one more per min_seconds since, and the final one
    assert 2 <= len(writes) <= 3 + elapsed / 0.2
    assert live.refreshes == len(writes)


def test_close_without_final_writes_nothing_more_and_a_failed_final_write_raises(capsys):
    count = [0]

    def failing() -> None:
        count[0] += 1
        raise OSError(28, "No space left on device")

    live = LiveReports(failing, min_seconds=0.01)
    live.update()
    deadline = time.monotonic() + 60
    while count[0] == 0 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert "the reports could not be rewritten" in capsys.readouterr().err   # said, and the slots went on
    with pytest.raises(OSError, match="No space left"):
        live.close(final=True)

    quiet = LiveReports(lambda: count.append("wrote"), min_seconds=0.01)
    quiet.close(final=False)
    assert "wrote" not in count and quiet.refreshes == 0
