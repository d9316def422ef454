"""PreemptContext as Determined 0.38.1 has it. The preemption signal is SIGTERM (or SIGINT) to the rank: the
runner passes on a user's, Slurm's, or a sweep's (pause, ASHA pruning) SIGTERM to every rank. In
WorkersAskChief mode (the default) the chief's answer is broadcast, so all ranks stop at the same call.
Acknowledging (the first True, with auto_ack) leaves det_preempted in the run folder: the runner then ends
the attempt with exit 75, and re-running resumes from latest_checkpoint.
"""
from __future__ import annotations

import enum
import logging
import signal
from typing import Any, Callable, Optional

logger = logging.getLogger("determined.core")

SIGNALS = (signal.SIGTERM, signal.SIGINT)


class PreemptMode(enum.Enum):
    WorkersAskChief = "WORKERS_ASK_CHIEF"
    ChiefOnly = "CHIEF_ONLY"
    WorkersAskMaster = "WORKERS_ASK_MASTER"


class _PreemptionWatcher:
    """Turns SIGTERM/SIGINT into a flag while started; the previous handlers are back on close."""

    def __init__(self) -> None:
        self._signaled = False
        self._previous: dict = {}

    def start(self) -> None:
        for sig in SIGNALS:
            self._previous[sig] = signal.signal(sig, self._on_signal)

    def _on_signal(self, signum: int, _frame: Any) -> None:
        if not self._signaled:
            logger.info("received %s: should_preempt() is True from now on", signal.Signals(signum).name)
        self._signaled = True

    def close(self) -> None:
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)
        self._previous.clear()

    def should_preempt(self) -> bool:
        return self._signaled


class PreemptContext:
    """should_preempt() is True once the task was asked to stop; see PreemptMode for who may call it."""

    def __init__(self, dist: Any, preempt_mode: PreemptMode = PreemptMode.WorkersAskChief,
                 _acknowledge: Optional[Callable[[], None]] = None) -> None:
        self._dist = dist
        self._preempt_mode = PreemptMode(preempt_mode)
        self._watcher = _PreemptionWatcher()
        self._started = False
        self._ack_sent = False
        self._acknowledge = _acknowledge

    def start(self) -> "PreemptContext":
        if self._started:
            raise RuntimeError("you cannot call PreemptContext.start() multiple times")
        self._started = True
        self._watcher.start()      # on every rank: a rank that gets the signal must not die of it
        return self

    def close(self) -> None:
        self._watcher.close()

    def __enter__(self) -> "PreemptContext":
        return self.start()

    def __exit__(self, *_: Any) -> None:
        self.close()

    def should_preempt(self, auto_ack: bool = True) -> bool:
        if not self._started:
            raise RuntimeError("you cannot call PreemptContext.should_preempt() before PreemptContext.start()")
        if self._dist.get_rank() == 0 or self._preempt_mode == PreemptMode.WorkersAskMaster:
            out = self._watcher.should_preempt()
            if auto_ack and out and not self._ack_sent:
                self.acknowledge_preemption_signal()
            if self._preempt_mode == PreemptMode.WorkersAskChief:
                self._dist.broadcast(out)
        else:
            if self._preempt_mode == PreemptMode.ChiefOnly:
                raise RuntimeError("PreemptContext was configured with preempt_mode=ChiefOnly but .should_preempt() "
                                   f"was called from non-chief worker of rank={self._dist.get_rank()}")
            out = self._dist.broadcast(None)
            assert isinstance(out, bool)
        return out

    def acknowledge_preemption_signal(self) -> None:
        """Tell the runner this task stops unfinished and expects to be resumed: its exit 0 becomes 75."""
        logger.debug("acknowledge_preemption_signal()")
        self._ack_sent = True
        if self._acknowledge is not None and self._dist.get_rank() == 0:
            self._acknowledge()


class DummyPreemptContext(PreemptContext):
    """Off-cluster: should_preempt() is True after SIGTERM/SIGINT too (nothing to acknowledge to)."""

    def __init__(self, dist: Any, preempt_mode: PreemptMode = PreemptMode.WorkersAskChief) -> None:
        super().__init__(dist, preempt_mode)
