"""Determined's adaptive ASHA (the early-stopping variant), its arithmetic reproduced exactly.

Brackets: `max_rungs` is capped at int(log(max_time)/log(divisor)) + 1 and int(log(max_trials)/log(divisor)) + 1;
the mode picks the brackets' rung counts (aggressive: [max_rungs]; standard: (max_rungs-1)//2+1 .. max_rungs;
conservative: 1 .. max_rungs), sorted most-stopping first. Trials are split across brackets in proportion to
divisor**(rungs-1)/rungs (truncated, at least 1, the remainder to the first bracket); concurrency evenly, the
remainder to the first brackets. Rung i of an n-rung bracket needs max(int(max_time / divisor**(n-i-1)), 1)
time units. A trial reaching a rung is ranked among the trials that reached it; it continues only if it is in
the top max(int(count/divisor), 1), else it is stopped; reaching the top rung stops it as done. A stopped trial
frees its place in its bracket for a new one until the bracket's trials are used up.

Pure Python and deterministic; the state is a JSON-able dict (`snapshot`/`restore`) kept beside the study.
"""
from __future__ import annotations

import bisect
import math
from dataclasses import dataclass

EXITED_METRIC = 1.7976931348623157e308  # Go's math.MaxFloat64: an errored trial ranks last


@dataclass(frozen=True)
class Bracket:
    num_rungs: int
    max_trials: int
    max_concurrent_trials: int


def capped_max_rungs(max_rungs: int, max_time: int, max_trials: int, divisor: float) -> int:
    return min(max_rungs, int(math.log(max_time) / math.log(divisor)) + 1,
               int(math.log(max_trials) / math.log(divisor)) + 1)


def bracket_rungs(mode: str, max_rungs: int) -> list[int]:
    if mode == "aggressive":
        return [max_rungs]
    if mode == "standard":
        return list(range((max_rungs - 1) // 2 + 1, max_rungs + 1))
    if mode == "conservative":
        return list(range(1, max_rungs + 1))
    raise ValueError(f"unknown adaptive mode {mode!r}")


def bracket_max_trials(max_trials: int, divisor: float, rungs: list[int]) -> list[int]:
    weights = [divisor ** (n - 1) / n for n in rungs]
    total = sum(weights)
    trials = [max(int(w / total * max_trials), 1) for w in weights]
    trials[0] += max(max_trials - sum(trials), 0)
    return trials


def bracket_max_concurrent(max_concurrent: int, divisor: float, trials: list[int]) -> list[int]:
    count = len(trials)
    if max_concurrent == 0:
        return [max(trials[-1], int(divisor))] * count
    max_concurrent = max(max_concurrent, count)
    out = [max_concurrent // count] * count
    for i in range(max_concurrent % count):
        out[i] += 1
    return out


def make_brackets(max_trials: int, max_time: int, divisor: float = 4, max_rungs: int = 5, mode: str = "standard",
                  max_concurrent_trials: int = 0, rungs: list[int] | None = None) -> list[Bracket]:
    if not rungs:
        rungs = bracket_rungs(mode, capped_max_rungs(max_rungs, max_time, max_trials, divisor))
    rungs = sorted(rungs, reverse=True)
    trials = bracket_max_trials(max_trials, divisor, rungs)
    concurrent = bracket_max_concurrent(max_concurrent_trials, divisor, trials)
    return [Bracket(n, t, c) for n, t, c in zip(rungs, trials, concurrent)]


def rung_units(num_rungs: int, divisor: float, max_time: int) -> list[int]:
    return [max(int(max_time / divisor ** (num_rungs - i - 1)), 1) for i in range(num_rungs)]


class AdaptiveAsha:
    """The searcher's bookkeeping: which bracket gets the next trial, and whether a reported value stops one."""

    def __init__(self, brackets: list[Bracket], divisor: float, max_time: int, smaller_is_better: bool) -> None:
        self.brackets, self.divisor, self.max_time = brackets, divisor, max_time
        self.smaller_is_better = smaller_is_better
        self.units = [rung_units(b.num_rungs, divisor, max_time) for b in brackets]
        self.rungs: list[list[list]] = [[[] for _ in range(b.num_rungs)] for b in brackets]  # [trial, metric]
        self.trial_bracket: dict[str, int] = {}
        self.trial_rung: dict[str, int] = {}
        self.finished: set[str] = set()
        self.seen: set[str] = set()   # "trial@step" already counted, so a resumed run never counts twice

    @property
    def max_trials(self) -> int:
        return sum(b.max_trials for b in self.brackets)

    def next_bracket(self) -> int | None:
        """The bracket that creates the next trial now, or None (all running at their concurrency, or used up)."""
        for index, bracket in enumerate(self.brackets):
            members = [t for t, b in self.trial_bracket.items() if b == index]
            active = [t for t in members if t not in self.finished]
            if len(members) < bracket.max_trials and len(active) < bracket.max_concurrent_trials:
                return index
        return None

    def exhausted(self) -> bool:
        return len(self.trial_bracket) >= self.max_trials

    def add_trial(self, trial: str, bracket: int) -> None:
        self.trial_bracket[trial] = bracket
        self.trial_rung[trial] = 0

    def report(self, trial: str, time_step: float, value: float) -> bool:
        """A full test pass of `trial` at `time_step` (time-metric units); True when the trial must stop."""
        key = f"{trial}@{time_step!r}"
        if key in self.seen or trial in self.finished:
            return trial in self.finished
        self.seen.add(key)
        metric = value if self.smaller_is_better else -value
        step = int(time_step + 1e-9)  # Determined truncates the time metric to whole units
        index = self.trial_bracket[trial]
        rungs, units = self.rungs[index], self.units[index]
        for r in range(self.trial_rung[trial], len(rungs)):
            self.trial_rung[trial] = r
            if step < units[r]:
                return False
            position = _insert(rungs[r], trial, metric)
            if r == len(rungs) - 1:
                self.finished.add(trial)
                return True
            if position >= max(int(len(rungs[r]) / self.divisor), 1):
                self.finished.add(trial)
                return True
        return False

    def reached_top(self, trial: str) -> bool:
        """Whether `trial` was ranked at its bracket's top rung: it trained the full max_time, and its stop there
        means done (complete), not stopped early."""
        index = self.trial_bracket.get(trial)
        return index is not None and any(t == trial for t, _ in self.rungs[index][-1])

    def exited(self, trial: str, error: bool) -> None:
        """The trial ended on its own: done, or (error) failed, which ranks it last at its current rung."""
        if trial in self.finished or trial not in self.trial_bracket:
            return
        self.finished.add(trial)
        if error:
            _insert(self.rungs[self.trial_bracket[trial]][self.trial_rung[trial]], trial, EXITED_METRIC)

    def snapshot(self) -> dict:
        return {"rungs": self.rungs, "trial_bracket": self.trial_bracket, "trial_rung": self.trial_rung,
                "finished": sorted(self.finished), "seen": sorted(self.seen)}

    def restore(self, state: dict) -> None:
        self.rungs = state["rungs"]
        self.trial_bracket = dict(state["trial_bracket"])
        self.trial_rung = dict(state["trial_rung"])
        self.finished, self.seen = set(state["finished"]), set(state["seen"])


def _insert(rung: list[list], trial: str, metric: float) -> int:
    """Insert before the first entry >= metric (Go's sort.Search), return the index."""
    position = bisect.bisect_left([m for _, m in rung], metric)
    rung.insert(position, [trial, metric])
    return position
