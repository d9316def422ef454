"""An agent slot: claims a trial, runs it as a process in its own folder, feeds its full test passes to the
study, stops it through SIGTERM when the searcher says so, and records how it ended.

Exit codes of a run: 0 done (complete, with the objective from its full test passes), 75 stopped after a
checkpoint (pruned when we asked; paused when control/PAUSE appeared; when the sweep is stopping the trial
stays RUNNING to resume later; else it is continued at once, costing nothing), 2 unusable opts (failed, never
retried), 1 or a death: retried in the same folder while the sweep's max_restarts lasts (the restart policy
decides). Every attempt is a line in the trial's attempts.jsonl with its exit code and the decision's reason.
"""
from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from dataclasses import dataclass
from typing import Callable

from playground.restarts.attempts import next_attempt
from playground.restarts.policy import Decision, RestartPolicy
from playground.sweeps.coordinator import WAIT, Coordinator, Ticket
from playground.sweeps.folder import SweepFolder
from playground.sweeps.metrics_tail import MetricsTail, epoch_records, objective_value
from playground.sweeps.spec import SweepSpec
from playground.sweeps.trial_process import slot_env, start_trial, trial_command
from playground.sweeps.warm_start import link_checkpoint

EXIT_STOPPED = 75
POLL_SECONDS = 0.2
LOG_NAME = "sweep-trial.log"


@dataclass
class Outcome:
    state: str                 # complete | pruned | fail | interrupted | paused | resume
    values: list[float] | None
    exit_code: int | None
    reason: str
    seconds: float


class Agent:
    def __init__(self, spec: SweepSpec, folder: SweepFolder, coordinator: Coordinator, stopping: threading.Event,
                 workers: int, on_end: Callable[[str, Outcome], None], policy: RestartPolicy) -> None:
        self.spec, self.folder, self.coordinator = spec, folder, coordinator
        self.stopping, self.workers, self.on_end, self.policy = stopping, workers, on_end, policy
        self.processes: dict[int, subprocess.Popen] = {}

    def halted(self) -> bool:
        """Stop claiming: the sweep is stopping, or paused (control/PAUSE)."""
        return self.stopping.is_set() or self.folder.paused()

    def run_slot(self, slot: int) -> None:
        while not self.halted():
            ticket = self.coordinator.claim()
            if ticket is None:
                return
            if ticket == WAIT:
                time.sleep(POLL_SECONDS)
                continue
            if ticket.adopted and self.coordinator.already_stopped(ticket):
                outcome = Outcome("pruned", None, None, "stopped by the searcher before the sweep was killed", 0.0)
            else:
                outcome = self.run_attempts(ticket, slot)
            if outcome.state in ("interrupted", "paused", "resume", "retry"):
                self.coordinator.release(ticket)
                if outcome.state == "paused":
                    self._write_trial(ticket, "paused", slot, outcome)
                return
            self.coordinator.finish(ticket, outcome.state, outcome.values)
            self._write_trial(ticket, outcome.state, slot, outcome)
            self.on_end(ticket.trial_id, outcome)

    def run_attempts(self, ticket: Ticket, slot: int) -> Outcome:
        """Attempts of one trial in its folder until the restart policy says stop (or the sweep halts)."""
        while True:
            outcome = self.run_trial(ticket, slot)
            if outcome.state not in ("resume", "retry") or self.halted():
                if outcome.state in ("resume", "retry") and self.folder.paused():
                    outcome.state = "paused"
                return outcome

    def run_trial(self, ticket: Ticket, slot: int) -> Outcome:
        run_dir = self.folder.trial_dir(ticket.trial_id)
        self._write_trial(ticket, "running", slot)
        if ticket.warm_start is not None:   # `sweep continue`: its first attempt starts from the source checkpoint
            problem = link_checkpoint(run_dir, ticket.warm_start)
            if problem:
                return Outcome("fail", None, None, problem, 0.0)
        attempt = next_attempt(run_dir)
        command = trial_command(self.spec, ticket.sets, run_dir)
        log_path = os.path.join(run_dir, LOG_NAME)
        log_start = os.path.getsize(log_path) if os.path.isfile(log_path) else 0
        started = time.time()
        process = start_trial(command, slot_env(slot, self.workers), log_path)
        self.processes[slot] = process
        self.folder.append_attempt(ticket.trial_id, {"attempt": attempt, "slot": slot, "child_pid": process.pid,
                                                     "start": started, "adopted": ticket.adopted})
        pruned, signalled = self._follow(ticket, process, MetricsTail(run_dir))
        code = process.returncode
        self.processes.pop(slot, None)
        ended = time.time()
        matched = None if code in (0, 2, EXIT_STOPPED) else self.policy.matching(_read_from(log_path, log_start))
        decision = self.policy.decide(code, matched, stop_asked=pruned or signalled)
        outcome = self._outcome(ticket, code, pruned, signalled, decision, ended - started)
        self.folder.append_attempt(ticket.trial_id, {"attempt": attempt, "slot": slot, "start": started, "end": ended,
                                                     "exit_code": code, "reason": outcome.reason,
                                                     "retry": decision.retry, "restart_consumed": decision.consumes})
        return outcome

    def _follow(self, ticket: Ticket, process: subprocess.Popen, tail: MetricsTail) -> tuple[bool, bool]:
        """Wait for the process, reporting each full test pass; returns whether the searcher stopped it (pruned)
        and whether the sweep did (stopping or paused)."""
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
                return pruned, signalled
            if not signalled and self.halted():
                process.send_signal(signal.SIGTERM)
                signalled = True
            time.sleep(POLL_SECONDS)

    def _outcome(self, ticket: Ticket, code: int, pruned: bool, signalled: bool, decision: Decision,
                 seconds: float) -> Outcome:
        run_dir = self.folder.trial_dir(ticket.trial_id)
        if code == 0 or (code == EXIT_STOPPED and pruned):
            values = self.objective_values(run_dir)
            if code == EXIT_STOPPED:
                return Outcome("pruned", values, code, "stopped by the searcher (checkpoint kept)", seconds)
            if values is None:
                return Outcome("fail", None, code, "no full test pass with the objective in metrics.jsonl", seconds)
            return Outcome("complete", values, code, "done", seconds)
        if signalled:  # the sweep stopped it (paused, or stopping): it continues its own folder later
            state = "paused" if self.folder.paused() and not self.stopping.is_set() else "interrupted"
            return Outcome(state, None, code, "paused: stopped after a checkpoint" if state == "paused"
                           else decision.reason, seconds)
        if decision.retry:
            return Outcome("resume" if code == EXIT_STOPPED else "retry", None, code, decision.reason, seconds)
        return Outcome("fail", None, code, decision.reason + f"; see {LOG_NAME}", seconds)

    def objective_values(self, run_dir: str) -> list[float] | None:
        records = epoch_records(os.path.join(run_dir, "metrics.jsonl"))
        values = [objective_value(records, o.metric, o.mode, self.spec.reduce) for o in self.spec.objectives]
        return None if any(v is None for v in values) else values

    def stop_all(self) -> None:
        for process in list(self.processes.values()):
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)

    def _write_trial(self, ticket: Ticket, state: str, slot: int, outcome: Outcome | None = None) -> None:
        used = sum(1 for a in self.folder.read_attempts(ticket.trial_id) if a.get("restart_consumed"))
        record = {"id": ticket.trial_id, "number": ticket.number, "params": ticket.sets, "state": state,
                  "slot": slot, "restarts_used": used}
        if outcome is not None:
            # the last full test pass the study was told: `sweep summary --rebuild` reports exactly these again
            steps = ticket.reported_steps
            record.update(values=outcome.values, exit_code=outcome.exit_code, reason=outcome.reason,
                          last_reported_step=max(steps) if steps else None)
        self.folder.write_trial(ticket.trial_id, record)


def _read_from(path: str, offset: int) -> str:
    """The part of a log written since `offset`: this attempt's output."""
    try:
        with open(path, "rb") as handle:
            handle.seek(offset)
            return handle.read().decode("utf-8", errors="replace")
    except OSError:
        return ""
