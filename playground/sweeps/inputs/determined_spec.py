"""A Determined experiment configuration as a sweep spec: `playground sweep run EXPERIMENT.yaml`.

The space is the hyperparameters (nested groups as dotted names; constants fixed), the objective is
searcher.metric (smaller_is_better: min), the searcher is single, random, grid or adaptive_asha with its
budget; lengths map onto the sweep's time metric (batches: iteration, records: samples, epochs: epochs). Each
trial is `playground run EXPERIMENT.yaml --set NAME=VALUE ... --run-dir DIR` (trial_process.py), which trains
for the searcher's length; adaptive ASHA stops the trials that do not reach the next rung. Grid points are
Determined's: `count` evenly spaced values from minval to maxval (an int range clamped to its integers), the
midpoint when count is 1. max_restarts is the whole sweep's budget of retries, as Determined's is the
experiment's.
"""
from __future__ import annotations

import math
from typing import Any

from playground.determined.experiment_config import ExperimentConfigError, parse_experiment
from playground.determined.hyperparameters import RANGES, flatten, is_parameter
from playground.determined.searcher_config import SWEEP_TIME_METRIC, searcher_length
from playground.sweeps.errors import SweepError


def experiment_spec(data: dict, path: str, text: str = "") -> dict:
    """The sweep spec (as a spec file would hold it) that runs the experiment `path` (parsed as `data`)."""
    try:
        experiment = parse_experiment(data, path, text)
    except ExperimentConfigError as err:
        raise SweepError(err.problems) from None
    s, written = experiment.searcher, data.get("searcher") or {}
    grid = s["name"] == "grid"
    space = {name: _param(value, grid) for name, value in flatten(experiment.hyperparameters).items()}
    spec: dict[str, Any] = {
        "name": experiment.name, "experiment": experiment.path, "space": space,
        "objective": {"metric": s["metric"], "mode": "min" if s["smaller_is_better"] else "max"},
        "searcher": _searcher(s, written, experiment.config),
        "resources": {"slots_per_trial": experiment.slots_per_trial}, "max_restarts": experiment.max_restarts,
    }
    return spec


def _searcher(s: dict, written: dict, config: dict) -> dict:
    out: dict[str, Any] = {"name": s["name"]}
    seed = (config.get("reproducibility") or {}).get("experiment_seed")
    if s["name"] == "random":
        out.update(max_trials=s["max_trials"], seed=seed or 0)
    if written.get("max_concurrent_trials"):     # Determined's default (16) would be 16 local workers
        out["max_concurrent_trials"] = written["max_concurrent_trials"]
    if s["name"] == "adaptive_asha":
        unit, length = searcher_length(s)
        out.update(max_trials=s["max_trials"], time_metric=SWEEP_TIME_METRIC[unit], max_time=length,
                   divisor=s["divisor"], max_rungs=s["max_rungs"], mode=s["mode"], seed=seed or 0)
        if s.get("bracket_rungs"):
            out["bracket_rungs"] = s["bracket_rungs"]
    return out


def _param(value: Any, grid: bool) -> Any:
    """A sweep parameter for one hyperparameter: constants as `const`, a grid range as the categorical of
    Determined's grid values, everything else as written (the sweep space reads Determined's forms)."""
    if not is_parameter(value):
        return {"type": "const", "val": value}
    if value["type"] == "log":
        value = {"base": 10, **value}
    if grid and value["type"] in RANGES:
        return {"type": "categorical", "vals": grid_values(value)}
    return dict(value)


def grid_values(param: dict) -> list:
    """Determined's grid axis of an int/double/log hyperparameter (master/pkg/searcher/grid.go): `count`
    evenly spaced points from minval to maxval (ints rounded half away from zero, count clamped to the
    integers in the range), the midpoint when count is 1; log gives base ** each point."""
    kind, lo, hi, count = param["type"], param["minval"], param["maxval"], param["count"]
    if kind == "int":
        count = min(count, hi - lo + 1)
    points = [(lo + hi) / 2] if count == 1 else [lo + i * (hi - lo) / (count - 1) for i in range(count)]
    if kind == "int":
        return [int(math.copysign(math.floor(abs(x) + 0.5), x)) for x in points]
    return [param["base"] ** x for x in points] if kind == "log" else points
