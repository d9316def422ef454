"""List every registered component: its name, kind and one-line description; unimportable ones are reported.

Registered means: the project's module_map.py, installed packages' `playground.components` entry points, and
the user's module map (--module-map FILE or PLAYGROUND_MODULE_MAP).
"""
from __future__ import annotations

import argparse

from playground.processes.exit_codes import EXIT_DONE


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--kind", help="only components of this kind (input, model, forward_pass, ...)")


def main(args: argparse.Namespace) -> int:
    import sys

    from playground.options.registry import ComponentError, module_map, resolve
    rows = []
    for name in module_map():
        try:
            component = resolve(name)
        except ComponentError as err:   # one broken entry must not hide the others
            print(f"playground components: warning: {name}: {err}", file=sys.stderr)
            continue
        kinds = component.kinds()
        if args.kind and args.kind not in kinds:
            continue
        rows.append((name, "/".join(kinds), component.description))
    width = max((len(r[0]) for r in rows), default=4)
    kind_width = max((len(r[1]) for r in rows), default=4)
    for name, kind, description in rows:
        print(f"{name:{width}s}  {kind:{kind_width}s}  {description}")
    return EXIT_DONE
