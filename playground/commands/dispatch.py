"""Runs one `playground` command module (`add_arguments(parser)`, `main(args) -> int`) as the command line does:
the user's module map chosen first, a UserError that reaches here printed as one line with EXIT_USAGE, never
a traceback, and the run folders the command held released when it returns. cli.py runs every command through it; a command that runs others (the demo runs make-lmdb, then
run) uses it too, from this floor, so nothing here reaches up to the entry point.
"""
from __future__ import annotations

import argparse
import sys
from types import ModuleType

from playground.processes import held_stop


def add_module_map_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--module-map", metavar="FILE",
                        help="your own module map (a Python file with MODULE_MAP = {name: dotted module path}); "
                             "also PLAYGROUND_MODULE_MAP, or a module_map.py beside --parameters-file")


def command_parser(module: ModuleType, prog: str) -> argparse.ArgumentParser:
    """The argument parser of one command module, as `playground <command>` has it."""
    parser = argparse.ArgumentParser(prog=prog, description=module.__doc__.splitlines()[0])
    module.add_arguments(parser)
    add_module_map_argument(parser)
    return parser


def run_command(module: ModuleType, args: argparse.Namespace) -> int:
    """The command's exit code; a user error that reaches here is one line and EXIT_USAGE, never a traceback."""
    from playground.processes.exit_codes import EXIT_DONE, EXIT_USAGE, UserError, error_line
    if not getattr(module, "TAKES_STOP_SIGNALS", False):
        held_stop.release()   # a stop kept while it started ends a command with no handler of its own, as before
    try:
        if args.module_map:
            from playground.options.registry import use_module_map
            use_module_map(args.module_map)
        return int(module.main(args) or EXIT_DONE)
    except UserError as err:
        print(error_line(err), file=sys.stderr)
        return EXIT_USAGE
    finally:
        from playground.outputs.run_folder_lock import release_run_folders
        release_run_folders()     # the run folders the command held (a process's end releases them anyway)
