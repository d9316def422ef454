"""Fixtures for the checkpoint and resume tests: uninterrupted reference runs, made once per test session."""
from __future__ import annotations

import glob
import os
import time

import pytest

from tests.playground.checkpoints.interrupted_runs import RunFolder, checkpoint_opts


class Reference:
    """An uninterrupted run of `checkpoint_opts(ranks)` and how long its start-up and training took."""

    def __init__(self, run: RunFolder, startup: float, training: float) -> None:
        self.run, self.startup, self.training = run, startup, training


@pytest.fixture(scope="session")
def uninterrupted(tmp_path_factory):
    """uninterrupted(ranks) -> Reference; each world size is trained once per test session."""
    made: dict[int, Reference] = {}

    def get(ranks: int) -> Reference:
        if ranks not in made:
            run = RunFolder(tmp_path_factory.mktemp(f"reference{ranks}"), "whole", checkpoint_opts(ranks=ranks))
            started = time.time()
            code, output = run.run()
            ended = time.time()
            assert code == 0, output
            training_began = min(os.path.getmtime(m) for m in glob.glob(str(run.dir / "training.*")))
            made[ranks] = Reference(run, training_began - started, ended - training_began)
        return made[ranks]
    return get
