"""A hook for benchmarks/sweep.py --start: the time (time.time()) at which the trial's first training step ended,
and the CPU time its process had spent by then (time.process_time()), written to first_step.json in its run
folder by rank 0."""
from __future__ import annotations

import json
import os
import time

from playground.api import Hook


class FirstStep(Hook):
    def __init__(self, trainer) -> None:
        super().__init__(trainer)
        self.written = False

    def after_step(self) -> None:
        if self.written:
            return
        self.written = True
        if self.trainer.rank == 0:
            with open(os.path.join(self.trainer.run_dir, "first_step.json"), "w", encoding="utf-8") as handle:
                json.dump({"time": time.time(), "cpu": time.process_time()}, handle)
