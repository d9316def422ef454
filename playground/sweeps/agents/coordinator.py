"""The one place that talks to the study: hands out trials (adopted, enqueued, or newly asked) within the exact
budget, takes each full test pass and says whether to stop the trial, and records how each trial ended.

Thread-safe (one lock): the slots of an agent process share one coordinator. Several agent processes (other
hosts, a Slurm array) share the study: a RUNNING trial of another agent is adopted only when its lease expired
(lease.py); adopting it means creating the next claim file (the ticket's `attempt`), which the agent does
before starting the run. Asking for a new trial holds control/ask.lock (an flock) across the budget check and
the ask, so several processes never overshoot the budget. The adaptive ASHA state is saved to searcher.json
after every change; it remembers which (trial, step) it has counted, so nothing counts twice.
"""
from __future__ import annotations

import fcntl
import json
import os
import threading
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Iterator

from playground.outputs.atomic_files import write_json
from playground.restarts.fence import Fence, claim_path, highest_claim, read_claim
from playground.sweeps.agents.heartbeat import AgentId
from playground.sweeps.agents.lease import EXPIRED, RELEASED_STATES, Leases
from playground.sweeps.errors import SweepError
from playground.sweeps.files.sweep_folder import SweepFolder, file_stamp
from playground.sweeps.inputs.spec import DEFAULT_GRACE_SECONDS, SweepSpec
from playground.sweeps.search._optuna_private import storage_of, storage_trial_id, suggest_params
from playground.sweeps.search.asha import AdaptiveAsha, make_brackets
from playground.sweeps.search.distinct import sampler as distinct_sampler
from playground.sweeps.search.study import (BudgetTally, distributions, live_trial, make_sampler, sampled_budget,
                                           trial_id_of, trial_sets, with_replacement)

WAIT = "wait"   # nothing to claim now, but a place may free up (ASHA brackets) or a lease may expire


@dataclass
class Ticket:
    trial_id: str
    number: int
    sets: dict[str, Any]
    optuna_id: int
    adopted: bool = False
    reported_steps: set = field(default_factory=set)
    warm_start: dict | None = None   # `sweep continue`: the checkpoint it starts from; outside the searcher
    attempt: int = 1                 # the claim to create before starting the next attempt
    fence: Fence | None = None       # the write permission of the attempt running now


class Coordinator:
    def __init__(self, study: Any, spec: SweepSpec, folder: SweepFolder, total: int, adopt: bool = True,
                 me: AgentId | None = None, grace: float = DEFAULT_GRACE_SECONDS) -> None:
        """`adopt`: take over RUNNING trials whose lease expired (False: only ask, for benchmarks)."""
        self.study, self.spec, self.folder, self.total, self.adopt = study, spec, folder, total, adopt
        self.me = me or AgentId.this_process()
        self.leases = Leases(folder.control, self.me, grace)
        self.lock = threading.Lock()
        self.owned: dict[int, str] = {}   # optuna trial id -> trial id, for trials this process runs
        self.elsewhere: list[str] = []    # RUNNING trials of other agents, whose leases hold (at the last claim)
        self.dists = distributions(spec.space, grid=spec.searcher_name == "grid")
        # no point twice, whatever other agents and earlier runs asked (search/distinct.py); a Determined
        # experiment's search draws with replacement, as Determined does
        self.distinct = not with_replacement(spec)
        study.sampler = distinct_sampler(study, lambda seed: make_sampler({**spec.searcher, "seed": seed}),
                                         spec.searcher.get("seed", 0), self.dists, self.me.name, self.distinct)
        self.asha = self._load_asha() if spec.searcher_name == "adaptive_asha" else None
        self._spec_stamp = file_stamp(folder.spec_file)
        self.tally = BudgetTally()        # the budget's trials, counted as the study grows

    def budget(self) -> int:
        """The budget now: `sweep run` on the folder while this agent works may have raised or lowered
        searcher.max_trials (sweep.json records it); re-read when sweep.json changed. Grid and upf budgets are
        their planned points, and adaptive ASHA's brackets were made for the budget it started with."""
        if self.spec.searcher_name in ("grid", "upf", "adaptive_asha"):
            return self.total
        stamp = file_stamp(self.folder.spec_file)
        if stamp != self._spec_stamp:
            self._spec_stamp = stamp
            try:
                # validated before it was written (`sweep run` checks the spec, then record_budget stores it)
                self.total = sampled_budget(self.folder.read_spec().get("spec", {}).get("searcher", {}),
                                            self.spec.space, self.distinct)
            except SweepError:       # unreadable this instant: the next claim reads it again
                self._spec_stamp = None
        return self.total

    # -- handing out trials -------------------------------------------------------------------------
    def claim(self) -> Ticket | str | None:
        """The next trial for a free slot, WAIT, or None when the budget is spent and nothing is left to adopt.

        With the budget spent, an agent stays (WAIT) while another agent's trial runs: should that agent die, its
        trial is adopted here once the lease expires, rather than left RUNNING with no agent left to take it.
        `elsewhere` then names those trials.
        """
        from optuna.trial import TrialState
        with self.lock:
            elsewhere = []
            for trial in self.study.get_trials(deepcopy=False, states=(TrialState.RUNNING,)):
                if not self.adopt or storage_trial_id(trial) in self.owned:
                    continue
                verdict, attempt = self._lease(trial)
                if verdict == EXPIRED:
                    return self._ticket(trial, adopted=True, attempt=attempt)
                elsewhere.append(trial_id_of(trial))
            self.elsewhere = elsewhere
            with self._ask_lock():
                trials = self.study.get_trials(deepcopy=False)
                in_budget = self.tally.update(trials).counted
                waiting = self.tally.waiting    # planned, or extra (sweep continue)
                if not waiting and (in_budget >= self.budget() or self.study.sampler.exhausted(trials)):
                    return WAIT if elsewhere else None
                bracket = None
                if self.asha is not None and not any(t.user_attrs.get("extra") for t in waiting):
                    bracket = self.asha.next_bracket()
                    if bracket is None:
                        return WAIT if self.owned or elsewhere else None
                trial = self.study.ask(fixed_distributions=self.dists)
                # who asked, first: until its first claim file exists this names the trial's holder
                storage_of(self.study).set_trial_user_attr(storage_trial_id(trial), "agent", self.me.record())
            frozen = storage_of(self.study).get_trial(storage_trial_id(trial))
            sets = frozen.user_attrs.get("sets")
            if sets is None:
                sets = trial_sets(self.spec.space, frozen.params)
                storage_of(self.study).set_trial_user_attr(storage_trial_id(trial), "sets", sets)
            if self.asha is not None and not frozen.user_attrs.get("extra"):
                self.asha.add_trial(trial_id_of(frozen), bracket)
                self._save_asha()
            frozen = storage_of(self.study).get_trial(storage_trial_id(trial))
            return self._ticket(frozen, adopted=False,
                                attempt=highest_claim(self.folder.trial_dir(trial_id_of(frozen))) + 1)

    def _lease(self, trial: Any) -> tuple[str, int]:
        """The lease verdict on a RUNNING trial of another agent, and the claim number that adopting it takes."""
        trial_id = trial_id_of(trial)
        run_dir = self.folder.trial_dir(trial_id)
        highest = highest_claim(run_dir)
        if highest:
            holder = AgentId.from_record(read_claim(run_dir, highest))
            try:
                since = os.stat(claim_path(run_dir, highest)).st_mtime
            except OSError:
                since = 0.0
        else:
            holder = AgentId.from_record(trial.user_attrs.get("agent") or {})
            since = trial.datetime_start.timestamp() if trial.datetime_start else 0.0
        record = self.folder.read_trial(trial_id)
        released = highest > 0 and record.get("attempt") == highest and record.get("state") in RELEASED_STATES
        return self.leases.verdict(holder, since, released, key=str(storage_trial_id(trial))), highest + 1

    @contextmanager
    def _ask_lock(self) -> Iterator[None]:
        """Across processes (an flock on control/ask.lock): the budget check and the ask are one step."""
        os.makedirs(self.folder.control, exist_ok=True)
        with open(os.path.join(self.folder.control, "ask.lock"), "a+") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            yield

    def _ticket(self, trial: Any, adopted: bool, attempt: int) -> Ticket:
        self.owned[storage_trial_id(trial)] = trial_id_of(trial)
        sets = trial.user_attrs.get("sets")
        if sets is None:  # its asker was killed before storing the sets, perhaps before sampling every param
            sets = self._complete_params(trial)
        extra = bool(trial.user_attrs.get("extra"))
        if self.asha is not None and not extra and trial_id_of(trial) not in self.asha.trial_bracket:
            bracket = self.asha.next_bracket()
            self.asha.add_trial(trial_id_of(trial), 0 if bracket is None else bracket)
            self._save_asha()
        return Ticket(trial_id_of(trial), trial.number, sets, storage_trial_id(trial), adopted,
                      set(trial.intermediate_values), trial.user_attrs.get("warm_start"), attempt)

    def _complete_params(self, trial: Any) -> dict[str, Any]:
        """Sample (or take from the enqueued point) the params an asker killed midway did not store; the sets.
        Another agent adopting the same orphan may have stored them since this one looked (it then runs the trial,
        perhaps to its end): read again under the ask lock, so only the first adopter writes the study."""
        with self._ask_lock():     # checked against the other agents' points like an ask
            stored = storage_of(self.study).get_trial(storage_trial_id(trial)).user_attrs.get("sets")
            if stored is not None:
                return stored      # the same sets for both: claim-<n> (O_EXCL) decides which of them runs it
            params = suggest_params(self.study, storage_trial_id(trial), self.dists)
            sets = trial_sets(self.spec.space, params)
            storage_of(self.study).set_trial_user_attr(storage_trial_id(trial), "sets", sets)
        return sets

    def trials(self) -> list[str]:
        """The trials this process runs now (for its heartbeat, which must never wait for the lock)."""
        return list(self.owned.copy().values())

    def rungs_of(self, ticket: Ticket) -> list[int]:
        """The lengths (in the time metric) at which adaptive ASHA ranks this trial; [] for other searchers, extra
        trials, or a trial whose bracket this process does not know."""
        with self.lock:
            if self.asha is None or ticket.warm_start is not None or ticket.trial_id not in self.asha.trial_bracket:
                return []
            return list(self.asha.units[self.asha.trial_bracket[ticket.trial_id]])

    def already_stopped(self, ticket: Ticket) -> bool:
        """An adopted trial the searcher stopped before the sweep was killed: pruned, without running it again."""
        with self.lock:
            return self.asha is not None and ticket.trial_id in self.asha.finished

    # -- reports and endings --------------------------------------------------------------------------
    def report(self, ticket: Ticket, step: int, time_value: float, value: float) -> bool:
        """One full test pass (`step` in samples seen, `time_value` in the time metric); True: stop the trial."""
        if self.spec.multi_objective:
            return False
        with self.lock:
            trial = live_trial(self.study, ticket.optuna_id)
            if step not in ticket.reported_steps:
                trial.report(value, step)
                ticket.reported_steps.add(step)
            if ticket.warm_start is not None:   # an extra trial: the searcher does not stop it
                return False
            if self.asha is not None:
                stop = self.asha.report(ticket.trial_id, time_value, value)
                self._save_asha()
                return stop
            return self.spec.searcher_name == "hyperband" and trial.should_prune()

    def reached_full_length(self, ticket: Ticket) -> bool:
        """Whether adaptive ASHA ranked the trial at its top rung: stopped there, it is done, not pruned."""
        with self.lock:
            return self.asha is not None and self.asha.reached_top(ticket.trial_id)

    def finish(self, ticket: Ticket, state: str, values: list[float] | None) -> None:
        """Tell the study how the trial ended: "complete" with values, "pruned", or "fail"."""
        from optuna.trial import TrialState
        with self.lock:
            if self.asha is not None:
                self.asha.exited(ticket.trial_id, error=state == "fail")
                self._save_asha()
            target = {"complete": TrialState.COMPLETE, "pruned": TrialState.PRUNED, "fail": TrialState.FAIL}[state]
            self.study.tell(ticket.number, values if state == "complete" else None, state=target,
                            skip_if_finished=True)
            self.owned.pop(ticket.optuna_id, None)

    def release(self, ticket: Ticket) -> None:
        """This process stops working on the trial without ending it (stopping, paused, or another agent took it
        over): it stays RUNNING in the study, for its next claim's holder."""
        with self.lock:
            self.owned.pop(ticket.optuna_id, None)

    # -- adaptive ASHA state ------------------------------------------------------------------------
    def _load_asha(self) -> AdaptiveAsha:
        s = self.spec.searcher
        brackets = make_brackets(self.total, s["max_time"], s["divisor"], s["max_rungs"], s["mode"],
                                 s.get("max_concurrent_trials") or 0, s.get("bracket_rungs"))
        asha = AdaptiveAsha(brackets, s["divisor"], s["max_time"], self.spec.objectives[0].mode == "min")
        if os.path.isfile(self.folder.searcher_state):
            with open(self.folder.searcher_state, encoding="utf-8") as handle:
                asha.restore(json.load(handle))
        return asha

    def _save_asha(self) -> None:
        write_json(self.folder.searcher_state, self.asha.snapshot(), durable=False)
