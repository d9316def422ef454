"""SIGTERM and SIGINT become a request to checkpoint at the next iteration boundary and exit.

Schedulers (Slurm, Kubernetes) send SIGTERM before killing a job. The trainer finishes the current iteration,
writes a checkpoint, and the process exits with EXIT_PREEMPTED so a wrapper can requeue the same command,
which resumes. A second signal interrupts at once. All ranks agree on the stop (a MAX over ranks) so none
is left waiting in a collective.
"""
from __future__ import annotations

import signal
import threading

import torch

from playground import distributed as dist_utils

EXIT_PREEMPTED = 75   # EX_TEMPFAIL: "try again later"; re-running the same command resumes
AGREE_EVERY = 10      # iterations between agreement collectives when there are several ranks


class Preempted(Exception):
    """Raised after the preemption checkpoint is safely written."""


class Preemption:
    def __init__(self) -> None:
        self.signal_name: str | None = None
        self._previous: dict[int, object] = {}

    def install(self) -> None:
        if threading.current_thread() is not threading.main_thread():
            return
        for sig in (signal.SIGTERM, signal.SIGINT):
            self._previous[sig] = signal.signal(sig, self._handle)

    def uninstall(self) -> None:
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)
        self._previous.clear()

    def _handle(self, signum: int, frame: object) -> None:
        if self.signal_name is not None:  # second signal: stop now
            self.uninstall()
            raise KeyboardInterrupt(f"second {signal.Signals(signum).name}")
        self.signal_name = signal.Signals(signum).name

    def should_stop(self, world_size: int, global_iter: int) -> bool:
        if world_size == 1:
            return self.signal_name is not None
        if global_iter % AGREE_EVERY:
            return False
        flag = torch.tensor([1.0 if self.signal_name else 0.0], dtype=torch.float64)
        return bool(dist_utils.all_reduce_max(flag).item() > 0)
