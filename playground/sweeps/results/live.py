"""The reports of a running agent, rewritten by one background thread, off the slots' path.

A trial's end calls `update()`, which returns at once; the thread then rewrites the reports (write_summary with
the agent's ReportCache: only what changed is read or written), at most once per `min_seconds` and never
for more than about a tenth of its time, so the reports cost a slot nothing however many trials the sweep
has. `close()` stops the thread and, when asked, writes the final state before it returns: the reports of a
sweep that ended are what `sweep summary` would write. A refresh that fails (a full disk) is said once on
stderr and tried again at the next update; the final write raises.
"""
from __future__ import annotations

import sys
import threading
import time
from typing import Callable

MIN_SECONDS = 1.0     # between two refreshes while trials end
SHARE = 0.1           # the most of the thread's time spent refreshing (the pause after one is 9x its length)


class LiveReports:
    def __init__(self, write: Callable[[], object], min_seconds: float = MIN_SECONDS) -> None:
        self._write, self._min_seconds = write, min_seconds
        self._wanted = threading.Event()
        self._closing = threading.Event()
        self._lock = threading.Lock()         # one refresh at a time: the thread's or close()'s
        self._failed = False
        self.refreshes = 0
        self._thread = threading.Thread(target=self._loop, name="sweep-reports", daemon=True)
        self._thread.start()

    def update(self) -> None:
        """Something changed: the reports are rewritten soon, by the thread."""
        self._wanted.set()

    def close(self, final: bool) -> None:
        """Stop the thread; `final`: write the reports now (an error then propagates)."""
        self._closing.set()
        self._wanted.set()
        self._thread.join()
        if final:
            with self._lock:
                self._write()
                self.refreshes += 1

    def _loop(self) -> None:
        while True:
            self._wanted.wait()
            if self._closing.is_set():
                return
            self._wanted.clear()
            started = time.monotonic()
            with self._lock:
                self._refresh()
            spent = time.monotonic() - started
            self._closing.wait(max(self._min_seconds, spent * (1 - SHARE) / SHARE))

    def _refresh(self) -> None:
        try:
            self._write()
            self.refreshes += 1
            self._failed = False
        except Exception as err:      # noqa: BLE001  the slots go on; the final write raises it again
            if not self._failed:
                print(f"[sweep] the reports could not be rewritten ({err}); trying again at the next trial's end",
                      file=sys.stderr, flush=True)
            self._failed = True
