"""Command line: `playground <command>`; `python AnyExpOnTerm.py ...` is `playground run ...`.

Only argparse is imported here: each command module defines its arguments cheaply and imports what it needs
(torch, matplotlib, ...) inside its `main`, so `--help` answers quickly.
"""
from __future__ import annotations

import argparse
import importlib
import sys
from typing import NoReturn

from playground.commands.dispatch import add_module_map_argument, run_command as _run
# Imported here, not in exit_command: an import there makes objects, which may run the collector over garbage
# before freeze_for_exit has flushed its files (and spoils its young-objects-only collection).
from playground.launch.process_exit import freeze_for_exit
from playground.processes import held_stop
from playground.processes.supervisor import ignore_stop_signals

# name -> (module under playground.commands, one-line help)
COMMANDS = {
    "run": ("run", "train one experiment from an opts blob (same as python AnyExpOnTerm.py)"),
    "submit": ("submit", "submit one run to Slurm: its sbatch script (srun, one task per rank, requeued at the "
                         "time limit), written under the run folder"),
    "schema": ("schema", "print the JSON Schema (or the Markdown reference) of the opts"),
    "components": ("components", "list every registered component with its kind and description"),
    "eval": ("eval", "evaluate a checkpoint or a run's last one: one full test pass, metrics printed and in eval.json"),
    "plot": ("plot", "redraw a run's plots, or overlay several runs, from their metrics.jsonl"),
    "candle": ("candle", "run a CANDLE benchmark script (initialize_parameters, run) as a run, with checkpoints"),
    "predict": ("predict", "write a trained network's outputs for a dataset (the test split by default), in order"),
    "make-lmdb": ("make_lmdb", "build an image LMDB from class folders, a `path label` list, or the digits"),
    "sweep": ("sweep", "run many experiments: a upf file, a grid or a hyperparameter search, each trial a run"),
    "ui": ("ui", "serve a live web page over run folders and sweep folders: charts, logs, trials, comparisons"),
    "convert-caffe2-checkpoint": ("convert_caffe2_checkpoint",
                                  "turn an original Caffe2 Playground .pkl checkpoint into a weights file"),
}


def version() -> str:
    """The installed distribution's version (setup.cfg), without importing the package's heavy modules."""
    from importlib.metadata import PackageNotFoundError, version as installed
    try:
        return installed("playground")
    except PackageNotFoundError:
        return "unknown (not installed)"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="playground", description=__doc__.splitlines()[0])
    parser.add_argument("--version", action="version", version=f"%(prog)s {version()}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name, (module_name, help_text) in COMMANDS.items():
        module = importlib.import_module(f"playground.commands.{module_name}")
        command = sub.add_parser(name, help=help_text, description=module.__doc__.splitlines()[0])
        module.add_arguments(command)
        add_module_map_argument(command)
        command.set_defaults(_module=module)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(sys.argv[1:] if argv is None else argv)
    return _run(args._module, args)


def run_main(argv: list[str] | None = None) -> int:
    """`python AnyExpOnTerm.py ARGS` is `playground run ARGS`."""
    from playground.commands import run
    parser = argparse.ArgumentParser(prog="AnyExpOnTerm.py", description=run.__doc__.splitlines()[0])
    parser.add_argument("--version", action="version", version=f"%(prog)s {version()}")
    run.add_arguments(parser)
    add_module_map_argument(parser)
    return _run(run, parser.parse_args(sys.argv[1:] if argv is None else argv))


def exit_command(code: int) -> NoReturn:
    """End the process of a command that returned `code`, sparing it a second of collection at shutdown
    (playground/launch/process_exit.py). Only for entry points: tests and the API call main() in-process."""
    ignore_stop_signals()   # the command is over: a late SIGTERM (a scheduler's) must not turn its code into 143
    freeze_for_exit()
    sys.exit(code)


def own_process() -> None:
    """This process is a playground command's, from its entry point to its end (not a caller's that runs main()
    in-process): its stop signals are kept while it starts (held_stop.hold), and a run that does not compile may
    skip importing torch's compiler (launch/deferred_dynamo.py)."""
    from playground.launch import deferred_dynamo
    held_stop.hold()
    deferred_dynamo.permit()


def console_main() -> NoReturn:
    """The `playground` console script."""
    own_process()
    exit_command(main())


if __name__ == "__main__":
    exit_command(main())
