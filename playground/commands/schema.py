"""Print the JSON Schema of the opts (for editors and validators), or the Markdown of docs/opts.md."""
from __future__ import annotations

import argparse
import json

from playground.processes.exit_codes import EXIT_DONE


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--format", choices=("json", "markdown"), default="json",
                        help="json: a JSON Schema (draft 2020-12); markdown: the opts reference")


def main(args: argparse.Namespace) -> int:
    from playground.options import schema
    if args.format == "markdown":
        print(schema.markdown(), end="")
    else:
        print(json.dumps(schema.json_schema(), indent=2))
    return EXIT_DONE
