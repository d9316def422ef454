"""Fixtures for the checkpoint and resume tests: uninterrupted reference runs, made once per test session."""
from __future__ import annotations

import fcntl
import glob
import json
import os
import time
from pathlib import Path

import pytest

from tests.playground.checkpoints.interrupted_runs import RunFolder, checkpoint_opts


class Reference:
    """An uninterrupted run of `checkpoint_opts(ranks)` and how long its start-up and training took."""

    def __init__(self, run: RunFolder, startup: float, training: float) -> None:
        self.run, self.startup, self.training = run, startup, training


def session_folder(tmp_path_factory) -> Path:
    """A folder of this test session that every pytest-xdist worker sees (the workers' base folders' parent)."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


@pytest.fixture(scope="session")
def uninterrupted(tmp_path_factory):
    """uninterrupted(ranks) -> Reference; each world size is trained once per test session, by whichever worker
    asks first (the others wait for it under a file lock and read the same folder), so the tests using it need
    not share a worker (tests/conftest.py WORKER_SHARED)."""
    made: dict[int, Reference] = {}

    def get(ranks: int) -> Reference:
        if ranks not in made:
            folder = session_folder(tmp_path_factory) / f"reference{ranks}"
            folder.mkdir(exist_ok=True)
            with open(folder / "made.lock", "w") as lock:
                fcntl.flock(lock, fcntl.LOCK_EX)
                timings = folder / "timings.json"
                if not timings.exists():
                    run = RunFolder(folder, "whole", checkpoint_opts(ranks=ranks))
                    started = time.time()
                    code, output = run.run()
                    ended = time.time()
                    assert code == 0, output
                    training_began = min(os.path.getmtime(m) for m in glob.glob(str(run.dir / "training.*")))
                    timings.write_text(json.dumps([training_began - started, ended - training_began]))
                else:
                    run = RunFolder.existing(folder, "whole")
            made[ranks] = Reference(run, *json.loads(timings.read_text()))
        return made[ranks]
    return get
