"""One sweep folder as the pages show it, kept in step with its files: sweep.json (the spec), searcher.json (ASHA's
rungs), control/ (the PAUSE flag, the agents' heartbeats) and each trial folder (trial_watch.py).

Every change gets a number from the sweep's counter (`version`), so a page that has seen up to version v asks for
the rows and curves changed since v only; with 10,000 trials a poll sends what changed, not the table.
What a sweep folder holds is docs/sweeps.md's ("The sweep folder"). Nothing is written.
"""
from __future__ import annotations

import os
import threading
import time
from typing import Any

from playground.restarts.host import host_id
from playground.sweeps.agents.heartbeat import possibly_alive, read_heartbeats
from playground.sweeps.inputs.spec import Objective
from playground.sweeps.results.pareto import FRONT_STATES, front
from playground.ui.files.followed_file import JsonFile, file_stamp
from playground.ui.views.asha_rungs import asha_rungs
from playground.ui.views.sweep_spec import SpecView, spec_view
from playground.ui.views.sweep_summary import SweepSummary, curve_selection, summarize
from playground.ui.views.trial_watch import FINISHED, TrialWatch

MIN_POLL_SECONDS = 0.4      # pages polling at once share one look at the files
FINISHED_PER_POLL = 200     # finished trials looked at again per poll, in turn (their folders no longer change)
PARETO_LIMIT = 2000         # finished trials above which the Pareto front (quadratic) is not worked out


class SweepWatch:
    def __init__(self, path: str) -> None:
        self.path = path
        self.stored = JsonFile(os.path.join(path, "sweep.json"))
        self.searcher_state = JsonFile(os.path.join(path, "searcher.json"))
        self.spec: SpecView = spec_view(None, os.path.basename(path))
        self.trials: dict[str, TrialWatch] = {}
        self.rows: dict[str, dict[str, Any]] = {}
        self.version = 0
        self.agents: list[str] = []
        self.pareto: list[str] = []
        self.pareto_note = ""
        self.selected: list[str] = []          # the trials the learning-curves chart draws
        self.summary = summarize({}, {}, [])
        self.lock = threading.Lock()
        self._trials_stamp: tuple | None = None
        self._polled = -MIN_POLL_SECONDS
        self._turn = 0

    def poll(self) -> None:
        """Read what changed since the last poll (at most every MIN_POLL_SECONDS). Callers hold `lock`."""
        if time.monotonic() - self._polled < MIN_POLL_SECONDS:
            return
        self._polled = time.monotonic()
        version = self.version + 1
        respecified = self.stored.poll()
        if respecified:      # every row shows the objectives: all are made again
            self.spec = spec_view(self.stored.value, os.path.basename(self.path))
        header = respecified | self.searcher_state.poll() | self._find_trials()
        changed = [t for t in self._due(respecified or not self.rows) if t.poll(version) or respecified]
        for trial in changed:
            trial.version = version
            self.rows[trial.id] = trial.row(self.spec.objectives)
        agents = self._agents_alive()
        header |= agents != self.agents
        self.agents = agents
        if changed or header:
            self.version = version
            self._mark_pareto()
            self.summary = summarize(self.rows, self.trials, self.spec.objectives)
            self._select_curves(version)

    def _due(self, everything: bool) -> list[TrialWatch]:
        """The trials to look at now: every one not finished, and the next FINISHED_PER_POLL finished ones."""
        trials = list(self.trials.values())
        if everything:
            return trials
        finished = [t for t in trials if t.state in FINISHED]
        turn = [finished[(self._turn + i) % len(finished)] for i in range(min(FINISHED_PER_POLL, len(finished)))]
        self._turn += len(turn)
        return [t for t in trials if t.state not in FINISHED] + turn

    def _select_curves(self, version: int) -> None:
        """The trials the chart draws; one that joins them is sent whole at the next request for curves."""
        mode = self.spec.objectives[0][1] if self.spec.objectives else None
        selected = curve_selection(self.rows, mode)
        for trial_id in set(selected) - set(self.selected):
            self.trials[trial_id].curve_version = version
        self.selected = selected

    def _find_trials(self) -> bool:
        folder = os.path.join(self.path, "trials")
        stamp = file_stamp(folder)
        if stamp == self._trials_stamp:
            return False
        self._trials_stamp = stamp
        try:
            names = sorted(e.name for e in os.scandir(folder) if e.is_dir())
        except OSError:
            names = []
        new = [n for n in names if n not in self.trials]
        for name in new:
            self.trials[name] = TrialWatch(name, os.path.join(folder, name))
        return bool(new)

    def _agents_alive(self) -> list[str]:
        """Names of the agents whose heartbeat is recent and that did not provably stop (their process gone here)."""
        alive, here = [], host_id()
        for beat in read_heartbeats(os.path.join(self.path, "control")):
            every = beat.get("heartbeat_seconds") if isinstance(beat.get("heartbeat_seconds"), (int, float)) else 5.0
            fresh = isinstance(beat.get("clock"), (int, float)) and time.time() - beat["clock"] < 3 * every + 10
            if fresh and possibly_alive(beat, here):
                alive.append(str(beat.get("agent", "?")))
        return alive

    def _mark_pareto(self) -> None:
        self.pareto, self.pareto_note = [], ""
        if len(self.spec.objectives) < 2:
            return
        points = {r["id"]: r["values"] for r in self.rows.values()
                  if r["state"] in FRONT_STATES and r["final"] and isinstance(r["values"], list)
                  and len(r["values"]) == len(self.spec.objectives) and all(v is not None for v in r["values"])}
        if len(points) > PARETO_LIMIT:
            self.pareto_note = f"{len(points)} finished trials: the Pareto front is worked out up to {PARETO_LIMIT}"
            return
        self.pareto = front(points, [Objective(m, mode) for m, mode in self.spec.objectives])

    def state(self) -> str:
        """running, pausing (paused, its agents still stopping trials), paused, finished, or stopped (resumable)."""
        paused = os.path.exists(os.path.join(self.path, "control", "PAUSE"))
        if paused:
            return "pausing" if self.agents else "paused"
        if self.agents:
            return "running"
        budget = self.spec.searcher.get("max_trials")
        if self.summary.all_finished and (not isinstance(budget, int) or len(self.rows) >= budget):
            return "finished"
        return "stopped" if self.rows else "not started"

    def started(self) -> float | None:
        if self.summary.started is not None:
            return self.summary.started
        stamp = file_stamp(os.path.join(self.path, "sweep.json"))
        return None if stamp is None else stamp[2] / 1e9

    def length(self, state: str) -> float | None:
        started = self.started()
        if started is None:
            return None
        if state in ("running", "pausing"):
            return time.time() - started
        return self.summary.ended - started if self.summary.ended is not None else None

    def header(self) -> dict[str, Any]:
        state = self.state()
        return {"name": self.spec.name, "spec": self.spec.to_json(), "state": state, "counts": self.summary.counts,
                "trials": len(self.rows), "budget": self.spec.searcher.get("max_trials"), "agents": self.agents,
                "started": self.started(), "length": self.length(state), "best": self.summary.best,
                "pareto": self.pareto, "pareto_note": self.pareto_note,
                "rungs": asha_rungs(self.spec.searcher, self.searcher_state.value)}

    def rows_since(self, seen: int) -> list[dict[str, Any]]:
        return [self.rows[t.id] for t in self.trials.values() if t.version > seen and t.id in self.rows]

    def time_metric(self) -> str:
        """The x of the learning curves: ASHA's time metric, else epochs."""
        metric = self.spec.searcher.get("time_metric") if self.spec.searcher.get("name") == "adaptive_asha" else None
        return {"iteration": "iteration", "samples": "samples"}.get(metric or "", "epochs")

    def curves_since(self, seen: int) -> list[TrialWatch]:
        """The selected trials whose curves changed (or that joined the selection) since version `seen`."""
        return [self.trials[i] for i in self.selected if self.trials[i].curve_version > seen]

    def curve_metrics(self) -> list[str]:
        """The metrics the trials' full test passes hold (the objectives first)."""
        names = dict.fromkeys(m for m, _ in self.spec.objectives)
        for trial in list(self.trials.values())[:20]:
            for record in trial.full_passes()[:1]:
                names.update(dict.fromkeys(k for k, v in record.items()
                                           if isinstance(v, (int, float)) and k.startswith(("test", "val"))))
        return list(names)

    def finished_points(self) -> list[tuple[dict[str, Any], float]]:
        """(settings, first objective's final value) of each complete trial: what importances are made of."""
        return [(r["params"], r["values"][0]) for r in self.rows.values()
                if r["state"] == "complete" and r["final"] and r["values"] and isinstance(r["values"][0], (int, float))]

