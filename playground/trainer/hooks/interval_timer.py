"""Training time and iterations since the last record point (throughput), and the run's wall clock.

The interval is state: after a resume, the iterations done since the last record point still decide whether
the epoch ends with a record point, and their time still counts in its throughput.
"""
from __future__ import annotations

import time

from playground.trainer.hook import Hook


class IntervalTimer(Hook):
    name = "interval_timer"

    def __init__(self, trainer) -> None:
        super().__init__(trainer)
        self.iters = 0
        self.train_secs = 0.0
        self._started = 0.0
        self._wall_started = time.time()

    def before_iter(self, epoch: int, epoch_iter: int) -> None:
        self._started = time.perf_counter()

    def after_iter(self, epoch: int, epoch_iter: int) -> None:
        self.train_secs += time.perf_counter() - self._started
        self.iters += 1

    def take(self) -> tuple[int, float]:
        """Iterations and training seconds since the last call (a record point), then start a new interval."""
        taken = self.iters, self.train_secs
        self.iters, self.train_secs = 0, 0.0
        return taken

    def wall_time(self) -> float:
        """Seconds the run has been going, over all its sessions."""
        return time.time() - self._wall_started + self.trainer.book.prior_wall_time

    def state_dict(self) -> dict:
        return {"iters": self.iters, "train_secs": self.train_secs}

    def load_state_dict(self, state: dict) -> None:
        self.iters, self.train_secs = int(state["iters"]), float(state["train_secs"])
