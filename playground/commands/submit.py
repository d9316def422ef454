"""Submit one run to Slurm: validate the opts, write the run's sbatch script, submit it, print the job id.

The arguments are `run`'s; the script (playground/launch/slurm_script.py) runs `playground run` with the same
arguments and --run-dir under srun, one task per rank, and requeues itself after a preemption checkpoint (exit 75).
It is written to <run-dir>/slurm/run-<time>.sbatch; with --dry-run it is printed and nothing is written or
submitted. Exit codes: 0 submitted (or printed), 2 unusable opts or command line, 1 sbatch failed.
"""
from __future__ import annotations

import argparse
import contextlib
import os
import subprocess
import sys
import time

from playground.outputs.run_folder import RunFolder
from playground.processes.exit_codes import EXIT_DONE, EXIT_FAILED, EXIT_USAGE
from playground.processes.supervisor import run_tool

SBATCH_TIMEOUT_S = 120


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from playground.commands import run
    run.add_arguments(parser)
    parser.add_argument("--sbatch-arg", metavar="OPTION", action="append", default=[], dest="sbatch_args",
                        help="an sbatch option as written on its command line (repeatable), e.g. "
                             "--sbatch-arg=--time=04:00:00 --sbatch-arg=--partition=gpu; replaces a default of the "
                             "same option")


def main(args: argparse.Namespace) -> int:
    from playground.options.layers import OptsError
    from playground.options.registry import ComponentError
    from playground.launch.prepare import prepare_run

    if args.experiment:
        print(f"playground: error: {args.experiment}: a Determined experiment is not submitted yet; write an sbatch "
              f"script that runs `playground run {args.experiment}` (docs/determined.md)", file=sys.stderr)
        return EXIT_USAGE
    refused = [flag for flag, given in (("--test", args.test), ("--max-restarts", args.max_restarts),
                                        ("--shard-id", args.shard_id is not None)) if given]
    bad = [arg for arg in args.sbatch_args if not arg.startswith("-")]
    if refused or bad:
        print(f"playground: error: {refused[0]} cannot be submitted: the job requeues itself after a preemption "
              "checkpoint, and srun numbers the ranks" if refused else
              f"playground: error: --sbatch-arg {bad[0]!r}: give sbatch options as they are written on its command "
              "line, e.g. --sbatch-arg=--time=04:00:00", file=sys.stderr)
        return EXIT_USAGE
    try:
        # validated as `run` validates, writing nothing; the run folder is fixed now, so every attempt resumes it
        with _as_inside_a_job():
            prepared = prepare_run(argparse.Namespace(**{**vars(args), "dry_run": True}))
    except (OptsError, ComponentError) as err:
        print(f"playground: error: {err}", file=sys.stderr)
        return EXIT_USAGE
    from playground.commands.run import rerun_words
    from playground.launch.slurm_script import run_script
    topology = prepared.plan.topology
    script = run_script(rerun_words(args, prepared.run_dir, sys.executable), topology, prepared.run_dir,
                        os.path.basename(prepared.run_dir), args.sbatch_args)
    if args.dry_run:
        print(script, end="")
        return EXIT_DONE
    return _submit(script, prepared.run_dir)


@contextlib.contextmanager
def _as_inside_a_job():
    """The opts are checked as the job will see them: Slurm sets SLURM_JOB_ID and SLURM_JOB_NODELIST there (from
    which rendezvous_env finds MASTER_ADDR and MASTER_PORT); stand-ins here, removed afterwards."""
    added = {name: value for name, value in (("SLURM_JOB_ID", "1"), ("SLURM_JOB_NODELIST", "node1"))
             if name not in os.environ}
    os.environ.update(added)
    try:
        yield
    finally:
        for name in added:
            os.environ.pop(name, None)


def _submit(script: str, run_dir: str) -> int:
    import shutil
    sbatch = shutil.which("sbatch")
    if sbatch is None:
        print("playground: error: sbatch is not on PATH: submit from a Slurm login node, or see the script with "
              "--dry-run and submit it yourself", file=sys.stderr)
        return EXIT_FAILED
    folder = RunFolder(run_dir)
    os.makedirs(folder.slurm, exist_ok=True)
    path = folder.sbatch_script(time.strftime('%Y%m%d-%H%M%S'))
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(script)
    try:
        done = run_tool([sbatch, "--parsable", path], SBATCH_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        print(f"playground: error: sbatch did not answer within {SBATCH_TIMEOUT_S} s; the job may or may not have "
              f"been submitted (check `squeue --me`); the script is {path}", file=sys.stderr)
        return EXIT_FAILED
    job_id = done.stdout.strip().split(";")[0]
    if done.returncode != 0 or not job_id:
        reason = (done.stderr.strip() or done.stdout.strip() or "no message").replace("\n", "\n  ")
        print(f"playground: error: sbatch failed (exit code {done.returncode}) on {path}:\n  {reason}",
              file=sys.stderr)
        return EXIT_FAILED
    print(job_id)
    print(f"playground: submitted job {job_id}: script {path}; log {folder}/job-{job_id}.log; run folder {run_dir} "
          f"(`squeue -j {job_id}`)", file=sys.stderr)
    return EXIT_DONE
