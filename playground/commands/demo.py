"""`make demo`: train a small ResNet on real images (scikit-learn's handwritten digits) on the CPU, end to end.

Builds demo-data/digits/train and demo-data/digits/test (1,797 8x8 digits, a fixed 80/20 split) through the
make-lmdb code path when they are missing, trains experiments/digits_resnet.json (gfs_IN1k input at 16 pixels,
explicit_resnet_forward: ResNet-18 with the small stem and width 16; output.ckpt_keep_limit 2 keeps 'last' and
'best', not all 15 epochs' checkpoints) with progress, and ends with where the plots, metrics and checkpoints
are and the final test top-1. Other arguments go to the run, e.g.
`python -m playground.commands.demo --set epoch_iter.num_epochs=3`.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time

from playground.outputs.run_folder import RunFolder

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXPERIMENT = os.path.join(REPO, "experiments", "digits_resnet.json")
TEST_FRACTION, SPLIT_SEED = 0.2, 0
TARGET_TOP1 = 0.97


def main(argv: list[str] | None = None) -> int:
    from playground.commands import make_lmdb, run
    from playground.commands.dispatch import command_parser, run_command
    from playground.launch.prepare import default_run_dir
    from playground.processes.exit_codes import EXIT_DONE

    parser = argparse.ArgumentParser(prog="python -m playground.commands.demo", description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=os.path.join(REPO, "demo-data", "digits"), metavar="DIR",
                        help="where the digits LMDBs are (built there when missing; default demo-data/digits)")
    parser.add_argument("--run-dir", metavar="DIR", help="the run folder (default runs/digits_resnet-<time>)")
    args, run_args = parser.parse_known_args(sys.argv[1:] if argv is None else argv)
    train, test = os.path.join(args.data, "train"), os.path.join(args.data, "test")
    if not (os.path.isdir(train) and os.path.isdir(test)):
        print(f"building the digits LMDBs in {args.data} (scikit-learn's handwritten digits, "
              f"{TEST_FRACTION:.0%} held out for testing)")
        build = ["--digits", args.data, "--test-fraction", str(TEST_FRACTION), "--seed", str(SPLIT_SEED)]
        build += ["--overwrite"] if os.path.exists(args.data) else []
        code = run_command(make_lmdb, command_parser(make_lmdb, "playground make-lmdb").parse_args(build))
        if code != EXIT_DONE:
            return code
    run_dir = os.path.abspath(args.run_dir or os.path.join(REPO, default_run_dir("digits_resnet")))
    print(f"training a ResNet-18 (small stem) on the digits on the CPU; run folder {run_dir}")
    started = time.time()
    words = ["--parameters-file", EXPERIMENT, "--run-dir", run_dir, "--set", f"input.train_input_path={train}",
             "--set", f"input.test_input_path={test}", *run_args]
    code = run_command(run, command_parser(run, "playground run").parse_args(words))
    if code == EXIT_DONE:
        _report(run_dir, time.time() - started)
    return code


def _report(run_dir: str, seconds: float) -> None:
    with open(RunFolder(run_dir).results, encoding="utf-8") as handle:
        metrics = json.load(handle)["metrics"]
    final = next((v for v in reversed(metrics.get("test_accuracy_top1", [])) if v is not None), None)
    verdict = "" if final is None else (" (target 0.97 reached)" if final >= TARGET_TOP1 else " (below the 0.97 target)")
    print(f"\ndigits demo done in {seconds:.0f} s: final test top-1 {final if final is None else f'{final:.4f}'}"
          f"{verdict}")
    print(f"  plots and metrics: {run_dir} (plot*.png, metrics.jsonl, results.json, train.log)")
    print(f"  checkpoints:       {RunFolder(run_dir).checkpoints} ('best' and 'last' point at files there)")
    print(f"  next: playground plot {run_dir}   |   docs/resnet.md for the network's options")


if __name__ == "__main__":
    sys.exit(main())
