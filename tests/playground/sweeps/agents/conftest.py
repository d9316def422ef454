"""Fixtures of the agent tests."""
from __future__ import annotations

import os
import signal
import subprocess

import pytest


@pytest.fixture
def started():
    """The processes a test starts, each the leader of its own process group; the groups (trials included,
    stopped ones too) are killed at its end, passed or failed, so a failing test leaves nothing running."""
    processes: list[subprocess.Popen] = []
    yield processes
    for process in processes:
        try:
            os.killpg(process.pid, signal.SIGKILL)   # also when the leader is gone and its trials are not
        except (ProcessLookupError, PermissionError):
            pass
        process.wait()
