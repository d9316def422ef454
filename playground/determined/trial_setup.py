"""One trial of an experiment: its hyperparameters (the constants, plus `--set name=value` for each sampled
one, dotted for nested groups: how a sweep passes the values it sampled) and the cluster info its processes
read (cluster_file.py).
"""
from __future__ import annotations

import json
from typing import Any

from playground.determined.experiment_config import Experiment, ExperimentConfigError
from playground.determined.hyperparameters import fixed_values, flatten, nest, per_slot_batch_size, \
    sampled_names, value_problem
from playground.options.did_you_mean import did_you_mean
from playground.options.user_input.set_items import HPARAM_KEY, split_sets


def parse_sets(items: list[str]) -> dict[str, Any]:
    """`name=value` items (options/user_input/set_items.py: dotted for a nested group) as a mapping; malformed
    ones are errors."""
    return dict(split_sets(items, HPARAM_KEY, ExperimentConfigError))


def trial_hparams(experiment: Experiment, sets: dict[str, Any]) -> dict:
    """The trial's hyperparameters, nested as Determined gives them; every sampled one must be set."""
    params = flatten(experiment.hyperparameters)
    problems = []
    for name, value in sets.items():
        if name not in params:
            hint = did_you_mean(name, sorted(params))
            problems.append(f"--set {name}: not a hyperparameter of {experiment.path}"
                            f"{'; ' + hint if hint else ''}")
            continue
        problem = value_problem(name, params[name], value)
        if problem:
            problems.append(f"--set {name}={json.dumps(value)}: {problem} (hyperparameters.{name})")
    missing = [name for name in sampled_names(experiment.hyperparameters) if name not in sets]
    if missing:
        problems.append(f"{experiment.path}: searcher {experiment.searcher['name']} samples "
                        f"{', '.join(missing)}; one run needs a value for each (--set NAME=VALUE), or run the "
                        f"search: playground sweep run {experiment.path}")
    values = {**fixed_values(experiment.hyperparameters), **sets}
    _, problem = per_slot_batch_size(values, experiment.slots_per_trial)
    if problem:
        problems.append(problem)
    if problems:
        raise ExperimentConfigError(problems)
    return nest(values)


def cluster_info(experiment: Experiment, hparams: dict, run_dir: str, test_mode: bool, trial_id: int = 1,
                 rungs: list[int] | None = None) -> dict:
    """The fields of det_cluster.json the runner writes (it fills latest_checkpoint at each attempt)."""
    import os
    global_batch_size = hparams.get("global_batch_size")
    return {
        "experiment_config": {**experiment.config, "hyperparameters": experiment.hyperparameters},
        "hparams": hparams, "trial_id": trial_id, "experiment_id": 1, "run_dir": os.path.abspath(run_dir),
        "checkpoint_dir": experiment.checkpoint_dir or os.path.join(os.path.abspath(run_dir), "checkpoints"),
        "latest_checkpoint": None, "max_length": experiment.max_length(), "rungs": list(rungs or []),
        "records_per_epoch": experiment.records_per_epoch,
        "global_batch_size": global_batch_size if isinstance(global_batch_size, int) else None,
        "slots_per_trial": experiment.slots_per_trial, "test_mode": test_mode,
    }
