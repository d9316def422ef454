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
from playground.ui.views.trial_watch import FINISHED, TrialWatch

MIN_POLL_SECONDS = 0.4      # pages polling at once share one look at the files
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
        self.lock = threading.Lock()
        self._trials_stamp: tuple | None = None
        self._polled = -MIN_POLL_SECONDS

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
        changed = [t for t in self.trials.values() if t.poll(version) or respecified]
        for trial in changed:
            trial.version = version
            self.rows[trial.id] = trial.row(self.spec.objectives)
        agents = self._agents_alive()
        header |= agents != self.agents
        self.agents = agents
        if changed or header:
            self.version = version
            self._mark_pareto()

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
        done = all(r["state"] in FINISHED for r in self.rows.values())
        if self.rows and done and (not isinstance(budget, int) or len(self.rows) >= budget):
            return "finished"
        return "stopped" if self.rows else "not started"

    def counts(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for row in self.rows.values():
            out[row["state"]] = out.get(row["state"], 0) + 1
        return out

    def best(self) -> dict[str, Any] | None:
        """The best complete trial by the first objective: {trial, metric, mode, value}."""
        if not self.spec.objectives:
            return None
        metric, mode = self.spec.objectives[0]
        done = [r for r in self.rows.values() if r["state"] in ("complete", "imported") and r["final"]
                and r["values"] and isinstance(r["values"][0], (int, float))]
        if not done:
            return None
        row = (min if mode == "min" else max)(done, key=lambda r: r["values"][0])
        return {"trial": row["id"], "metric": metric, "mode": mode, "value": row["values"][0], "params": row["params"]}

    def started(self) -> float | None:
        starts = [s for s in (t.started() for t in self.trials.values()) if s is not None]
        if starts:
            return min(starts)
        stamp = file_stamp(os.path.join(self.path, "sweep.json"))
        return None if stamp is None else stamp[2] / 1e9

    def length(self) -> float | None:
        started = self.started()
        if started is None:
            return None
        if self.state() in ("running", "pausing"):
            return time.time() - started
        ends = [e for e in (t.ended() for t in self.trials.values()) if e is not None]
        return max(ends) - started if ends else None

    def header(self) -> dict[str, Any]:
        return {"name": self.spec.name, "spec": self.spec.to_json(), "state": self.state(), "counts": self.counts(),
                "trials": len(self.rows), "budget": self.spec.searcher.get("max_trials"), "agents": self.agents,
                "started": self.started(), "length": self.length(), "best": self.best(), "pareto": self.pareto,
                "pareto_note": self.pareto_note,
                "rungs": asha_rungs(self.spec.searcher, self.searcher_state.value)}

    def rows_since(self, seen: int) -> list[dict[str, Any]]:
        return [self.rows[t.id] for t in self.trials.values() if t.version > seen and t.id in self.rows]

    def time_metric(self) -> str:
        """The x of the learning curves: ASHA's time metric, else epochs."""
        metric = self.spec.searcher.get("time_metric") if self.spec.searcher.get("name") == "adaptive_asha" else None
        return {"iteration": "iteration", "samples": "samples"}.get(metric or "", "epochs")

    def curves_since(self, seen: int, metric: str) -> dict[str, dict[str, list]]:
        x = self.time_metric()
        return {t.id: t.curve(metric, x) for t in self.trials.values() if t.curve_version > seen}

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

