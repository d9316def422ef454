"""Starts a run as a child process that dies with its parent (PR_SET_PDEATHSIG to SIGTERM: it checkpoints and
exits 75), so a killed sweep or supervisor leaves no run behind."""
from __future__ import annotations

import ctypes
import signal
import subprocess
from typing import Any

_PR_SET_PDEATHSIG = 1


def start_child(command: list[str], **popen: Any) -> subprocess.Popen:
    libc = ctypes.CDLL(None, use_errno=True)
    prctl = libc.prctl  # resolved here: the child must not import or allocate between fork and exec

    def die_with_parent() -> None:
        prctl(_PR_SET_PDEATHSIG, int(signal.SIGTERM), 0, 0, 0)

    return subprocess.Popen(command, preexec_fn=die_with_parent, **popen)
