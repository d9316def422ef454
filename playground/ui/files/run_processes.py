"""Which runs have a live process on this host, read from /proc, and the SIGTERM that stops one.

A run folder records no process id of its own, so the processes tell: the one whose command line names the folder
with `--run-dir` (playground run, AnyExpOnTerm.py, a sweep's trial; the topmost of them, the launcher, whose ranks
are its children), else the one that holds the folder's train.log open for writing (rank 0 of a run started
without --run-dir). Either, on SIGTERM, has the run write a checkpoint and exit 75 (the ranks agree on the stop).
Without /proc (not Linux) no run is seen running here. The table is read again at most once a second, however
many pages ask.
"""
from __future__ import annotations

import os
import signal
import threading
import time

MAX_AGE = 1.0


class ProcessTable:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._read_at = -MAX_AGE
        self._runs: dict[str, int] = {}

    def runs(self) -> dict[str, int]:
        """Real path of each run folder with a live process -> the pid of its topmost process."""
        with self._lock:
            if time.monotonic() - self._read_at >= MAX_AGE:
                self._runs = _scan()
                self._read_at = time.monotonic()
            return dict(self._runs)

    def stop(self, run_dir: str) -> str:
        """SIGTERM to the run's topmost process (it checkpoints and exits 75); what was done, in words. Raises
        LookupError when no process of this host runs the folder."""
        real = os.path.realpath(run_dir)
        with self._lock:
            self._read_at = -MAX_AGE
        pid = self.runs().get(real)
        if pid is None:
            raise LookupError(f"no process on this host runs {real}")
        os.kill(pid, signal.SIGTERM)
        return f"sent SIGTERM to process {pid}: the run writes a checkpoint and stops (exit 75)"


def _scan() -> dict[str, int]:
    found: dict[str, set[int]] = {}
    logging: dict[str, int] = {}
    parents: dict[int, int] = {}
    try:
        pids = [int(name) for name in os.listdir("/proc") if name.isdigit() and int(name) != os.getpid()]
    except OSError:
        return {}
    for pid in pids:
        words = _command_line(pid)
        run_dir = _run_dir_of(pid, words)
        if run_dir is not None:
            found.setdefault(run_dir, set()).add(pid)
            parents[pid] = _parent_of(pid)
        elif words and "python" in os.path.basename(words[0]):
            for log in _logs_written(pid):
                logging.setdefault(os.path.dirname(log), pid)
    runs = {run_dir: min(pids, key=lambda p: (parents.get(p) in pids, p)) for run_dir, pids in found.items()}
    return {**logging, **runs}


def _command_line(pid: int) -> list[str]:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            return handle.read().decode("utf-8", errors="replace").split("\x00")
    except OSError:
        return []


def _logs_written(pid: int) -> list[str]:
    """The train.log files process `pid` holds open for writing."""
    out = []
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return []
    for fd in fds:
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
            if not target.endswith(os.sep + "train.log"):
                continue
            with open(f"/proc/{pid}/fdinfo/{fd}", encoding="ascii") as handle:
                flags = next((line.split()[1] for line in handle if line.startswith("flags:")), "0")
        except (OSError, IndexError):
            continue
        if int(flags, 8) & (os.O_WRONLY | os.O_RDWR):
            out.append(os.path.realpath(target))
    return out


def _run_dir_of(pid: int, words: list[str]) -> str | None:
    value = None
    for index, word in enumerate(words):
        if word == "--run-dir" and index + 1 < len(words):
            value = words[index + 1]
        elif word.startswith("--run-dir="):
            value = word.partition("=")[2]
    if not value:
        return None
    if not os.path.isabs(value):
        try:
            value = os.path.join(os.readlink(f"/proc/{pid}/cwd"), value)
        except OSError:
            return None
    return os.path.realpath(value)


def _parent_of(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as handle:
            text = handle.read()
    except OSError:
        return 0
    fields = text[text.rfind(")") + 2:].split()   # the command name may hold spaces and parentheses
    if fields and fields[0] in ("Z", "X"):          # a zombie: ended, not yet reaped
        return 0
    return int(fields[1]) if len(fields) > 1 else 0
