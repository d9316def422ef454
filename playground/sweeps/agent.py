"""An agent slot: claims a trial, runs it as a process in its own folder, feeds its full test passes to the
study, stops it through SIGTERM when the searcher says so, and records how it ended.

Exit codes of a run: 0 done (complete, with the objective from its full test passes), 75 stopped after a
checkpoint (pruned when we asked; when the sweep is stopping the trial stays RUNNING to resume later; else it
is resumed at once, costing nothing), 2 unusable opts and 1 or a death: failed (restarts come with multi-host
sweeps). Every attempt is a line in the trial's attempts.jsonl.
"""
from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from dataclasses import dataclass
from typing import Callable

from playground.sweeps.coordinator import WAIT, Coordinator, Ticket
from playground.sweeps.folder import SweepFolder
from playground.sweeps.metrics_tail import MetricsTail, epoch_records, objective_value
from playground.sweeps.spec import SweepSpec
from playground.sweeps.trial_process import slot_env, start_trial, trial_command

EXIT_STOPPED = 75
POLL_SECONDS = 0.2


@dataclass
class Outcome:
    state: str                 # complete | pruned | fail | interrupted
    values: list[float] | None
    exit_code: int | None
    reason: str
    seconds: float


class Agent:
    def __init__(self, spec: SweepSpec, folder: SweepFolder, coordinator: Coordinator, stopping: threading.Event,
                 workers: int, on_end: Callable[[str, Outcome], None]) -> None:
        self.spec, self.folder, self.coordinator = spec, folder, coordinator
        self.stopping, self.workers, self.on_end = stopping, workers, on_end
        self.processes: dict[int, subprocess.Popen] = {}

    def run_slot(self, slot: int) -> None:
        while not self.stopping.is_set():
            ticket = self.coordinator.claim()
            if ticket is None:
                return
            if ticket == WAIT:
                time.sleep(POLL_SECONDS)
                continue
            if ticket.adopted and self.coordinator.already_stopped(ticket):
                outcome = Outcome("pruned", None, None, "stopped by the searcher before the sweep was killed", 0.0)
            else:
                outcome = self.run_trial(ticket, slot)
            while outcome.state == "resume" and not self.stopping.is_set():
                outcome = self.run_trial(ticket, slot)
            if outcome.state in ("interrupted", "resume"):
                self.coordinator.release(ticket)
                return
            self.coordinator.finish(ticket, outcome.state, outcome.values)
            self._write_trial(ticket, outcome.state, slot, outcome)
            self.on_end(ticket.trial_id, outcome)

    def run_trial(self, ticket: Ticket, slot: int) -> Outcome:
        run_dir = self.folder.trial_dir(ticket.trial_id)
        self._write_trial(ticket, "running", slot)
        attempt = len(self.folder.read_attempts(ticket.trial_id)) + 1
        command = trial_command(self.spec, ticket.sets, run_dir)
        started = time.time()
        process = start_trial(command, slot_env(slot, self.workers), os.path.join(run_dir, "sweep-trial.log"))
        self.processes[slot] = process
        self.folder.append_attempt(ticket.trial_id, {"attempt": attempt, "slot": slot, "child_pid": process.pid,
                                                     "start": started, "adopted": ticket.adopted})
        pruned = self._follow(ticket, process, MetricsTail(run_dir))
        code = process.returncode
        self.processes.pop(slot, None)
        ended = time.time()
        outcome = self._outcome(ticket, code, pruned, ended - started)
        self.folder.append_attempt(ticket.trial_id, {"attempt": attempt, "slot": slot, "start": started, "end": ended,
                                                     "exit_code": code, "reason": outcome.reason})
        return outcome

    def _follow(self, ticket: Ticket, process: subprocess.Popen, tail: MetricsTail) -> bool:
        """Wait for the process, reporting each full test pass; returns whether we asked it to stop (pruned)."""
        objective = self.spec.objectives[0]
        time_metric = self.spec.searcher.get("time_metric", "epochs")
        pruned = signalled = False
        while True:
            finished = process.poll() is not None
            for record in tail.new_epoch_records():
                value = record.get(objective.metric)
                if not isinstance(value, (int, float)) or pruned:
                    continue
                time_value = record["samples"] if time_metric == "samples" else record.get(time_metric, 0)
                if self.coordinator.report(ticket, record["samples"], float(time_value), float(value)) and not finished:
                    process.send_signal(signal.SIGTERM)
                    pruned = True
            if finished:
                return pruned
            if self.stopping.is_set() and not signalled:
                process.send_signal(signal.SIGTERM)
                signalled = True
            time.sleep(POLL_SECONDS)

    def _outcome(self, ticket: Ticket, code: int, pruned: bool, seconds: float) -> Outcome:
        run_dir = self.folder.trial_dir(ticket.trial_id)
        if code == 0 or (code == EXIT_STOPPED and pruned):
            values = self.objective_values(run_dir)
            if code == EXIT_STOPPED:
                return Outcome("pruned", values, code, "stopped by the searcher (checkpoint kept)", seconds)
            if values is None:
                return Outcome("fail", None, code, "no full test pass with the objective in metrics.jsonl", seconds)
            return Outcome("complete", values, code, "done", seconds)
        if code == EXIT_STOPPED:
            state = "interrupted" if self.stopping.is_set() else "resume"
            return Outcome(state, None, code, "stopped after a checkpoint", seconds)
        reason = {1: "the run failed", 2: "unusable opts (never retried)"}.get(code, f"died (exit {code})")
        return Outcome("fail", None, code, reason + "; see sweep-trial.log", seconds)

    def objective_values(self, run_dir: str) -> list[float] | None:
        records = epoch_records(os.path.join(run_dir, "metrics.jsonl"))
        values = [objective_value(records, o.metric, o.mode, self.spec.reduce) for o in self.spec.objectives]
        return None if any(v is None for v in values) else values

    def stop_all(self) -> None:
        for process in list(self.processes.values()):
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)

    def _write_trial(self, ticket: Ticket, state: str, slot: int, outcome: Outcome | None = None) -> None:
        record = {"id": ticket.trial_id, "number": ticket.number, "params": ticket.sets, "state": state,
                  "slot": slot, "restarts_used": 0}
        if outcome is not None:
            record.update(values=outcome.values, exit_code=outcome.exit_code, reason=outcome.reason)
        self.folder.write_trial(ticket.trial_id, record)
