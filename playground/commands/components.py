"""List every registered component: its name, kind and one-line description (from module_map.py)."""
from __future__ import annotations

import argparse


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--kind", help="only components of this kind (input, model, forward_pass, ...)")


def main(args: argparse.Namespace) -> int:
    from playground.registry import module_map, resolve
    rows = []
    for name in module_map():
        component = resolve(name)
        kinds = component.kinds()
        if args.kind and args.kind not in kinds:
            continue
        rows.append((name, "/".join(kinds), component.description))
    width = max((len(r[0]) for r in rows), default=4)
    kind_width = max((len(r[1]) for r in rows), default=4)
    for name, kind, description in rows:
        print(f"{name:{width}s}  {kind:{kind_width}s}  {description}")
    return 0
