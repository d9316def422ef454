"""Finding the run folders and sweep folders under the served folders.

A sweep folder holds sweep.json; a run folder holds opts.json or metrics.jsonl. Neither is looked into further
(a sweep's trials are listed on its page; a run's `earlier/` and checkpoints are its own), hidden folders are
skipped, and the search goes at most MAX_DEPTH folders down. A folder whose listing did not change since the
last search is not listed again.
"""
from __future__ import annotations

import os

from playground.outputs.run_folder import RunFolder

MAX_DEPTH = 4
RUN_FILES = RunFolder.MARKS
SWEEP_FILE = "sweep.json"


class Discovery:
    def __init__(self, roots: list[str]) -> None:
        self.roots = roots
        self._listings: dict[str, tuple[int, list[str], set[str]]] = {}   # folder -> (mtime, sub-folders, files)

    def find(self) -> tuple[list[str], list[str]]:
        """(sweep folders, run folders), each sorted by path."""
        sweeps: list[str] = []
        runs: list[str] = []
        for root in self.roots:
            self._visit(root, 0, sweeps, runs)
        return sorted(set(sweeps)), sorted(set(runs))

    def _visit(self, folder: str, depth: int, sweeps: list[str], runs: list[str]) -> None:
        folders, files = self._listing(folder)
        if SWEEP_FILE in files:
            sweeps.append(folder)
            return
        if any(name in files for name in RUN_FILES):
            runs.append(folder)
            return
        if depth < MAX_DEPTH:
            for name in folders:
                self._visit(os.path.join(folder, name), depth + 1, sweeps, runs)

    def _listing(self, folder: str) -> tuple[list[str], set[str]]:
        try:
            mtime = os.stat(folder).st_mtime_ns
        except OSError:
            return [], set()
        known = self._listings.get(folder)
        if known is not None and known[0] == mtime:
            return known[1], known[2]
        folders, files = [], set()
        try:
            with os.scandir(folder) as entries:
                for entry in entries:
                    if entry.name.startswith("."):
                        continue
                    if entry.is_dir():
                        folders.append(entry.name)
                    else:
                        files.add(entry.name)
        except OSError:
            return [], set()
        folders.sort()
        self._listings[folder] = (mtime, folders, files)
        return folders, files
