"""A process's scheduler state as Linux shows it in /proc/<pid>/stat, for tests that stop, kill and wait."""
from __future__ import annotations


def state(pid: int) -> str | None:
    """'R', 'S', 'T' (stopped), 'Z' (dead, not yet reaped)...; None when there is no such process."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return None


def alive(pid: int) -> bool:
    """The process exists and is not a zombie (dead, not yet reaped by its parent)."""
    return state(pid) not in (None, "Z")
