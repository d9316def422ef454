"""The sbatch script of one run (`playground submit`): one task per rank, started by srun, requeued at the limit.

The job asks for `num_shards` nodes and `num_gpus` (or `num_cpus`) tasks on each; srun starts them and each task
is the rank SLURM_PROCID on the device of its SLURM_LOCALID (playground/distribution/topology.py), meeting the
others as the opts' rendezvous says (rendezvous_env finds the first node and a port of the job by itself).
`--signal=TERM@<warning>` reaches the job step, so every rank gets SIGTERM before the time limit, writes the
preemption checkpoint and exits 75; the script then requeues the job, which resumes in the same run folder.
`--sbatch-arg` options come after the defaults and replace a default of the same option.
"""
from __future__ import annotations

import os
import shlex

from playground.outputs.run_folder import RunFolder

STOP_WARNING_S = 120   # SIGTERM this long before the time limit: time enough for the preemption checkpoint


def run_script(words: list[str], topology, run_dir: str, name: str, sbatch_args: list[str] = (),
               workdir: str | None = None, warning_s: int = STOP_WARNING_S) -> str:
    """The script that runs `words` (a `playground run` command line with --run-dir) as a job of the layout of
    `topology` (distribution/topology.py); its log goes to <run_dir>/slurm/job-<id>.log, appended on requeue."""
    per_node = topology.devices_per_host
    defaults = [f"--job-name={name}", f"--nodes={topology.num_shards}", f"--ntasks-per-node={per_node}",
                *([f"--gpus-per-node={per_node}"] if topology.device_type == "cuda" else []),
                f"--output={RunFolder(run_dir).slurm_job_log}", "--open-mode=append",
                f"--chdir={workdir or os.getcwd()}", f"--signal=TERM@{warning_s}", "--requeue"]
    given = {_option(arg) for arg in sbatch_args}
    directives = [arg for arg in defaults if _option(arg) not in given] + list(sbatch_args)
    ranks = topology.num_shards * per_node
    return "\n".join([
        "#!/bin/bash",
        f"# One run into {run_dir}: {topology.num_shards} node(s) x {per_node} task(s), one task per rank ({ranks}).",
        "# Written by `playground submit` (docs/distributed.md, Slurm). At the time limit every rank writes a",
        "# checkpoint and exits 75; the job then requeues itself and resumes the run folder.",
        *(f"#SBATCH {shlex.quote(arg)}" for arg in directives),
        "",
        "export PYTHONUNBUFFERED=1",
        # srun: --signal=TERM@N reaches job steps only; python started by this shell would die with it
        f"srun {shlex.join(words)}",
        "code=$?",
        'if [ "$code" -eq 75 ]; then scontrol requeue "$SLURM_JOB_ID"; fi',
        'exit "$code"',
        ""])


def _option(arg: str) -> str:
    return arg.split("=", 1)[0]
