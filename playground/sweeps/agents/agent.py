"""An agent slot: claims a trial, runs it as a process in its own folder, feeds its full test passes to the
study, stops it through SIGTERM when the searcher says so, and records how it ended.

Fencing: each attempt begins by creating the trial's next claim file (restarts/fence.py); the run gets its
number in PLAYGROUND_ATTEMPT. Before each of its own writes (trial.json, attempts.jsonl, the study; the
reports are the agent's, from the study) the slot checks that no later claim exists; once one does (another agent adopted the trial, this one
only looked dead), it kills its run, writes nothing more and moves on to another trial.

Exit codes of a run: 0 done (complete, with the objective from its full test passes), 75 stopped after a
checkpoint (pruned when we asked; paused when control/PAUSE appeared; when the sweep is stopping the trial
stays RUNNING to resume later; else it is continued at once, costing nothing), 2 unusable opts (failed, never
retried), 1 or a death: retried in the same folder while the sweep's max_restarts lasts (the restart policy
decides). Every attempt is a line in the trial's attempts.jsonl with its exit code and the decision's reason.
"""
from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from typing import Callable, NoReturn

from playground.outputs.run_folder import RunFolder
from playground.processes import supervisor
from playground.processes.exit_codes import EXIT_DONE, EXIT_FAILED, EXIT_STOPPED, EXIT_USAGE
from playground.restarts.fence import ATTEMPT_ENV, Fence, create_claim
from playground.restarts.policy import Decision, RestartPolicy
from playground.sweeps.agents.coordinator import WAIT, Coordinator, Ticket
from playground.sweeps.agents.progress_watch import ProgressWatch
from playground.sweeps.agents.trial_process import slot_env, start_trial, trial_command, trial_servers
from playground.sweeps.agents.warm_start import link_checkpoint
from playground.sweeps.errors import described
from playground.sweeps.files.metrics_tail import MetricsTail, epoch_records, objective_value
from playground.sweeps.files.sweep_folder import SweepFolder
from playground.sweeps.inputs.spec import SweepSpec
from playground.sweeps.inputs.trial_timeouts import trial_timeouts
from playground.sweeps.search.journal_file import JournalLockLost
from playground.sweeps.search.retrying import StorageUnavailable

POLL_SECONDS = 0.2
STAY_SECONDS = 1.0    # between looks while only other agents' trials run (their leases are measured in grace)
LOG_NAME = RunFolder.TERMINAL_LOG
LEFT = ("interrupted", "paused", "resume", "retry")   # stopped without ending: stays RUNNING in the study


@dataclass
class Outcome:
    state: str                 # complete | pruned | fail | interrupted | paused | resume | retry | superseded
    values: list[float] | None
    exit_code: int | None
    reason: str
    seconds: float


class SlotFailed(Exception):
    """A slot's failure, naming the slot, its trial and folder, the error and the line that raised it."""

    def __init__(self, slot: int, trial_id: str | None, folder: SweepFolder, err: BaseException) -> None:
        trial = f" on trial {trial_id} ({folder.trial_dir(trial_id)})" if trial_id else ""
        super().__init__(f"slot {slot}{trial}: {described(err)}")


def superseded(reason: str) -> Outcome:
    return Outcome("superseded", None, None, reason, 0.0)


class Agent:
    def __init__(self, spec: SweepSpec, folder: SweepFolder, coordinator: Coordinator, stopping: threading.Event,
                 workers: int, on_end: Callable[[str, Outcome], None], policy: RestartPolicy) -> None:
        self.spec, self.folder, self.coordinator = spec, folder, coordinator
        self.stopping, self.workers, self.on_end, self.policy = stopping, workers, on_end, policy
        self.processes: dict[int, subprocess.Popen] = {}
        self.limits = trial_timeouts(spec.raw)
        self.stopped: dict[str, str] = {}     # trial id -> why its last attempt was stopped as hung (trial.json)
        self.tickets: dict[int, Ticket] = {}     # the trial each slot works on, until it ended or was released
        self.left: dict[str, int | None] = {}    # trial id -> exit code of the attempt the sweep's stop ended
        self._waited_on: set[str] = set()        # other agents' trials this agent said it stays for
        self.servers = trial_servers(_note)       # the trial server, started by the first trial

    def close(self) -> None:
        """End the trial server (after the last trial)."""
        if self.servers is not None:
            self.servers.close()

    def halted(self) -> bool:
        """Stop claiming: the sweep is stopping, or paused (control/PAUSE)."""
        return self.stopping.is_set() or self.folder.paused()

    def run_slot(self, slot: int) -> None:
        """Claims and runs trials until the sweep halts or nothing is left. Any failure stops this slot's run
        (SIGTERM: it checkpoints), releases its trial when it can, and is raised as SlotFailed (a storage outage
        as itself), for the runner to stop the other slots and exit naming it. A journal lock lost while this
        agent was frozen, on a trial another agent has adopted meanwhile, is no failure: the trial is left to it."""
        while True:
            try:
                self._claim_and_run(slot)
                return
            except JournalLockLost as err:
                ticket = self.tickets.get(slot)
                if ticket is not None and ticket.fence is not None and not ticket.fence.superseded():
                    self._fail(slot, err)       # still its own: a failure like any other
                self._leave_adopted(slot, ticket)
            except Exception as err:
                self._fail(slot, err)

    def _leave_adopted(self, slot: int, ticket: Ticket | None) -> None:
        """After a write that found its journal lock broken: its trial (if any) is another agent's now."""
        self.tickets.pop(slot, None)
        process = self.processes.pop(slot, None)
        if process is not None:
            supervisor.kill(process)    # its successor owns the folder, as when a claim supersedes a running one
        if ticket is not None:
            self.coordinator.release(ticket)
        held = f"{ticket.trial_id}: " if ticket is not None and ticket.fence is not None else ""
        _note(f"{held}this agent was frozen past the journal lock's grace and another process broke the lock; "
              + ("the trial was adopted meanwhile, this agent leaves it" if held else "nothing of it was written"))

    def _fail(self, slot: int, err: BaseException) -> NoReturn:
        """Stop this slot's run, release its trial, and raise the failure for the runner."""
        ticket = self.tickets.pop(slot, None)
        self._abandon(slot, ticket)
        if isinstance(err, StorageUnavailable):
            raise err
        raise SlotFailed(slot, ticket.trial_id if ticket else None, self.folder, err) from err

    def _note_waiting(self) -> None:
        """Once per trial: this agent stays, with nothing of its own to run, while another agent runs it."""
        new = [t for t in self.coordinator.elsewhere if t not in self._waited_on]
        if new:
            self._waited_on.update(new)
            _note(f"nothing left to start; staying while another agent runs {', '.join(new)}, "
                  "to take it over should that agent die")

    def _abandon(self, slot: int, ticket: Ticket | None) -> None:
        """After a failure: this slot's run stopped after a checkpoint, its trial released for the next agent."""
        process = self.processes.pop(slot, None)
        if process is not None:
            supervisor.stop([process])
        if ticket is None:
            return
        with contextlib.suppress(Exception):    # best effort: the failure may be a full disk
            self._write_trial(ticket, "interrupted", slot)
        self.coordinator.release(ticket)

    def _claim_and_run(self, slot: int) -> None:
        while not self.halted():
            self.tickets.pop(slot, None)
            ticket = self.coordinator.claim()
            if ticket is None:
                return
            if ticket == WAIT:
                self._note_waiting()
                time.sleep(STAY_SECONDS if self.coordinator.elsewhere else POLL_SECONDS)
                continue
            self.tickets[slot] = ticket
            if not self._take(ticket):   # another agent created that claim first
                self.coordinator.release(ticket)
                time.sleep(POLL_SECONDS)
                continue
            if ticket.adopted and self.coordinator.already_stopped(ticket):
                outcome = Outcome("pruned", None, None, "stopped by the searcher before the sweep was killed", 0.0)
            else:
                outcome = self.run_attempts(ticket, slot)
            if outcome.state == "superseded" or self._superseded(ticket):
                self.coordinator.release(ticket)
                _note(f"{ticket.trial_id}: {outcome.reason if outcome.state == 'superseded' else 'adopted by another agent'}"
                      "; this agent leaves it")
                continue
            if outcome.state in LEFT:
                state = "paused" if outcome.state == "paused" else "interrupted"
                self.left[ticket.trial_id] = outcome.exit_code   # for the agent's last line (endings.py)
                self._write_trial(ticket, state, slot, outcome)    # released: another agent may take it at once
                self.coordinator.release(ticket)
                return
            # trial.json first: killed in between, the study still says RUNNING and the trial is adopted and
            # ends again the same way; the other order could leave trial.json saying running for ever
            self._write_trial(ticket, outcome.state, slot, outcome)
            self.coordinator.finish(ticket, outcome.state, outcome.values)
            self.tickets.pop(slot, None)    # ended: a failure from here on leaves the trial as it is
            self.on_end(ticket.trial_id, outcome)

    def _take(self, ticket: Ticket) -> bool:
        """Create the ticket's next claim file: this agent now holds the trial's next attempt (False: lost)."""
        run_dir = self.folder.trial_dir(ticket.trial_id)
        if not create_claim(run_dir, ticket.attempt, self.coordinator.me.record()):
            return False
        ticket.fence = Fence(run_dir, ticket.attempt)
        ticket.attempt += 1
        return True

    @staticmethod
    def _superseded(ticket: Ticket) -> bool:
        return ticket.fence is None or ticket.fence.superseded()

    def run_attempts(self, ticket: Ticket, slot: int) -> Outcome:
        """Attempts of one trial in its folder until the restart policy says stop (or the sweep halts)."""
        while True:
            outcome = self.run_trial(ticket, slot)
            if outcome.state not in ("resume", "retry") or self.halted():
                if outcome.state in ("resume", "retry") and self.folder.paused():
                    outcome.state = "paused"
                return outcome
            if not self._take(ticket):
                return superseded(f"claim-{ticket.attempt} was created by another agent")

    def run_trial(self, ticket: Ticket, slot: int) -> Outcome:
        """One attempt, under the claim `_take` created (ticket.fence)."""
        fence = ticket.fence
        assert fence is not None and fence.attempt is not None
        run_dir = self.folder.trial_dir(ticket.trial_id)
        if fence.superseded():
            return superseded(f"claim-{fence.attempt + 1} exists")
        self._write_trial(ticket, "running", slot)
        if ticket.warm_start is not None:   # `sweep continue`: its first attempt starts from the source checkpoint
            problem = link_checkpoint(run_dir, ticket.warm_start)
            if problem:
                return Outcome("fail", None, None, problem, 0.0)
        command = trial_command(self.spec, ticket.sets, run_dir, self.coordinator.rungs_of(ticket))
        log_path = RunFolder(run_dir).terminal_log
        log_start = os.path.getsize(log_path) if os.path.isfile(log_path) else 0
        started = time.time()
        env = {**slot_env(slot, self.workers), ATTEMPT_ENV: str(fence.attempt)}
        process = start_trial(command, env, log_path, self.servers)
        self.processes[slot] = process
        self.folder.append_attempt(ticket.trial_id, {"attempt": fence.attempt, "slot": slot, "child_pid": process.pid,
                                                     "agent": self.coordinator.me.name, "start": started,
                                                     "adopted": ticket.adopted})
        watch = ProgressWatch(run_dir, log_path, self.limits, started)
        pruned, signalled, lost, hung = self._follow(ticket, process, MetricsTail(run_dir), watch)
        # the sweep's own stop (Ctrl-C, SIGTERM, a failed slot: stop_all) may end the run before this slot saw
        # it, in its start-up say: however the run then ended, the stop was the sweep's and costs no restart
        signalled = signalled or self.stopping.is_set()
        code = raw_code = process.returncode
        if code == -signal.SIGTERM and (pruned or signalled or hung) and _wrote_results(run_dir, started):
            code = EXIT_DONE    # it had finished when our stop arrived, in its interpreter's shutdown: it is complete
        if hung and code != EXIT_DONE:     # stopped as hung: a failed attempt, however it ended
            code, pruned, signalled = (raw_code if raw_code not in (EXIT_STOPPED, EXIT_USAGE) else EXIT_FAILED,
                                       False, False)
        self.processes.pop(slot, None)
        if lost or fence.superseded():
            return superseded(f"claim-{fence.attempt + 1} appeared while attempt {fence.attempt} ran")
        ended = time.time()
        matched = None
        if code not in (EXIT_DONE, EXIT_USAGE, EXIT_STOPPED):
            matched = self.policy.matching(_read_from(log_path, log_start))
            with self.policy.lock:   # other agents spend the same sweep-wide max_restarts: count their spending
                self.policy.used = max(self.policy.used, self.folder.restarts_used())
        decision = self.policy.decide(code, matched, stop_asked=pruned or signalled)
        outcome = self._outcome(ticket, code, pruned, signalled, decision, ended - started)
        ending_entry = {}
        if hung and code != EXIT_DONE:
            self.stopped[ticket.trial_id] = f"attempt {fence.attempt} stopped: {hung} ({supervisor.ending(raw_code)})"
            outcome.reason = f"stopped: {hung} ({supervisor.ending(raw_code)}); {outcome.reason.split('; ', 1)[-1]}"
            ending_entry["stopped"] = hung
        self.folder.append_attempt(ticket.trial_id, {"attempt": fence.attempt, "slot": slot, "start": started,
                                                     "end": ended, "exit_code": raw_code, "reason": outcome.reason,
                                                     "retry": decision.retry, "restart_consumed": decision.consumes,
                                                     **ending_entry})
        return outcome

    def _follow(self, ticket: Ticket, process: subprocess.Popen, tail: MetricsTail,
                watch: ProgressWatch) -> tuple[bool, bool, bool, str | None]:
        """Wait for the process, reporting each full test pass; returns whether the searcher stopped it (pruned),
        whether the sweep did (stopping or paused), whether a later claim superseded it (then it is killed), and
        why it was stopped as hung (no progress, or past trial_timeout; None if not). Every SIGTERM sent is
        followed by SIGKILL trial_stop_grace later, so a trial that ignores it still ends."""
        objective = self.spec.objectives[0]
        time_metric = self.spec.searcher.get("time_metric", "epochs")
        pruned = signalled = False
        hung: str | None = None
        termed: float | None = None     # when the first SIGTERM went
        while True:
            finished = process.poll() is not None
            if self._superseded(ticket):
                if not finished:
                    supervisor.kill(process)   # its successor owns the folder: nothing of this attempt is worth saving
                return pruned, signalled, True, hung
            for record in tail.new_epoch_records():
                value = record.get(objective.metric)
                if not isinstance(value, (int, float)) or pruned:
                    continue
                time_value = record["samples"] if time_metric == "samples" else record.get(time_metric, 0)
                if self._superseded(ticket):
                    break
                if self.coordinator.report(ticket, record["samples"], float(time_value), float(value)) and not finished:
                    supervisor.signal_child(process)
                    pruned = True
            if finished:
                return pruned, signalled, False, hung
            if not signalled and self.halted():
                supervisor.signal_child(process)
                signalled = True
            if not (pruned or signalled or hung):
                hung = watch.hung()
                if hung:
                    _note(f"{ticket.trial_id}: {hung}; stopping it (SIGTERM, SIGKILL after "
                          f"{self.limits.grace:g} s)")
                    supervisor.signal_child(process)
            if termed is None and (pruned or signalled or hung):
                termed = time.monotonic()
            elif termed is not None and time.monotonic() - termed > self.limits.grace:
                supervisor.kill(process)      # ignored SIGTERM for trial_stop_grace: hung
            _wait(process, POLL_SECONDS)

    def _outcome(self, ticket: Ticket, code: int, pruned: bool, signalled: bool, decision: Decision,
                 seconds: float) -> Outcome:
        run_dir = self.folder.trial_dir(ticket.trial_id)
        if code == EXIT_DONE or (code in (EXIT_STOPPED, -signal.SIGKILL) and pruned):   # SIGKILL: after the grace
            values = self.objective_values(run_dir)
            if code != EXIT_DONE and values is not None and self.coordinator.reached_full_length(ticket):
                # a script still busy after its last report (a Core API loop) got the stop at the top rung
                return Outcome("complete", values, code, "done: the searcher's full length, ranked at its top "
                               "rung (stopped there)", seconds)
            if code != EXIT_DONE:
                return Outcome("pruned", values, code, "stopped by the searcher (checkpoint kept)", seconds)
            if values is None:
                return Outcome("fail", None, code, "no full test pass with the objective in metrics.jsonl", seconds)
            return Outcome("complete", values, code, "done", seconds)
        if signalled:  # the sweep stopped it (paused, or stopping): it continues its own folder later
            state = "paused" if self.folder.paused() and not self.stopping.is_set() else "interrupted"
            paused = ("paused: stopped after a checkpoint" if code != -signal.SIGKILL else
                      "paused: killed trial_stop_grace after an unanswered SIGTERM; resumes from its last checkpoint")
            return Outcome(state, None, code, paused if state == "paused" else decision.reason, seconds)
        if decision.retry:
            return Outcome("resume" if code == EXIT_STOPPED else "retry", None, code, decision.reason, seconds)
        return Outcome("fail", None, code, decision.reason + f"; see {LOG_NAME}", seconds)

    def objective_values(self, run_dir: str) -> list[float] | None:
        records = epoch_records(RunFolder(run_dir).metrics)
        values = [objective_value(records, o.metric, o.mode, self.spec.reduce) for o in self.spec.objectives]
        return None if any(v is None for v in values) else values

    def stop_all(self) -> None:
        for process in list(self.processes.values()):
            supervisor.signal_child(process)

    def _write_trial(self, ticket: Ticket, state: str, slot: int, outcome: Outcome | None = None) -> None:
        if self._superseded(ticket):
            return
        used = sum(1 for a in self.folder.read_attempts(ticket.trial_id) if a.get("restart_consumed"))
        record = {"id": ticket.trial_id, "number": ticket.number, "params": ticket.sets, "state": state,
                  "slot": slot, "restarts_used": used, "attempt": ticket.fence.attempt if ticket.fence else None,
                  "agent": self.coordinator.me.name}
        if ticket.trial_id in self.stopped:
            record["stopped"] = self.stopped[ticket.trial_id]
        if outcome is not None:
            # the last full test pass the study was told: `sweep summary --rebuild` reports exactly these again
            steps = ticket.reported_steps
            record.update(values=outcome.values, exit_code=outcome.exit_code, reason=outcome.reason,
                          last_reported_step=max(steps) if steps else None)
        self.folder.write_trial(ticket.trial_id, record)


def _wait(process: subprocess.Popen, seconds: float) -> None:
    """Up to `seconds` for the process to end: its exit is noticed within milliseconds, not at the next poll
    (the slot's gap between trials)."""
    try:
        process.wait(timeout=seconds)
    except subprocess.TimeoutExpired:
        pass


def _wrote_results(run_dir: str, since: float) -> bool:
    """Whether the run wrote results.json (its last file) since `since`: it ran to its end."""
    try:
        return os.stat(RunFolder(run_dir).results).st_mtime >= since - 1.0
    except OSError:
        return False


def _note(line: str) -> None:
    print(f"[agent] {line}", file=sys.stderr, flush=True)


def _read_from(path: str, offset: int) -> str:
    """The part of a log written since `offset`: this attempt's output."""
    try:
        with open(path, "rb") as handle:
            handle.seek(offset)
            return handle.read().decode("utf-8", errors="replace")
    except OSError:
        return ""
