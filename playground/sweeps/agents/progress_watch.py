"""Is a trial's attempt still making progress? A run writes regularly: a record to metrics.jsonl at every record
point, a line to train.log, and its terminal output (progress lines, one per record point when not on a terminal)
to sweep-trial.log. Any of them growing or being rewritten is progress; none for `trial_stall_timeout` is a hung
trial, and an attempt older than `trial_timeout` is one that ran too long. Either is stopped by the agent
(agent.py) as a failed attempt.

Files are looked at (one stat each) at most once a second, so a slot's cost per poll stays flat.
"""
from __future__ import annotations

import os
import time

from playground.outputs.run_folder import RunFolder
from playground.sweeps.inputs.trial_timeouts import TrialTimeouts, in_words

LOOK_SECONDS = 1.0


def output_paths(run_dir: str, log_path: str) -> list[str]:
    """The files whose growth is a trial's progress."""
    return [RunFolder(run_dir).metrics, RunFolder(run_dir).log, log_path]


def last_output(paths: list[str]) -> float | None:
    """When the newest of these files was last written (what `sweep status` shows of a running trial)."""
    times = []
    for path in paths:
        try:
            times.append(os.stat(path).st_mtime)
        except OSError:
            continue
    return max(times) if times else None


class ProgressWatch:
    def __init__(self, run_dir: str, log_path: str, limits: TrialTimeouts, started: float) -> None:
        self.paths = output_paths(run_dir, log_path)
        self.limits, self.started = limits, started
        self.looked = self.progressed = started
        self.seen = self._signature()

    def hung(self, now: float | None = None) -> str | None:
        """Why the attempt must be stopped (`no output for 12 min`, `ran past trial_timeout (2.0 h)`), else None."""
        now = time.time() if now is None else now
        if self.limits.total is not None and now - self.started > self.limits.total:
            return f"ran past trial_timeout ({in_words(self.limits.total)})"
        if self.limits.stall is None:
            return None
        if now - self.looked >= min(LOOK_SECONDS, self.limits.stall / 4):
            self.looked = now
            signature = self._signature()
            if signature != self.seen:
                self.seen, self.progressed = signature, now
        if now - self.progressed > self.limits.stall:
            return f"no output for {in_words(now - self.progressed)}"
        return None

    def _signature(self) -> tuple:
        out = []
        for path in self.paths:
            try:
                info = os.stat(path)
                out.append((info.st_size, info.st_mtime_ns))
            except OSError:
                out.append(None)
        return tuple(out)
