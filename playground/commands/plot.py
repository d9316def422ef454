"""Redraw the plots of one run, or overlay several runs for comparison, from their metrics.jsonl.

Uses the `output.plots` of the first run's opts.json (or --ys to plot other metrics). Works on finished runs
and on runs still in progress.
"""
from __future__ import annotations

import argparse
import os
import sys


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("run_dirs", nargs="+", metavar="RUN_DIR", help="run folders (holding opts.json and metrics.jsonl)")
    parser.add_argument("--out", metavar="DIR",
                        help="where the PNG files go (default: the run folder for one run, ./playground-plots for several)")
    parser.add_argument("--ys", nargs="+", metavar="METRIC", help="plot these metrics against epochs instead")


def main(args: argparse.Namespace) -> int:
    from playground.plots import draw_runs, plot_filename
    from playground.run_records import RunRecordsError, read_run

    try:
        runs = [read_run(folder) for folder in args.run_dirs]
    except RunRecordsError as err:
        print(f"playground plot: error: {err}", file=sys.stderr)
        return 2
    specs = [{"x": "", "x_title": "epochs", "ys": args.ys, "y_title": ", ".join(args.ys)}] if args.ys else runs[0].plots
    if not specs:
        print("playground plot: error: the first run's opts have no output.plots; name metrics with --ys",
              file=sys.stderr)
        return 2
    out = args.out or (args.run_dirs[0] if len(runs) == 1 else "playground-plots")
    labels = [os.path.basename(os.path.normpath(folder)) for folder in args.run_dirs]
    for index, spec in enumerate(specs):
        path = draw_runs(spec, list(zip(labels, (r.lists for r in runs))), os.path.join(out, plot_filename(index, spec)))
        print(path)
    return 0
