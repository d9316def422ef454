"""Decides whether an ended attempt of a run is run again; the one place both sweeps and `--max-restarts` ask.

Exit 0 (done) and exit 2 (unusable opts) are never retried. Exit 75 (stopped after a checkpoint: preempted) is
continued at no cost, unless the stop was asked for (pause, pruning, Ctrl-C). Any other ending (exit 1, a
death by a signal) costs one unit of `max_restarts` and is retried while units are left: the budget is shared
by every trial of a sweep (Determined's meaning), so a broken sweep cannot retry for ever. A log policy whose
pattern matches the attempt's output cancels its retries: by default a CUDA out-of-memory line, since the same
attempt would run out of memory again.
"""
from __future__ import annotations

import re
import threading
from dataclasses import dataclass
from typing import Any

from playground.processes.exit_codes import EXIT_DONE, EXIT_FAILED, EXIT_STOPPED, EXIT_USAGE
from playground.processes.supervisor import ending

ACTIONS = ("cancel_retries",)
DEFAULT_LOG_POLICIES: list[dict[str, str]] = [
    {"name": "CUDA out of memory", "pattern": "CUDA out of memory", "action": "cancel_retries"}]


@dataclass(frozen=True)
class LogPolicy:
    name: str
    pattern: re.Pattern
    action: str


@dataclass(frozen=True)
class Decision:
    retry: bool
    consumes: bool      # this retry costs one unit of max_restarts
    reason: str


def parse_log_policies(raw: Any, where: str, problems: list[str]) -> list[LogPolicy]:
    """`[{pattern, action: cancel_retries, name?}]` (Determined's `action: {type: ...}` too); None: the default."""
    if raw is None:
        raw = DEFAULT_LOG_POLICIES
    if not isinstance(raw, list):
        problems.append(f"{where}: log_policies must be a list of {{pattern, action: cancel_retries}}")
        return []
    out = []
    for index, item in enumerate(raw):
        here = f"{where}: log_policies[{index}]"
        if not isinstance(item, dict) or not isinstance(item.get("pattern"), str):
            problems.append(f"{here}: expected {{pattern: REGEX, action: cancel_retries}}")
            continue
        action = item.get("action", "cancel_retries")
        if isinstance(action, dict):
            action = action.get("type")
        if action not in ACTIONS:
            problems.append(f"{here}.action: {action!r}: use one of {', '.join(ACTIONS)}")
            continue
        try:
            pattern = re.compile(item["pattern"])
        except re.error as err:
            problems.append(f"{here}.pattern: not a regular expression: {err}")
            continue
        out.append(LogPolicy(str(item.get("name") or item["pattern"]), pattern, action))
    return out


def default_log_policies() -> list[LogPolicy]:
    return parse_log_policies(None, "default", [])


class RestartPolicy:
    """Thread-safe: the slots of a sweep share one budget. `used` counts units spent by earlier processes."""

    def __init__(self, max_restarts: int, log_policies: list[LogPolicy] | None = None, used: int = 0) -> None:
        self.max_restarts = max_restarts
        self.log_policies = default_log_policies() if log_policies is None else log_policies
        self.used = used
        self.lock = threading.Lock()

    def matching(self, text: str) -> LogPolicy | None:
        """The first log policy whose pattern occurs in `text` (an attempt's output)."""
        return next((p for p in self.log_policies if p.pattern.search(text)), None)

    def decide(self, exit_code: int | None, matched: LogPolicy | None = None, stop_asked: bool = False) -> Decision:
        if exit_code == EXIT_DONE:
            return Decision(False, False, "done")
        if exit_code == EXIT_USAGE:
            return Decision(False, False, "unusable opts (exit 2, never retried)")
        if exit_code == EXIT_STOPPED:
            if stop_asked:
                return Decision(False, False, "stopped after a checkpoint")
            return Decision(True, False, "stopped after a checkpoint (exit 75); continued, costing no restart")
        what = "failed (exit 1)" if exit_code == EXIT_FAILED else f"died ({ending(exit_code)})"
        if stop_asked:
            return Decision(False, False, f"{what} while stopping")
        if matched is not None:
            return Decision(False, False, f"{what}; log policy {matched.name!r} cancelled its retries")
        with self.lock:
            if self.used >= self.max_restarts:
                return Decision(False, False, f"{what}; no restarts left (max_restarts {self.max_restarts} used)")
            self.used += 1
            return Decision(True, True, f"{what}; restart {self.used} of max_restarts {self.max_restarts}")
