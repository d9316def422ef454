"""Everything the server knows of the served folders: the run and sweep folders found under them, one watch per
folder opened (each follows its files: a file is read once and then only its appends), and the table of runs
with a live process here. Shared by the server's threads; each watch is used under its lock.
"""
from __future__ import annotations

import os
import threading
import time

from playground.outputs.run_folder import RunFolder
from playground.ui.files.discovery import Discovery
from playground.ui.files.roots import Roots
from playground.ui.files.run_processes import ProcessTable
from playground.ui.views.run_watch import RunWatch
from playground.ui.views.sweep_watch import SweepWatch

FIND_SECONDS = 2.0      # the folders are searched for new runs and sweeps at most this often


class Catalog:
    def __init__(self, roots: Roots) -> None:
        self.roots = roots
        self.processes = ProcessTable()
        self._discovery = Discovery(roots.paths)
        self._found: tuple[list[str], list[str]] = ([], [])
        self._found_at = -FIND_SECONDS
        self._runs: dict[str, tuple[threading.Lock, RunWatch]] = {}
        self._sweeps: dict[str, SweepWatch] = {}
        self._lock = threading.Lock()

    def found(self) -> tuple[list[str], list[str]]:
        """(sweep folders, run folders) under the served folders."""
        with self._lock:
            if time.monotonic() - self._found_at >= FIND_SECONDS:
                self._found = self._discovery.find()
                self._found_at = time.monotonic()
            return self._found

    def run(self, path: str) -> tuple[threading.Lock, RunWatch]:
        """The watch of run folder `path` (a real path under the served folders) and the lock to use it under."""
        with self._lock:
            if path not in self._runs:
                self._runs[path] = (threading.Lock(), RunWatch(path))
            return self._runs[path]

    def sweep(self, path: str) -> SweepWatch:
        with self._lock:
            if path not in self._sweeps:
                self._sweeps[path] = SweepWatch(path)
            return self._sweeps[path]

    def sweep_of(self, run_dir: str) -> str | None:
        """The sweep folder that holds `run_dir` as one of its trials, when it is served too."""
        trials = os.path.dirname(run_dir)
        sweep = os.path.dirname(trials)
        if os.path.basename(trials) == "trials" and os.path.isfile(os.path.join(sweep, "sweep.json")) \
                and self.roots.inside(sweep):
            return sweep
        return None

    def is_run(self, path: str) -> bool:
        folder = RunFolder(path)
        return any(os.path.isfile(file) for file in (folder.opts, folder.metrics, folder.trial))

    def is_sweep(self, path: str) -> bool:
        return os.path.isfile(os.path.join(path, "sweep.json"))
