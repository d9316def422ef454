"""A process's scheduler state as Linux shows it in /proc/<pid>/stat, for tests that stop, kill and wait."""
from __future__ import annotations

import os


def state(pid: int) -> str | None:
    """'R', 'S', 'T' (stopped), 'Z' (dead, not yet reaped)...; None when there is no such process."""
    return state_of(f"/proc/{pid}/stat")


def alive(pid: int) -> bool:
    """The process exists and is not a zombie (dead, not yet reaped by its parent)."""
    return state(pid) not in (None, "Z")


def stopped(pid: int) -> bool:
    """Every thread of the process is stopped (SIGSTOP acted on, not only sent)."""
    try:
        threads = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return False
    return all(state_of(f"/proc/{pid}/task/{tid}/stat") == "T" for tid in threads)


def state_of(stat_path: str) -> str | None:
    try:
        with open(stat_path, encoding="ascii") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return None
