"""Run a CANDLE benchmark script (initialize_parameters() and run(params)) as a playground run.

Params, lowest precedence first: the script's defaults file (or --defaults-file, which replaces it), then
--parameters-file (a JSON object of params), then --set key=value and CANDLE's `--key value` after SCRIPT;
checked against the script's additional_definitions and required. The script gets them as its command line. The run folder gets opts.json, metrics.jsonl (a record per epoch),
results.json and train.log; checkpoints go to <run-dir>/checkpoints unless ckpt_directory says otherwise.
Exit codes: 0 done, 2 unusable script or params (nothing was run), 1 the run failed, 75 stopped by SIGTERM
after a checkpoint (re-run the same command to resume). docs/candle.md has a complete example.
"""
from __future__ import annotations

import argparse

# A SIGTERM/SIGINT while this command starts is kept for its stop handler (processes/held_stop.py), so a run stopped
# that early still checkpoints and exits 75 instead of dying with 143.
TAKES_STOP_SIGNALS = True


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("script", metavar="SCRIPT", help="the benchmark script (a .py file)")
    _own_options(parser)
    parser.add_argument("script_args", nargs=argparse.REMAINDER, metavar="--KEY VALUE ...",
                        help="after SCRIPT, CANDLE's own form: --epochs 3 --dense 1500 500 (as --set, but "
                             "written as for the script alone); playground's options may come there too")


def _own_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--defaults-file", metavar="FILE",
                        help="a CANDLE defaults file ([Global_Params] key = value) replacing the script's own")
    parser.add_argument("--parameters-file", metavar="FILE",
                        help='params as a JSON object ({"epochs": 3, ...}), or a run folder\'s opts.json')
    parser.add_argument("--set", metavar="KEY=VALUE", action="append", default=[], dest="sets",
                        help="override one param (repeatable); VALUE is a JSON literal, else a Python literal, else "
                             "the text as written")
    parser.add_argument("--run-dir", metavar="DIR",
                        help="the run folder (default runs/<script>-<timestamp>); reuse it to resume a run")
    parser.add_argument("--test", action="store_true",
                        help="one epoch in a temporary folder (unless --run-dir), each checkpoint read back and "
                             "compared with the model, optimizer and random state in memory")


def main(args: argparse.Namespace) -> int:
    from playground.candle.runner import CandleCommand, run_candle
    own = argparse.ArgumentParser(prog="playground candle", add_help=False)
    _own_options(own)
    later, script_args = own.parse_known_args(args.script_args, namespace=argparse.Namespace(sets=[]))
    for name, value in vars(later).items():    # playground's options written after SCRIPT
        if name == "sets":
            args.sets = [*args.sets, *value]
        elif value not in (None, False):
            setattr(args, name, value)
    return run_candle(CandleCommand(script=args.script, defaults_file=args.defaults_file,
                                    parameters_file=args.parameters_file, sets=args.sets, run_dir=args.run_dir,
                                    test=args.test, script_args=script_args))
