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
    parser.add_argument("--ys", nargs="+", metavar="SERIES",
                        help="plot these series of metrics.jsonl (metrics, lr, samples_per_sec, ...) against epochs instead")


def main(args: argparse.Namespace) -> int:
    from playground.outputs.plots import draw_runs
    from playground.outputs.run_folder import RunFolder
    from playground.outputs.run_records import RunRecordsError, read_run
    from playground.processes.exit_codes import EXIT_DONE, EXIT_USAGE

    try:
        runs = [read_run(folder) for folder in args.run_dirs]
    except RunRecordsError as err:
        print(f"playground plot: error: {err}", file=sys.stderr)
        return EXIT_USAGE
    if args.ys:
        problem = unknown_series(args.ys, runs)
        if problem:
            print(f"playground plot: error: {problem}", file=sys.stderr)
            return EXIT_USAGE
    specs = [{"x": "", "x_title": "epochs", "ys": args.ys, "y_title": ", ".join(args.ys)}] if args.ys else runs[0].plots
    if not specs:
        print("playground plot: error: the first run's opts have no output.plots; name metrics with --ys",
              file=sys.stderr)
        return EXIT_USAGE
    out = args.out or (args.run_dirs[0] if len(runs) == 1 else "playground-plots")
    labels = [os.path.basename(os.path.normpath(folder)) for folder in args.run_dirs]
    for index, spec in enumerate(specs):
        tests = set().union(*(r.test_metrics for r in runs))
        path = draw_runs(spec, list(zip(labels, (r.lists for r in runs))), RunFolder(out).plot(index, spec),
                         tests)
        print(path)
    return EXIT_DONE


def unknown_series(names: list[str], runs: list) -> str | None:
    """A message for the first name that no run has values for, with the closest recorded names; else None."""
    from playground.options.did_you_mean import did_you_mean
    recorded = list(dict.fromkeys(name for run in runs for name in run.series()))
    for name in names:
        if name not in recorded:
            hint = did_you_mean(name, recorded, n=3, cutoff=0.4)
            hint = f"; {hint}" if hint else ""
            return (f"--ys {name}: no values recorded under that name in metrics.jsonl{hint} "
                    f"(recorded series: {', '.join(recorded)})")
    return None
