"""Starts one trial as a process of the ordinary run command, with the slot's devices and threads: forked from
the agent's trial server, an interpreter that has imported torch and the run command once
(processes/command_servers.py; a trial starts in a fraction of a second instead of about 3 s), or, for a
`trial_program`, when the server cannot serve, or with PLAYGROUND_TRIAL_SERVER=0, in a fresh interpreter.

The command comes from here only: `python -m playground run --parameters-file BASE [--defaults-file INI]`, or
`python -m playground candle SCRIPT` for a spec with `script:`, `python -m playground run EXPERIMENT.yaml` for a
Determined experiment, or the spec's `trial_program` (any command that
takes playground run's arguments), then `--set key=value` per parameter (and a relative
output.checkpoint_folder made the trial's own: inputs/checkpoint_folder.py) and `--run-dir`. On CPU each slot gets
the allocation's cores (affinity mask, SLURM_CPUS_PER_TASK) // workers threads (OMP_NUM_THREADS, NUM_INTRA_THREADS); with GPUs, a disjoint CUDA_VISIBLE_DEVICES. A
trial dies with its sweep (SIGTERM: it checkpoints and exits 75).
"""
from __future__ import annotations

import glob
import json
import os
import subprocess
import sys
from typing import Any, Callable

from playground.processes.command_servers import CommandServers, Started
from playground.processes.cpu_allocation import allocated_cpus
from playground.processes.supervisor import start_child
from playground.sweeps.inputs.checkpoint_folder import trial_sets
from playground.sweeps.inputs.spec import SweepSpec

TRIAL_SERVER_ENV = "PLAYGROUND_TRIAL_SERVER"   # "0": every trial in a fresh interpreter


def trial_command(spec: SweepSpec, sets: dict[str, Any], run_dir: str, rungs: list[int] | None = None) -> list[str]:
    """`rungs`: adaptive ASHA's lengths for this trial, passed to a Determined experiment's trial (Core API
    searcher operations end at them; the Trial API validates at them)."""
    if spec.experiment:   # the sweep retries failed trials itself (max_restarts), so the run does not
        command = [*(spec.trial_program or [sys.executable, "-m", "playground", "run"]), spec.experiment,
                   "--max-restarts", "0"]
        if rungs:
            command += ["--rungs", ",".join(str(r) for r in rungs)]
    elif spec.trial_program:
        command = [*spec.trial_program, "--parameters-file", spec.base]
    elif spec.script:
        command = [sys.executable, "-m", "playground", "candle", spec.script]
    else:
        command = [sys.executable, "-m", "playground", "run", "--parameters-file", spec.base]
    if spec.defaults_file:
        command += ["--defaults-file", spec.defaults_file]
    for key, value in {**sets, **trial_sets(spec, sets, run_dir)}.items():   # a relative checkpoint_folder: its own
        command += ["--set", f"{key}={json.dumps(value)}"]
    return command + ["--run-dir", run_dir]


def visible_gpus() -> list[str]:
    """The GPUs this process may use, found without importing torch."""
    given = os.environ.get("CUDA_VISIBLE_DEVICES")
    if given is not None:
        return [g for g in given.split(",") if g.strip() and g.strip() != "-1"]
    return sorted((p.removeprefix("/dev/nvidia") for p in glob.glob("/dev/nvidia[0-9]*")), key=int)


def slot_env(slot: int, workers: int, gpus: list[str] | None = None) -> dict[str, str]:
    """The environment of a trial run by `slot` of `workers`: its share of the GPUs or of the cores."""
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    gpus = visible_gpus() if gpus is None else gpus
    if gpus:
        share = max(len(gpus) // workers, 1)
        mine = gpus[slot * share:(slot + 1) * share] or [gpus[slot % len(gpus)]]
        env["CUDA_VISIBLE_DEVICES"] = ",".join(mine)
    threads = max(allocated_cpus() // workers, 1)    # the job's cores (affinity, SLURM_CPUS_PER_TASK)
    env["OMP_NUM_THREADS"] = env["NUM_INTRA_THREADS"] = str(threads)
    return env


# What a `playground run` imports before its first step (and its plots, matplotlib's Figure), imported once by a
# trial server; and every module of the packages (the command line imports every command; a run, every built-in
# hook). Names only: the servers import them, this layer never does.
TRIAL_PRELOAD = {
    "modules": ["torch", "matplotlib.figure", "playground.cli", "playground.api", "playground.launch.prepare",
                "playground.launch.spawn", "playground.launch.worker", "playground.trainer.lr_schedule",
                "playground.trainer.trial", "playground.outputs.run_summary", "playground.data.form_check",
                "playground.determined.experiment_run"],
    "packages": ["playground.commands", "playground.trainer.hooks"],
}


def trial_servers(note: Callable[[str], None]) -> CommandServers | None:
    """An agent's trial servers (started on first use), or None: PLAYGROUND_TRIAL_SERVER=0."""
    return None if os.environ.get(TRIAL_SERVER_ENV, "").strip() == "0" else CommandServers(note, TRIAL_PRELOAD)


def start_trial(command: list[str], env: dict[str, str], log_path: str,
                servers: CommandServers | None = None) -> Started:
    """The trial's process, its output (stdout and stderr) appended to `log_path`."""
    with open(log_path, "ab") as log:
        if servers is None:
            return start_child(command, env=env, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        return servers.start(command, env=env, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
