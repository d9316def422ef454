"""The one place that talks to the study: hands out trials (adopted, enqueued, or newly asked) within the exact
budget, takes each full test pass and says whether to stop the trial, and records how each trial ended.

Thread-safe (one lock): the agent slots of `sweep run` share one coordinator. A trial left RUNNING in the study
by a killed sweep is adopted first and resumes its own run folder. The adaptive ASHA state is saved to
searcher.json after every change; it remembers which (trial, step) it has counted, so nothing counts twice.
"""
from __future__ import annotations

import json
import os
import threading
from dataclasses import dataclass, field
from typing import Any

from playground.outputs.atomic_files import write_json
from playground.sweeps.asha import AdaptiveAsha, make_brackets
from playground.sweeps.folder import SweepFolder
from playground.sweeps.space import constants
from playground.sweeps.spec import SweepSpec
from playground.sweeps.study import counted, distributions, trial_id_of

WAIT = "wait"   # nothing to claim now, but running trials may free a place (ASHA brackets)


@dataclass
class Ticket:
    trial_id: str
    number: int
    sets: dict[str, Any]
    optuna_id: int
    adopted: bool = False
    reported_steps: set = field(default_factory=set)
    warm_start: dict | None = None   # `sweep continue`: the checkpoint it starts from; outside the searcher


class Coordinator:
    def __init__(self, study: Any, spec: SweepSpec, folder: SweepFolder, total: int, adopt: bool = True) -> None:
        """`adopt`: RUNNING trials not owned here are orphans of a killed sweep (true while one process works
        on a folder; agents on several hosts will adopt only trials whose lease expired)."""
        self.study, self.spec, self.folder, self.total, self.adopt = study, spec, folder, total, adopt
        self.lock = threading.Lock()
        self.owned: set[int] = set()      # optuna trial ids running in this process
        self.dists = distributions(spec.space, grid=spec.searcher_name == "grid")
        self.asha = self._load_asha() if spec.searcher_name == "adaptive_asha" else None

    # -- handing out trials -------------------------------------------------------------------------
    def claim(self) -> Ticket | str | None:
        """The next trial for a free slot, WAIT, or None when the budget is spent and nothing is left to adopt."""
        from optuna.trial import TrialState
        with self.lock:
            trials = self.study.get_trials(deepcopy=False)
            for trial in trials:
                if self.adopt and trial.state == TrialState.RUNNING and trial._trial_id not in self.owned:
                    return self._ticket(trial, adopted=True)
            in_budget = counted(trials)
            waiting = [t for t in trials if t.state == TrialState.WAITING]   # planned, or extra (sweep continue)
            if not waiting and len(in_budget) >= self.total:
                return None
            bracket = None
            if self.asha is not None and not any(t.user_attrs.get("extra") for t in waiting):
                bracket = self.asha.next_bracket()
                if bracket is None:
                    return WAIT if self.owned else None
            trial = self.study.ask(fixed_distributions=self.dists)
            frozen = self.study._storage.get_trial(trial._trial_id)
            sets = frozen.user_attrs.get("sets")
            if sets is None:
                sets = {**constants(self.spec.space), **frozen.params}
                self.study._storage.set_trial_user_attr(trial._trial_id, "sets", sets)
            if self.asha is not None and not frozen.user_attrs.get("extra"):
                self.asha.add_trial(trial_id_of(frozen), bracket)
                self._save_asha()
            frozen = self.study._storage.get_trial(trial._trial_id)
            return self._ticket(frozen, adopted=False)

    def _ticket(self, trial: Any, adopted: bool) -> Ticket:
        self.owned.add(trial._trial_id)
        sets = trial.user_attrs.get("sets")
        if sets is None:  # killed between ask and storing the sets
            sets = {**constants(self.spec.space), **trial.params}
        extra = bool(trial.user_attrs.get("extra"))
        if self.asha is not None and not extra and trial_id_of(trial) not in self.asha.trial_bracket:
            bracket = self.asha.next_bracket()
            self.asha.add_trial(trial_id_of(trial), 0 if bracket is None else bracket)
            self._save_asha()
        return Ticket(trial_id_of(trial), trial.number, sets, trial._trial_id, adopted,
                      set(trial.intermediate_values), trial.user_attrs.get("warm_start"))

    def already_stopped(self, ticket: Ticket) -> bool:
        """An adopted trial the searcher stopped before the sweep was killed: pruned, without running it again."""
        with self.lock:
            return self.asha is not None and ticket.trial_id in self.asha.finished

    def running(self) -> int:
        with self.lock:
            return len(self.owned)

    # -- reports and endings --------------------------------------------------------------------------
    def report(self, ticket: Ticket, step: int, time_value: float, value: float) -> bool:
        """One full test pass (`step` in samples seen, `time_value` in the time metric); True: stop the trial."""
        import optuna
        if self.spec.multi_objective:
            return False
        with self.lock:
            trial = optuna.trial.Trial(self.study, ticket.optuna_id)
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
            self.owned.discard(ticket.optuna_id)

    def release(self, ticket: Ticket) -> None:
        """The trial stopped without ending (the sweep is stopping): it stays RUNNING, to be adopted later."""
        with self.lock:
            self.owned.discard(ticket.optuna_id)

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
