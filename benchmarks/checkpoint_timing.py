"""Override module for benchmarks/checkpoint.py: times each training step and notes whether a checkpoint write
was in flight when it started; once the loop is over, times plain synchronous torch.save calls of the same
state; with SKIP_TRAINING only restores (the restore measurement)."""
from __future__ import annotations

import os
import time

import torch

SKIP_TRAINING = False
BASELINE_SAVES = 3
steps: list[tuple[float, bool]] = []     # (seconds of one training step, a checkpoint write was in flight)
baseline_secs: list[float] = []
_started: list[float] = []


def list_of_epochs(self):
    return [] if SKIP_TRAINING else range(self.epoch, self.opts["epoch_iter"]["num_epochs"])


def fun_per_iter_b4RunNet(self, epoch, epoch_iter):
    writer = self.checkpointer._thread
    _started[:] = [time.perf_counter(), float(writer is not None and writer.is_alive())]


def fun_per_iter_aftRunNetB4Test(self, epoch, epoch_iter):
    steps.append((time.perf_counter() - _started[0], bool(_started[1])))


def fun_conclude_operator(self):
    """After the loop (every background write finished): time plain torch.save of the same state."""
    if SKIP_TRAINING:
        return
    state = {**self.state_dict(self.epoch + 1, 0), "ranks": [self.rank_state_dict()]}
    path = os.path.join(self.checkpointer.folder, "plain_torch_save.pt")
    for _ in range(BASELINE_SAVES):
        started = time.perf_counter()
        torch.save(state, path)
        baseline_secs.append(time.perf_counter() - started)
        os.unlink(path)
