"""What a CANDLE script sees of the process while `playground candle` runs it, and nothing after.

- `sys.argv` is the script's own command line, `[script, --key, value, ...]`: the run's folders first, then
  every `--set` (a list gives one token per item, as CANDLE's `--dense 1500 500`), so candle_lib's
  `finalize_parameters` (or any argv parser) reads the same params the command checked.
- The run's folders in CANDLE's keys: `output_dir` (`<run-dir>/output`; candle_lib appends
  `<experiment_id>/<run_id>`), `experiment_id` (the run folder's parent's name), `run_id` (the run folder's
  name) and `ckpt_directory` (`<run-dir>/checkpoints`), unless `--set` names them; and `CANDLE_DATA_DIR`
  (`<run-dir>/data`) when the environment does not set it. So no two runs, and no two trials, share an output
  or a checkpoint folder, and a run resumes only its own checkpoints.
- `import candle` gives candle_lib when it is installed, else playground's implementation of its API
  (playground/compat/candle): that folder is put first on sys.path for this script only.
"""
from __future__ import annotations

import contextlib
import importlib.machinery
import os
import sys
from typing import Any, Iterator

from playground.candle.list_values import split_candle_list

# playground/compat/candle/on_path holds the one-line module `candle`; found by path, so the core never imports
# the compatibility layer.
COMPAT_PATH = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "compat", "candle",
                           "on_path")


def run_keys(run_dir: str) -> dict[str, str]:
    """CANDLE's folder keys for the run folder `run_dir`."""
    run_dir = os.path.abspath(run_dir)
    return {"output_dir": os.path.join(run_dir, "output"),
            "experiment_id": os.path.basename(os.path.dirname(run_dir)) or "EXP000",
            "run_id": os.path.basename(run_dir), "ckpt_directory": os.path.join(run_dir, "checkpoints")}


def script_argv(script: str, sets: dict[str, Any], run_dir: str, config_file: str | None = None) -> list[str]:
    """`[script, --key, token, ...]`: the run's folder keys (unless set), --config_file, then the sets."""
    given = {**{k: v for k, v in run_keys(run_dir).items() if k not in sets},
             **({"config_file": os.path.abspath(config_file)} if config_file else {}), **sets}
    argv = [script]
    for key, value in given.items():
        if value is not None:              # None: leave the key to the script's defaults
            argv += [f"--{key}", *tokens(value)]
    return argv


def tokens(value: Any) -> list[str]:
    """A param value as command-line tokens, as CANDLE writes them: a list (or CANDLE's "1500 500") one token
    per item, a bool True/False, anything else its str()."""
    split = split_candle_list(value) if isinstance(value, str) else None
    if split is not None:
        value = split
    if isinstance(value, (list, tuple)):
        return [str(item) for item in value]
    return [str(value)]


def candle_lib_installed() -> bool:
    """Whether `import candle` finds a candle package other than playground's (sys.modules aside, where an
    earlier script of this process may have left playground's)."""
    path = [p for p in sys.path if os.path.abspath(p or ".") != COMPAT_PATH]
    return importlib.machinery.PathFinder.find_spec("candle", path) is not None


@contextlib.contextmanager
def script_process(argv: list[str], run_dir: str) -> Iterator[None]:
    """sys.argv, CANDLE_DATA_DIR and the `candle` module as the module doc says, restored on leaving."""
    saved_argv = sys.argv
    data_dir_unset = "CANDLE_DATA_DIR" not in os.environ
    sys.argv = list(argv)
    if data_dir_unset:
        os.environ["CANDLE_DATA_DIR"] = os.path.join(os.path.abspath(run_dir), "data")
    if not candle_lib_installed():
        sys.path.insert(0, COMPAT_PATH)
    try:
        yield
    finally:
        sys.argv = saved_argv
        while COMPAT_PATH in sys.path:
            sys.path.remove(COMPAT_PATH)
        if data_dir_unset:
            os.environ.pop("CANDLE_DATA_DIR", None)
