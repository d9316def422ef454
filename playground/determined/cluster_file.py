"""What a process started for a Determined experiment learns about its trial: `det_cluster.json` in the run
folder, named by the environment variable PLAYGROUND_DETERMINED (the role Determined's master plays).

Written by the runner before it starts the entrypoint's processes (one file per attempt, rewritten on each
restart so `latest_checkpoint` is current); read by `det.get_cluster_info()`, `det.core.init()` and
`det.pytorch.init()` in playground's `determined` package. Ranks learn their place from torchrun's variables
(RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT), set by the runner.

Fields (all present; null where unknown):
- `experiment_config`: the experiment configuration as loaded, defaults filled (dict)
- `hparams`: this trial's hyperparameters, nested groups as dicts, constants included (dict)
- `trial_id`, `experiment_id`: ints (1 and 1 for a single run; the sweep's trial number + 1 in a sweep)
- `run_dir`: the playground run folder (opts.json, metrics.jsonl, train.log, checkpoints/)
- `checkpoint_dir`: where Core API checkpoints live, one folder per storage id (checkpoint_storage's
  host_path/storage_path when given, else <run_dir>/checkpoints)
- `latest_checkpoint`: storage id of the newest complete checkpoint there when this attempt started, or null
- `max_length`: `{"batches"|"records"|"epochs": n}`, the searcher's length for this trial (adaptive ASHA: its
  top rung), or null when the searcher gives none (a Trainer API script then uses its own fit(max_length))
- `rungs`: the lengths, in max_length's unit, at which the sweep ranks this trial (adaptive ASHA), else [];
  the Trial API validates at them (trials/fit.py rung_batches)
- `records_per_epoch`: int or null; `global_batch_size`: int or null; `slots_per_trial`: int
- `test_mode`: true under `--test` (Determined's `--local --test`: a few batches, one validation, checkpoint)
"""
from __future__ import annotations

import json
import os
from typing import Any

from playground.outputs.atomic_files import write_json
from playground.outputs.run_folder import RunFolder

CLUSTER_ENV = "PLAYGROUND_DETERMINED"
FIELDS = ("experiment_config", "hparams", "trial_id", "experiment_id", "run_dir", "checkpoint_dir",
          "latest_checkpoint", "max_length", "rungs", "records_per_epoch", "global_batch_size", "slots_per_trial",
          "test_mode")


def write_cluster_file(run_dir: str, info: dict[str, Any]) -> str:
    """Writes det_cluster.json into run_dir (every field of FIELDS, missing ones null) and returns its path."""
    missing_rungs = {"rungs": []}
    record = {name: info.get(name, missing_rungs.get(name)) for name in FIELDS}
    path = RunFolder(run_dir).det_cluster
    write_json(path, record)
    return path


def trial_seed(experiment_config: dict[str, Any] | None, trial_id: int) -> int:
    """The trial's random seed: reproducibility.experiment_seed (0 when absent) + the trial id, below 2**31. The
    one seed of ClusterInfo.trial.trial_seed and PyTorchTrialContext.get_trial_seed(), as Determined's harness
    gives the context the cluster info's seed."""
    seed = int(((experiment_config or {}).get("reproducibility") or {}).get("experiment_seed") or 0)
    return (seed + trial_id) % 2**31


def read_cluster_file() -> dict[str, Any] | None:
    """This process's trial, or None when it was not started for a Determined experiment."""
    path = os.environ.get(CLUSTER_ENV)
    if not path:
        return None
    with open(path, encoding="utf-8") as handle:
        return json.load(handle)
