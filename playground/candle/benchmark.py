"""`initialize_parameters` for CANDLE scripts: CANDLE's defaults file and definitions, without its library.

A converted script replaces `candle.Benchmark(...)` + `candle.initialize_parameters(...)` with

    params = playground.candle.initialize_parameters("mnist_default_model.txt", file_path,
                                                     additional_definitions, required)

Run by `playground candle`, the command's `--defaults-file` replaces the script's file (as CANDLE's
`--config_file` does) and the command layers `--parameters-file` and `--set` on top and checks everything.
Run standalone (`python script.py`), the file's values are checked here, and a problem exits with code 2.
"""
from __future__ import annotations

import os
import sys

from playground.candle.params import read_defaults_file, resolve_params
from playground.options.layers import OptsError
from playground.processes.exit_codes import EXIT_USAGE

_command_defaults_file: str | None = None       # set by `playground candle --defaults-file`
_under_command = False
called_with: dict = {}                          # definitions given here, for the command to check against


def initialize_parameters(default_model: str, file_path: str | None = None,
                          additional_definitions: list[dict] | None = None,
                          required: list[str] | None = None) -> dict:
    """The params of the defaults file (`default_model`, relative to `file_path`, the script's folder)."""
    path = _command_defaults_file or (default_model if file_path is None or os.path.isabs(default_model)
                                      else os.path.join(file_path, default_model))
    called_with.update(defaults_file=path, additional_definitions=additional_definitions, required=required)
    if _under_command:
        return read_defaults_file(path)       # the command layers and checks
    try:
        params, warnings = resolve_params([(f"defaults file {path}", read_defaults_file(path))],
                                          additional_definitions, required)
    except OptsError as err:
        print(f"playground candle: error: {err}", file=sys.stderr)
        raise SystemExit(EXIT_USAGE) from None
    for line in warnings:
        print(f"playground candle: warning: {line}", file=sys.stderr)
    return params


def set_command_context(defaults_file: str | None) -> None:
    """Called by the runner before the script's initialize_parameters()."""
    global _command_defaults_file, _under_command
    _command_defaults_file, _under_command = defaults_file, True
    called_with.clear()
