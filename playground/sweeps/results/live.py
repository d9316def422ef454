"""The reports of a running agent, rewritten by one background thread, off the slots' path.

A trial's end calls `update()`, which returns at once; the thread then rewrites the reports (write_summary with
the agent's ReportCache: only what changed is read or written), at most once per `min_seconds` and never
for more than about a tenth of its time, so the reports cost a slot nothing however many trials the sweep
has. A long refresh (an agent's first on a sweep of thousands of trials reads every folder once) calls
`pace()` between folders, which sleeps to keep to that tenth: the slots' threads share the interpreter with it.
`close()` stops the thread and, when asked, writes the final state before it returns: the reports of a sweep
that ended are what `sweep summary` would write. A refresh that fails (a full disk) is said once on
stderr and tried again at the next update; the final write raises.
"""
from __future__ import annotations

import sys
import threading
import time
from typing import Callable

MIN_SECONDS = 1.0     # between two refreshes while trials end
SHARE = 0.1           # the most of the thread's time spent refreshing (the pause after one is 9x its length)
SLICE = 0.02          # pace(): the longest stretch of work between two pauses


class LiveReports:
    def __init__(self, write: Callable[[], object], min_seconds: float = MIN_SECONDS) -> None:
        self._write, self._min_seconds = write, min_seconds
        self._wanted = threading.Event()
        self._closing = threading.Event()
        self._lock = threading.Lock()         # one refresh at a time: the thread's or close()'s
        self._failed = False
        self.refreshes = 0
        self._resumed = 0.0
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
            self._resumed = time.monotonic()
            with self._lock:
                self._refresh()
            unpaid = time.monotonic() - self._resumed    # the work since pace() last paused for it
            self._closing.wait(max(self._min_seconds, unpaid * (1 - SHARE) / SHARE))

    def pace(self) -> None:
        """Between two steps of a long refresh by the thread: pause so it keeps to its share of the time. The final
        write (close) and any write from another thread go at full speed."""
        if self._closing.is_set() or threading.current_thread() is not self._thread:
            return
        busy = time.monotonic() - self._resumed
        if busy >= SLICE:
            pause = busy * (1 - SHARE) / SHARE
            self._closing.wait(pause)
            self._resumed = time.monotonic()

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
