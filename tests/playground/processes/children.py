"""Helpers for the supervisor's tests: rank functions (module-level, so a spawned interpreter can import them)
and waiting for a process to be gone."""
from __future__ import annotations

import os
import signal
import time


def one_killed_one_deaf(index: int) -> None:
    """Rank 0 is killed by SIGKILL at once; rank 1 ignores SIGTERM and sleeps (it would hang for ever)."""
    if index == 0:
        os.kill(os.getpid(), signal.SIGKILL)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    time.sleep(120)


def report_and_sleep(index: int, folder: str) -> None:
    """Write this rank's pid to folder/rank<index>.pid, then sleep; on SIGTERM or SIGINT write the signal's name
    to folder/rank<index>.signal and end."""
    def note(signum: int, _frame) -> None:
        _write(os.path.join(folder, f"rank{index}.signal"), signal.Signals(signum).name)
        os._exit(0)

    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, note)
    _write(os.path.join(folder, f"rank{index}.pid"), str(os.getpid()))
    time.sleep(120)


def _write(path: str, text: str) -> None:
    with open(path + ".tmp", "w") as handle:
        handle.write(text)
    os.replace(path + ".tmp", path)


def gone(pid: int, seconds: float) -> bool:
    """Whether process `pid` is gone within `seconds`."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.05)
    return False
