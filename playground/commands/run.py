"""Train one experiment from an opts blob: validate, plan, then run every rank of it.

With --test: one training batch and one validation batch per rank, a checkpoint written, read back and resumed
into a fresh trainer and compared, every metric checked to be produced; in a temporary folder unless --run-dir.

Exit codes: 0 done, 2 unusable opts or command line (nothing was started), 1 the run failed, 75 stopped by
SIGTERM/SIGINT after writing a checkpoint (re-run the same command to resume).
"""
from __future__ import annotations

import argparse
import sys


def add_arguments(parser: argparse.ArgumentParser) -> None:
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--parameters-json", metavar="JSON",
                        help='the opts as JSON text: \'{"opts": {"input": {...}, "model": {...}, ...}}\'')
    source.add_argument("--parameters-file", metavar="FILE", help="the opts as a JSON file of the same form")
    parser.add_argument("--defaults-file", metavar="INI",
                        help="CANDLE-style defaults applied beneath the opts ([Global_Params] with dotted keys)")
    parser.add_argument("--set", metavar="SECTION.KEY=VALUE", action="append", default=[], dest="sets",
                        help="override one key (repeatable); VALUE is a JSON literal, else a string")
    parser.add_argument("--shard-id", type=int, metavar="N", help="this host's index when num_shards > 1")
    parser.add_argument("--run-dir", metavar="DIR",
                        help="the run folder (default runs/<name>-<timestamp>); reuse it to resume a run")
    parser.add_argument("--strict", action="store_true",
                        help="make every key that no component declares an error (else a warning outside the "
                             "framework's own sections)")
    parser.add_argument("--resume", action="store_true",
                        help="resume the newest run folder under runs/ that has the same resolved opts")
    parser.add_argument("--dry-run", action="store_true",
                        help="validate, resolve every component, print the plan and the resolved opts, and exit "
                             "without creating anything")
    parser.add_argument("--test", action="store_true",
                        help="test the run in seconds: one training and one validation batch per rank, a checkpoint "
                             "round trip, every metric produced (in a temporary folder unless --run-dir)")


def main(args: argparse.Namespace) -> int:
    from playground.options.layers import OptsError
    from playground.options.registry import ComponentError
    from playground.launch.prepare import prepare_run

    from playground.data.form_check import check_input_forms

    if args.test:
        from playground.launch.one_batch_run import run_test
        return run_test(args)
    try:
        prepared = prepare_run(args)
        check_input_forms(prepared.resolved)
    except (OptsError, ComponentError) as err:
        print(f"playground: error: {err}", file=sys.stderr)
        return 2
    for line in prepared.resolved.warnings:
        print(f"playground: warning: {line}", file=sys.stderr)
    for line in prepared.resolved.notes:
        print(f"playground: note: {line}", file=sys.stderr)
    if args.dry_run:
        import json
        print(prepared.plan.describe())
        print("\nresolved opts:\n" + json.dumps({"opts": prepared.opts}, indent=2))
        return 0
    from playground.launch.spawn import launch
    from playground.checkpoints.preemption import EXIT_PREEMPTED
    code = launch(prepared)
    if code == EXIT_PREEMPTED and not args.run_dir:
        print(f"playground: the run folder is {prepared.run_dir}; resume it with:\n  {resume_command(args, prepared.run_dir)}",
              file=sys.stderr)
    return code


def resume_command(args: argparse.Namespace, run_dir: str) -> str:
    """The command line that continues the run in `run_dir`: this one, with --run-dir added."""
    import os
    import shlex
    entry = ["python", sys.argv[0]] if os.path.basename(sys.argv[0]) == "AnyExpOnTerm.py" else ["playground", "run"]
    words = entry + (["--parameters-file", args.parameters_file] if args.parameters_file
                     else ["--parameters-json", args.parameters_json])
    if args.defaults_file:
        words += ["--defaults-file", args.defaults_file]
    for item in args.sets:
        words += ["--set", item]
    if args.shard_id is not None:
        words += ["--shard-id", str(args.shard_id)]
    return shlex.join(words + ["--run-dir", run_dir])
