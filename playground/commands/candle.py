"""Run a CANDLE benchmark script (initialize_parameters() and run(params)) as a playground run.

Params, lowest precedence first: the script's defaults file (or --defaults-file, which replaces it), then
--parameters-file (a JSON object of params), then --set key=value; checked against the script's
additional_definitions and required. The run folder gets opts.json, metrics.jsonl (a record per epoch),
results.json and train.log; checkpoints go to <run-dir>/checkpoints unless ckpt_directory says otherwise.
Exit codes: 0 done, 2 unusable script or params (nothing was run), 1 the run failed, 75 stopped by SIGTERM
after a checkpoint (re-run the same command to resume). docs/candle.md has a complete example.
"""
from __future__ import annotations

import argparse


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("script", metavar="SCRIPT", help="the benchmark script (a .py file)")
    parser.add_argument("--defaults-file", metavar="FILE",
                        help="a CANDLE defaults file ([Global_Params] key = value) replacing the script's own")
    parser.add_argument("--parameters-file", metavar="FILE",
                        help='params as a JSON object ({"epochs": 3, ...}), or a run folder\'s opts.json')
    parser.add_argument("--set", metavar="KEY=VALUE", action="append", default=[], dest="sets",
                        help="override one param (repeatable); VALUE is a JSON literal, else a string")
    parser.add_argument("--run-dir", metavar="DIR",
                        help="the run folder (default runs/<script>-<timestamp>); reuse it to resume a run")
    parser.add_argument("--test", action="store_true",
                        help="one epoch in a temporary folder (unless --run-dir), each checkpoint read back and "
                             "compared with the model, optimizer and random state in memory")


def main(args: argparse.Namespace) -> int:
    from playground.candle.runner import CandleCommand, run_candle
    return run_candle(CandleCommand(script=args.script, defaults_file=args.defaults_file,
                                    parameters_file=args.parameters_file, sets=args.sets, run_dir=args.run_dir,
                                    test=args.test))
