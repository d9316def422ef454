"""Write a trained network's outputs for a dataset (the run's test split by default) to a file, in dataset order.

CHECKPOINT_OR_RUN_DIR is a run folder (its `last` checkpoint and opts.json) or a checkpoint file (its run's
opts.json, else the opts it holds), found as `playground eval` finds them. --input points the run's input at other data (input.test_input_path; --set changes any other key, such
as distributed.num_cpus for several processes). The outputs go to --output: .npy (a numpy array, one row per
sample) or .pt ({"outputs": tensor}, loadable with torch.load(..., weights_only=True)).
Exit codes: 0 written, 2 unusable arguments or opts, 1 the prediction failed.
"""
from __future__ import annotations

import argparse
import os
import sys


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("source", metavar="CHECKPOINT_OR_RUN_DIR", help="a run folder or a checkpoint file")
    parser.add_argument("--input", metavar="PATH", help="data to predict for (sets input.test_input_path)")
    parser.add_argument("--output", metavar="FILE", default="predictions.npy",
                        help="where the outputs go: .npy (default predictions.npy) or .pt")
    parser.add_argument("--set", metavar="SECTION.KEY=VALUE", action="append", default=[], dest="sets",
                        help="override one key of the run's opts (repeatable)")


def main(args: argparse.Namespace) -> int:
    import shutil
    import tempfile

    from playground.commands.eval import EvalError, base_opts, find_checkpoint
    from playground.options.layers import OptsError, set_path
    from playground.options.user_input.set_items import split_sets
    from playground.launch.jobs import Predict
    from playground.options.registry import ComponentError
    from playground.launch.prepare import prepare
    from playground.processes.exit_codes import EXIT_USAGE

    if not args.output.endswith((".npy", ".pt")):
        print(f"playground predict: error: --output {args.output}: name a .npy or .pt file", file=sys.stderr)
        return EXIT_USAGE
    work_dir = tempfile.mkdtemp(prefix="playground-predict-")   # the rank's log; removed afterwards
    try:
        checkpoint, run_dir = find_checkpoint(args.source)
        opts = base_opts(checkpoint, run_dir)
        sets: dict = {"output": {"ckpt_restart_mode": "off", "tensorboard": False, "profile_num_iters": 0}}
        if args.input:
            set_path(sets, "input.test_input_path", os.path.abspath(args.input))
        for path, value in split_sets(args.sets):
            set_path(sets, path, value)
        prepared = prepare([(args.source, opts), ("--set", sets)], run_dir=work_dir)
    except (EvalError, OptsError, ComponentError) as err:
        print(f"playground predict: error: {err}", file=sys.stderr)
        shutil.rmtree(work_dir, ignore_errors=True)
        return EXIT_USAGE
    from playground.launch.spawn import launch
    try:
        code = launch(prepared, Predict(checkpoint=checkpoint, output=os.path.abspath(args.output)))
    finally:
        shutil.rmtree(work_dir, ignore_errors=True)
    if code == 0:
        print(f"predictions of {checkpoint} written to {args.output}")
    return code
