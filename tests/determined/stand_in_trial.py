"""A stand-in for `playground run EXPERIMENT.yaml` in sweep tests while det-core's runner is not in this branch:
takes the same arguments (EXPERIMENT, --max-restarts, --set NAME=VALUE, --run-dir), checks them with the real
experiment loader and trial_setup, then "trains" in ~10 ms a batch (the hyperparameter stand_in_seconds, when
given): one validation record per batch in metrics.jsonl (iteration = batches, samples, epochs), a closed-form
loss of the hyperparameters, a checkpoint and exit 75 on SIGTERM, a checkpoint and results.json at the end.
The searcher's length (max_length, or time_metric + max_time) sets how many batches it trains, as Determined's
harness (or a 0.38 script's matching fit(max_length)) does.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import signal
import sys
import time

from playground.determined.experiment_config import ExperimentConfigError, load_experiment
from playground.determined.searcher_config import searcher_length
from playground.determined.trial_setup import cluster_info, parse_sets, split_length, trial_hparams

stop = False


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("experiment")
    parser.add_argument("--max-restarts", type=int)
    parser.add_argument("--set", action="append", default=[], dest="sets")
    parser.add_argument("--run-dir", required=True)
    parser.add_argument("--test", action="store_true")
    parser.add_argument("--rungs")     # Determined's --local --test: two batches here
    args = parser.parse_args()
    try:
        experiment = load_experiment(args.experiment)
        sets, own_length = split_length(experiment, parse_sets(args.sets))
        hparams = trial_hparams(experiment, sets)
    except ExperimentConfigError as err:
        print(f"stand-in: error: {err}", file=sys.stderr)
        return 2
    signal.signal(signal.SIGTERM, _stop)
    os.makedirs(args.run_dir, exist_ok=True)
    rungs = [int(r) for r in args.rungs.split(",")] if args.rungs else []
    info = cluster_info(experiment, hparams, args.run_dir, test_mode=False, rungs=rungs)
    with open(os.path.join(args.run_dir, "opts.json"), "w", encoding="utf-8") as handle:
        json.dump({"opts": info["experiment_config"], "hparams": hparams, "rungs": info["rungs"], "determined": True},
                  handle)
    batch = hparams.get("global_batch_size", 1)
    per_epoch = experiment.records_per_epoch or batch
    # a 0.38 script's fit(max_length) "should match the searcher config values" (Determined's Trainer docs)
    unit, length = next(iter(own_length.items())) if own_length else searcher_length(experiment.searcher) or \
        ("batches", 3)
    batches = {"batches": length, "records": math.ceil(length / batch), "epochs": length * per_epoch // batch}[unit]
    batches = 2 if args.test else batches
    metric = experiment.searcher["metric"]
    lr = float(hparams.get("lr", 0.1))
    metrics = os.path.join(args.run_dir, "metrics.jsonl")
    for step in range(1, batches + 1):
        time.sleep(float(hparams.get("stand_in_seconds", 0.01)))
        record = {"index": step - 1, "kind": "epoch", "iteration": step, "samples": step * batch,
                  "epochs": step * batch / per_epoch, "wall_time": time.time(),
                  metric: (math.log10(lr) + 1.0) ** 2 + 2.0 / step}
        with open(metrics, "a", encoding="utf-8") as handle:
            handle.write(json.dumps(record) + "\n")
        if stop and step < batches:
            _checkpoint(args.run_dir, step)
            return 75
    _checkpoint(args.run_dir, batches)
    with open(os.path.join(args.run_dir, "results.json"), "w", encoding="utf-8") as handle:
        json.dump({"batches": batches}, handle)
    return 0


def _checkpoint(run_dir: str, step: int) -> None:
    """checkpoint.json and the `last` pointer of playground's checkpoint folder (what `sweep continue` follows)."""
    with open(os.path.join(run_dir, "checkpoint.json"), "w", encoding="utf-8") as handle:
        json.dump({"batches_done": step}, handle)
    pointer = os.path.join(run_dir, "checkpoints", "last")
    if not os.path.islink(pointer):
        os.makedirs(os.path.dirname(pointer), exist_ok=True)
        os.symlink(os.path.join("..", "checkpoint.json"), pointer)


def _stop(signum, frame) -> None:
    global stop
    stop = True


if __name__ == "__main__":
    sys.exit(main())
