"""SIGTERM and SIGINT become a request to checkpoint at the next iteration boundary and exit.

Schedulers (Slurm, Kubernetes) send SIGTERM before killing a job. The trainer finishes the current iteration,
writes a checkpoint, and the process exits with EXIT_STOPPED (75) so a wrapper can requeue the same command,
which resumes. All ranks agree on the stop (a MAX over ranks, every AGREE_EVERY iterations and at each epoch
end) so none is left waiting in a collective.

A signal sent to a whole process group reaches each rank twice: directly, and forwarded by the launcher. So
repeats within REPEAT_GRACE_SECONDS of the first signal are the same request; a signal after that stops the
process at once (KeyboardInterrupt), for a person who does not want to wait for the checkpoint.

A spawned rank also gets SIGTERM when its launcher dies (supervisor.start_ranks: a pidfd watch), for
instance of a SIGKILL that no handler sees: the stop is then reported as the launcher's death, not as a SIGTERM
that nobody sent. The cause is decided when it is read, not in the handler: the signal comes as the launcher's
first thread exits, while its other threads still hold this process (getppid() changes only once all are gone).
"""
from __future__ import annotations

import os
import signal
import threading
import time

import torch

from playground.distribution import collectives as dist_utils
from playground.processes import die_with_parent, held_stop
from playground.processes.exit_codes import EXIT_STOPPED

EXIT_PREEMPTED = EXIT_STOPPED   # the old name, for code written against it
AGREE_EVERY = 10      # iterations between agreement collectives when there are several ranks
REPEAT_GRACE_SECONDS = held_stop.REPEAT_GRACE_SECONDS


class Preempted(Exception):
    """Raised after the preemption checkpoint is safely written."""


class Preemption:
    """The stop request of this process: installed as the SIGTERM/SIGINT handler of the main thread."""

    def __init__(self) -> None:
        self._signum: int | None = None
        self._first_at = 0.0
        self._previous: dict[int, object] = {}
        self._parent = die_with_parent.launcher_pid() or os.getppid()

    @property
    def signal_name(self) -> str | None:
        """What asked this process to stop (a signal's name, or its launcher's death); None before any signal."""
        if self._signum is None:
            return None
        if self._signum == signal.SIGTERM and self._launcher_died():
            return f"the death of its launcher (pid {self._parent})"
        return signal.Signals(self._signum).name

    def _launcher_died(self) -> bool:
        gone = die_with_parent.launcher_gone()     # a rank forked from the fork server watches its launcher
        return os.getppid() != self._parent if gone is None else gone

    def install(self) -> None:
        if threading.current_thread() is not threading.main_thread():
            return
        self._parent = die_with_parent.launcher_pid() or os.getppid()
        for sig in (signal.SIGTERM, signal.SIGINT):
            self._previous[sig] = signal.signal(sig, self._handle)
        pending = held_stop.take()     # a signal that came while the process started: as if it came now
        if pending is not None and self._signum is None:
            self._signum, self._first_at = pending

    def uninstall(self) -> None:
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)
        self._previous.clear()

    def _handle(self, signum: int, frame: object) -> None:
        now = time.monotonic()
        if self._signum is None:
            self._signum, self._first_at = signum, now
        elif now - self._first_at >= REPEAT_GRACE_SECONDS:
            self.uninstall()
            raise KeyboardInterrupt(f"second signal ({signal.Signals(signum).name}): stopping without a checkpoint")

    def should_stop(self, world_size: int, global_iter: int, agree_now: bool = False) -> bool:
        """Whether to stop here. With several ranks every rank must call this at the same points; they agree
        when `agree_now` or every AGREE_EVERY iterations, and say no in between."""
        if world_size == 1:
            return self.signal_name is not None
        if global_iter % AGREE_EVERY and not agree_now:
            return False
        flag = torch.tensor([1.0 if self.signal_name else 0.0], dtype=torch.float64)
        return bool(dist_utils.all_reduce_max(flag).item() > 0)
