"""One trial of an experiment: its hyperparameters (the constants, plus `--set name=value` for each sampled
one, dotted for nested groups: how a sweep passes the values it sampled), its length when it is given one of
its own (`--set searcher.max_length.UNIT=N`: a continued trial), and the cluster info its processes read
(cluster_file.py).
"""
from __future__ import annotations

import json
import sys
from typing import Any

from playground.determined.experiment_config import Experiment, ExperimentConfigError
from playground.determined.hyperparameters import fixed_values, flatten, nest, per_slot_batch_size, \
    sample_once, sampled_names, value_problem
from playground.options.did_you_mean import did_you_mean
from playground.options.user_input.set_items import HPARAM_KEY, split_sets


def parse_sets(items: list[str]) -> dict[str, Any]:
    """`name=value` items (options/user_input/set_items.py: dotted for a nested group) as a mapping; malformed
    ones are errors."""
    return dict(split_sets(items, HPARAM_KEY, ExperimentConfigError))


LENGTH = "searcher.max_length"


def split_length(experiment: Experiment, sets: dict[str, Any]) -> tuple[dict[str, Any], dict | None]:
    """(the hyperparameter sets, the trial's own length): `--set searcher.max_length.UNIT=N` (or
    `searcher.max_length={"UNIT": N}`) gives the trial a length of its own, as Determined's "continue trial"
    with a longer max_length does; checked here, before anything runs: the experiment's unit, a positive
    whole number, and only for an experiment whose searcher has a max_length (0.38's time_metric + max_time
    leaves the length to the script's own fit(max_length))."""
    hparams = {k: v for k, v in sets.items() if k != LENGTH and not k.startswith(LENGTH + ".")}
    given = {k: v for k, v in sets.items() if k not in hparams}
    if not given:
        return hparams, None
    length = {}
    for key, value in given.items():
        if key == LENGTH:
            length.update(value if isinstance(value, dict) else {"?": value})
        else:
            length[key[len(LENGTH) + 1:]] = value
    current = experiment.max_length()
    where = f"--set {LENGTH}"
    if current is None:
        raise ExperimentConfigError(f"{where}: {experiment.path}'s searcher has no max_length (time_metric + "
                                    "max_time: the script's own fit(max_length) decides the length; change its "
                                    "argument in the entrypoint instead)")
    unit, = current
    if set(length) != {unit}:
        raise ExperimentConfigError(f"{where}.{'/'.join(sorted(length))}: the experiment's length is in {unit} "
                                    f"(searcher.max_length.{unit}); give the new one in {unit}")
    value = length[unit]
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ExperimentConfigError(f"{where}.{unit}={json.dumps(value)}: a length is a positive whole number of "
                                    f"{unit}")
    return hparams, {unit: value}


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
    if missing and experiment.searcher.get("name") == "single":     # Determined's single: one random draw
        sets = {**sets, **single_draw(experiment, missing)}
        missing = []
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


def single_draw(experiment: Experiment, names: list[str]) -> dict[str, Any]:
    """The values a `single` searcher draws for the sampled hyperparameters not set: seeded with the
    experiment's reproducibility.experiment_seed (0 when absent, so every re-run of the trial draws the same)."""
    seed = int((experiment.config.get("reproducibility") or {}).get("experiment_seed") or 0)
    drawn = sample_once(experiment.hyperparameters, names, seed)
    print(f"playground: note: {experiment.path}: searcher single draws "
          + ", ".join(f"{k}={json.dumps(v)}" for k, v in drawn.items())
          + f" (seed {seed}; --set NAME=VALUE chooses)", file=sys.stderr)
    return drawn


def check_trial_sets(path: str, sets: dict[str, Any]) -> None:
    """Raise ExperimentConfigError for what `playground run path --set ...` would refuse in these sets."""
    from playground.determined.experiment_config import load_experiment
    experiment = load_experiment(path)
    hparams, _ = split_length(experiment, sets)
    trial_hparams(experiment, hparams)


def cluster_info(experiment: Experiment, hparams: dict, run_dir: str, test_mode: bool, trial_id: int = 1,
                 rungs: list[int] | None = None, max_length: dict | None = None) -> dict:
    """The fields of det_cluster.json the runner writes (it fills latest_checkpoint at each attempt);
    `max_length` is the trial's own length (split_length), else the searcher's."""
    import os

    from playground.outputs.run_folder import RunFolder
    global_batch_size = hparams.get("global_batch_size")
    return {
        "experiment_config": {**experiment.config, "hyperparameters": experiment.hyperparameters},
        "hparams": hparams, "trial_id": trial_id, "experiment_id": 1, "run_dir": os.path.abspath(run_dir),
        "checkpoint_dir": experiment.checkpoint_dir or RunFolder(os.path.abspath(run_dir)).checkpoints,
        "latest_checkpoint": None, "max_length": max_length or experiment.max_length(), "rungs": list(rungs or []),
        "records_per_epoch": experiment.records_per_epoch,
        "global_batch_size": global_batch_size if isinstance(global_batch_size, int) else None,
        "slots_per_trial": experiment.slots_per_trial, "test_mode": test_mode,
    }
