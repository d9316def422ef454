"""Train one experiment from an opts blob: validate, plan, then run every rank of it.

With --test: one training batch and one validation batch per rank, a checkpoint written, read back and resumed
into a fresh trainer and compared, every metric checked to be produced; in a temporary folder unless --run-dir.

Exit codes: 0 done, 2 unusable opts or command line (nothing was started), 1 the run failed, 75 stopped by
SIGTERM/SIGINT after writing a checkpoint (re-run the same command to resume), or stopped without writing
because a sweep agent adopted the run folder (PLAYGROUND_ATTEMPT n and a claim-<n+1> there; docs/checkpoints.md).
"""
from __future__ import annotations

import argparse
import sys

# A SIGTERM/SIGINT while this command starts is kept for its stop handler (processes/held_stop.py), so a run stopped
# that early still checkpoints and exits 75 instead of dying with 143.
TAKES_STOP_SIGNALS = True


def add_arguments(parser: argparse.ArgumentParser) -> None:
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("experiment", nargs="?", metavar="EXPERIMENT.yaml",
                        help="a Determined experiment configuration (with `entrypoint`); docs/determined.md")
    source.add_argument("--parameters-json", metavar="JSON",
                        help='the opts as JSON text: \'{"opts": {"input": {...}, "model": {...}, ...}}\'')
    source.add_argument("--parameters-file", metavar="FILE", help="the opts as a JSON file of the same form")
    parser.add_argument("--defaults-file", metavar="INI",
                        help="CANDLE-style defaults applied beneath the opts ([Global_Params] with dotted keys)")
    parser.add_argument("--set", metavar="SECTION.KEY=VALUE", action="append", default=[], dest="sets",
                        help="override one key (repeatable); VALUE is a JSON literal, else a Python literal (True, "
                             "None, 'text'), else the text as written; for an EXPERIMENT.yaml, one hyperparameter "
                             "(dotted for a nested group)")
    parser.add_argument("--shard-id", type=int, metavar="N", help="this host's index when num_shards > 1")
    parser.add_argument("--run-dir", metavar="DIR",
                        help="the run folder (default runs/<name>-<timestamp>); reuse it to resume a run")
    parser.add_argument("--strict", action="store_true",
                        help="make every key that no component declares an error (else a warning outside the "
                             "framework's own sections)")
    parser.add_argument("--resume", action="store_true",
                        help="resume the newest run folder under runs/ that has the same resolved opts (with "
                             "--run-dir: that folder); also lets a run resume output.checkpoint_folder's last "
                             "checkpoint where another run, with other opts, wrote it (refused without --resume)")
    parser.add_argument("--max-restarts", type=int, default=None, metavar="N",
                        help="run the same command again (same run folder, resuming its last checkpoint) after up "
                             "to N failed attempts; exit 75 (preempted) is continued for free, exit 2 never, and a "
                             "CUDA out-of-memory line cancels retries. Attempts go to <run-dir>/attempts.jsonl "
                             "(default 0; for an EXPERIMENT.yaml its max_restarts)")
    parser.add_argument("--dry-run", action="store_true",
                        help="validate, resolve every component, print the plan and the resolved opts, and exit "
                             "without creating anything")
    parser.add_argument("--rungs", metavar="N,N,...", help=argparse.SUPPRESS)   # a sweep's ASHA rungs (EXPERIMENT.yaml)
    parser.add_argument("--test", action="store_true",
                        help="test the run in seconds: one training and one validation batch per rank, a checkpoint "
                             "round trip, every metric produced (in a temporary folder unless --run-dir)")


def main(args: argparse.Namespace) -> int:
    from playground.determined.experiment_run import experiment_file, run_experiment
    from playground.processes.exit_codes import EXIT_USAGE
    if args.max_restarts is not None and args.max_restarts < 0:
        print("playground: error: --max-restarts must be 0 or more", file=sys.stderr)
        return EXIT_USAGE
    experiment = experiment_file(args)
    if experiment:   # a Determined experiment: nothing below (opts, trainer) applies
        return run_experiment(experiment, args)
    return _run_opts(args)


def _run_opts(args: argparse.Namespace) -> int:
    from playground.options.layers import OptsError
    from playground.options.registry import ComponentError
    from playground.launch.prepare import prepare_run
    from playground.processes.exit_codes import EXIT_DONE, EXIT_STOPPED, EXIT_USAGE, error_line

    from playground.data.form_check import check_input_forms
    from playground.trainer.trial import trial_for_checks
    from playground.restarts.fence import Fenced

    args.max_restarts = args.max_restarts or 0
    if args.rungs:
        print("playground: error: --rungs is for a Determined experiment (EXPERIMENT.yaml), set by its sweep",
              file=sys.stderr)
        return EXIT_USAGE
    if args.test:
        from playground.launch.one_batch_run import run_test
        return run_test(args)
    try:
        prepared = prepare_run(args)
        check_input_forms(prepared.resolved, trial_for_checks)
    except (OptsError, ComponentError) as err:
        print(error_line(err), file=sys.stderr)
        return EXIT_USAGE
    except Fenced as err:   # started after another agent had adopted the folder: not even opts.json
        from playground.launch.spawn import fenced_line
        print(fenced_line(err), file=sys.stderr)
        return EXIT_STOPPED
    for line in prepared.resolved.warnings:
        print(f"playground: warning: {line}", file=sys.stderr)
    for line in prepared.resolved.notes:
        print(f"playground: note: {line}", file=sys.stderr)
    if args.dry_run:
        import json
        print(prepared.plan.describe())
        print("\nresolved opts:\n" + json.dumps({"opts": prepared.opts}, indent=2))
        return EXIT_DONE
    if args.max_restarts and prepared.plan.topology.given_local_rank is not None:
        print("playground: error: --max-restarts: this rank was started by torchrun or Slurm; use torchrun's own "
              "--max-restarts (or the scheduler's requeue) to retry ranks", file=sys.stderr)
        return EXIT_USAGE
    if args.max_restarts:
        from playground.restarts.policy import RestartPolicy
        from playground.restarts.supervisor import supervise
        code = supervise(rerun_words(args, prepared.run_dir, sys.executable), prepared.run_dir,
                         RestartPolicy(args.max_restarts))
    else:
        from playground.launch.jobs import TRAIN
        from playground.launch.spawn import launch
        code = launch(prepared, TRAIN)
    if code == EXIT_STOPPED and not args.run_dir:
        print(f"playground: the run folder is {prepared.run_dir}; resume it with:\n  {resume_command(args, prepared.run_dir)}",
              file=sys.stderr)
    return code


def resume_command(args: argparse.Namespace, run_dir: str) -> str:
    """The command line that continues the run in `run_dir`: this one, with --run-dir added."""
    import shlex
    return shlex.join(rerun_words(args, run_dir))


def rerun_words(args: argparse.Namespace, run_dir: str, python: str = "python") -> list[str]:
    """This command as words, with --run-dir `run_dir` (not --max-restarts; --resume kept, as the permission to
    resume another run's checkpoints): each attempt of `--max-restarts` runs it, and a stopped run is resumed by
    it."""
    import os
    if os.path.basename(sys.argv[0]) == "AnyExpOnTerm.py":
        entry = [python, sys.argv[0]]
    else:
        entry = [python, "-m", "playground", "run"] if python != "python" else ["playground", "run"]
    words = entry + (["--parameters-file", args.parameters_file] if args.parameters_file
                     else ["--parameters-json", args.parameters_json])
    if args.defaults_file:
        words += ["--defaults-file", args.defaults_file]
    for item in args.sets:
        words += ["--set", item]
    if args.shard_id is not None:
        words += ["--shard-id", str(args.shard_id)]
    if getattr(args, "strict", False):
        words.append("--strict")
    if getattr(args, "resume", False):
        words.append("--resume")
    if getattr(args, "module_map", None):
        words += ["--module-map", args.module_map]
    return words + ["--run-dir", run_dir]
