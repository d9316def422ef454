"""`playground run EXPERIMENT.yaml`: one trial of a Determined experiment, as Determined's `det e create` with
a single searcher (or `--local --test` with `--test`) would run it.

The entrypoint becomes a command (entrypoint.py) started by the runner (`command_run.run_command`) on
`resources.slots_per_trial` ranks, in the YAML's folder. `--set name=value` gives a hyperparameter (every one a
searcher samples must be given: a search is `playground sweep run EXPERIMENT.yaml`); `--max-restarts` defaults to
the YAML's max_restarts (Determined's 5 when absent); `--test` runs once (no restarts); `--dry-run` prints the
command, the cluster info and the notes and starts nothing.
"""
from __future__ import annotations

import argparse
import json
import os
import shlex
import sys

from playground.determined.experiment_config import Experiment, ExperimentConfigError, is_experiment, \
    load_experiment, read_yaml
from playground.determined.entrypoint import launches_per_slot
from playground.determined.trial_setup import cluster_info, parse_sets, split_length, trial_hparams
from playground.outputs.run_folder_lock import hold_run_folder
from playground.processes.exit_codes import EXIT_DONE, EXIT_FAILED

REFUSED = (("--defaults-file", "defaults_file"), ("--shard-id", "shard_id"), ("--resume", "resume"),
           ("--strict", "strict"), ("--module-map", "module_map"))


def experiment_file(args: argparse.Namespace) -> str | None:
    """The experiment YAML this `playground run` names (positional, or --parameters-file X.yaml with an
    `entrypoint`), or None for an ordinary opts run."""
    if getattr(args, "experiment", None):
        return args.experiment
    path = getattr(args, "parameters_file", None)
    if path and path.endswith((".yaml", ".yml")) and os.path.isfile(path):
        try:
            data, _ = read_yaml(path)
        except ExperimentConfigError:
            return path          # a YAML file that does not parse: load_experiment names the line
        return path if is_experiment(data) else None
    return None


def run_experiment(path: str, args: argparse.Namespace) -> int:
    """Check everything, then run the trial; exit codes as every run's (0, 1, 2, 75)."""
    refused = [flag for flag, name in REFUSED if _given(getattr(args, name, None))]
    if refused:
        raise ExperimentConfigError(f"{', '.join(refused)}: not for a Determined experiment ({path}); its "
                                    "configuration is the YAML (with --set for hyperparameters)")
    experiment = load_experiment(path)
    sets, own_length = split_length(experiment, parse_sets(args.sets))
    hparams = trial_hparams(experiment, sets)
    max_restarts = 0 if args.test else (experiment.max_restarts if args.max_restarts is None else args.max_restarts)
    run_dir = _run_dir(args, experiment)
    command = experiment.command()
    info = cluster_info(experiment, hparams, run_dir, test_mode=bool(args.test), trial_id=sweep_trial_id(run_dir),
                        rungs=parse_rungs(getattr(args, "rungs", None)), max_length=own_length)
    for note in experiment.notes:
        print(f"playground: note: {note}", file=sys.stderr)
    if args.dry_run:
        print(describe(experiment, command, run_dir, max_restarts, info))
        return EXIT_DONE
    hold_run_folder(run_dir)     # one live run per folder; the entrypoint's ranks are this run's (they hold nothing)
    os.environ.update(experiment.environment_variables)
    try:
        from playground.determined.command_run import run_command
    except ImportError as err:
        print(f"playground: error: cannot run {path}: the Determined runner is missing from this installation "
              f"({err})", file=sys.stderr)
        return EXIT_FAILED
    return run_command(command=command, context_dir=experiment.context_dir, run_dir=run_dir, cluster_info=info,
                       per_slot=launches_per_slot(experiment.config["entrypoint"]),
                       slots=experiment.slots_per_trial, max_restarts=max_restarts, test_mode=bool(args.test))


def _given(value: object) -> bool:
    """Whether a flag was given: a store_true flag is True, --shard-id may be 0 (which == False)."""
    return value is not None and value is not False


def describe(experiment: Experiment, command: list[str], run_dir: str, max_restarts: int, info: dict) -> str:
    """What --dry-run prints: the command, where and how it would run, and the cluster info."""
    return "\n".join([
        f"experiment {experiment.name} ({experiment.path}), searcher {experiment.searcher['name']}",
        f"command: {shlex.join(command)}",
        f"context dir (cwd): {experiment.context_dir}",
        f"run dir: {run_dir}",
        f"slots (ranks): {experiment.slots_per_trial}; max restarts: {max_restarts}",
        "started: once per slot (a Trial class or Determined's launch layer)"
        if launches_per_slot(experiment.config["entrypoint"]) or experiment.slots_per_trial == 1 else
        "started: once per node (it starts its own workers, as in a Determined container)",
        _length_line(experiment, info["max_length"]),
        f"hyperparameters: {json.dumps(info['hparams'], sort_keys=True)}",
        *_batch_line(info),
        "cluster info (det_cluster.json):",
        json.dumps(info, indent=2, sort_keys=True),
    ])


def parse_rungs(text: str | None) -> list[int]:
    """`--rungs 4,16,64` (set by a sweep's adaptive ASHA: the lengths, in the searcher's unit, it ranks at)."""
    if not text:
        return []
    try:
        rungs = [int(part) for part in text.split(",")]
    except ValueError:
        rungs = []
    if not rungs or any(r < 1 for r in rungs) or rungs != sorted(rungs):
        raise ExperimentConfigError(f"--rungs {text!r}: expected increasing positive lengths, e.g. 4,16,64")
    return rungs


def sweep_trial_id(run_dir: str) -> int:
    """Determined's trial id: the sweep's trial number + 1 for a sweep's trial (<sweep>/trials/tNNNN), else 1."""
    name, parent = os.path.basename(run_dir), os.path.basename(os.path.dirname(run_dir))
    if parent == "trials" and name[:1] == "t" and name[1:].isdigit():
        return int(name[1:]) + 1
    return 1


def _length_line(experiment: Experiment, length: dict | None) -> str:
    s = experiment.searcher
    if length and length != s.get("max_length"):
        return f"length: {json.dumps(length)} (--set searcher.max_length: this trial's own, the Trial API trains for it)"
    if s.get("max_length"):
        return f"length: {json.dumps(s['max_length'])} (searcher.max_length: the Trial API trains for it)"
    if s.get("max_time"):
        return (f"length: none from the searcher (time_metric {s['time_metric']}, max_time {s['max_time']}: the "
                "script's own fit(max_length) decides, and a sweep ranks trials by that metric)")
    return "length: none from the searcher (the script decides)"


def _batch_line(info: dict) -> list[str]:
    size, slots = info["global_batch_size"], info["slots_per_trial"]
    return [f"global_batch_size {size}: {size // slots} per slot on {slots} slot(s)"] if size else []


def _run_dir(args: argparse.Namespace, experiment: Experiment) -> str:
    if args.run_dir:
        return os.path.abspath(args.run_dir)
    if args.test and not args.dry_run:
        import tempfile
        return tempfile.mkdtemp(prefix="playground-test-")
    from playground.launch.prepare import default_run_dir
    return os.path.abspath(default_run_dir(experiment.name))
