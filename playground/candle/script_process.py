"""What a CANDLE script sees of the process while `playground candle` runs it, and nothing after.

- `sys.argv` is the script's own command line, `[script, --key, value, ...]`: the run's folders first, then
  every `--set` (a list gives one token per item, as CANDLE's `--dense 1500 500`), so candle_lib's
  `finalize_parameters` (or any argv parser) reads the same params the command checked.
- Relative output paths (`save_path`, `logfile`, `output_dir`, `ckpt_directory`, from the defaults file or
  `--set`) are inside the run folder, not the working folder (outputs_inside).
- The run's folders in CANDLE's keys: `output_dir` (`<run-dir>/output`; candle_lib appends
  `<experiment_id>/<run_id>`), `experiment_id` (the run folder's parent's name), `run_id` (the run folder's
  name) and `ckpt_directory` (`<run-dir>/checkpoints`), unless `--set` names them; and `CANDLE_DATA_DIR`
  (`<run-dir>/data`) when the environment does not set it. So no two runs, and no two trials, share an output
  or a checkpoint folder, and a run resumes only its own checkpoints.
- `import candle` gives the user's `candle` whenever one can be imported: candle_lib installed, Benchmarks'
  `common/candle` on PYTHONPATH or appended to sys.path by the script at run time, a `candle` beside the
  script. Only when none can does it give playground's implementation of candle_lib's API
  (playground/compat/candle): a finder placed last on sys.meta_path, so Python's own path search goes first,
  whenever the import happens. It is removed when the script is done.
"""
from __future__ import annotations

import contextlib
import importlib.abc
import importlib.machinery
import os
import sys
from typing import Any, Iterator

from playground.candle.list_values import split_candle_list
from playground.outputs.run_folder import RunFolder

# playground/compat/candle/on_path holds the one-line module `candle`; found by path, so the core never imports
# the compatibility layer.
COMPAT_PATH = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "compat", "candle",
                           "on_path")


def run_keys(run_dir: str) -> dict[str, str]:
    """CANDLE's folder keys for the run folder `run_dir`."""
    run_dir = os.path.abspath(run_dir)
    folder = RunFolder(run_dir)
    return {"output_dir": folder.script_output,
            "experiment_id": os.path.basename(os.path.dirname(run_dir)) or "EXP000",
            "run_id": os.path.basename(run_dir), "ckpt_directory": folder.checkpoints}


# The params that name where a benchmark writes (P1B1 and P1B2 write `<save_path><ext>.log`, candle_lib its
# output_dir, the checkpoint callback its ckpt_directory).
OUTPUT_PATH_KEYS = ("save_path", "logfile", "output_dir", "ckpt_directory")


def outputs_inside(params: dict, run_dir: str) -> None:
    """Each relative path of OUTPUT_PATH_KEYS made relative to the run folder instead of the working folder
    (a trailing '/' kept: benchmarks append file names to save_path), so no two runs share an output file; an
    absolute path stays as given."""
    for key in OUTPUT_PATH_KEYS:
        value = params.get(key)
        if isinstance(value, str) and value and not os.path.isabs(value):
            params[key] = os.path.join(os.path.abspath(run_dir), value)


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


class FallbackCandleFinder(importlib.abc.MetaPathFinder):
    """Finds `candle` (playground's, in COMPAT_PATH) for an import that every finder before it failed to find."""

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> importlib.machinery.ModuleSpec | None:
        if fullname != "candle":
            return None
        return importlib.machinery.PathFinder.find_spec(fullname, [COMPAT_PATH])


@contextlib.contextmanager
def script_process(argv: list[str], run_dir: str) -> Iterator[None]:
    """sys.argv, CANDLE_DATA_DIR and the `candle` module as the module doc says, restored on leaving."""
    saved_argv = sys.argv
    data_dir_unset = "CANDLE_DATA_DIR" not in os.environ
    sys.argv = list(argv)
    if data_dir_unset:
        os.environ["CANDLE_DATA_DIR"] = os.path.join(os.path.abspath(run_dir), "data")
    finder = FallbackCandleFinder()
    _forget_playgrounds_candle()    # an earlier script of this process found no other: this one may
    sys.meta_path.append(finder)
    try:
        yield
    finally:
        sys.argv = saved_argv
        sys.meta_path.remove(finder)
        _forget_playgrounds_candle()
        if data_dir_unset:
            os.environ.pop("CANDLE_DATA_DIR", None)


def _forget_playgrounds_candle() -> None:
    """Drop `candle` from sys.modules when it is playground's, so the next import searches the path again."""
    module = sys.modules.get("candle")
    if module is not None and module.__name__.startswith("playground."):
        del sys.modules["candle"]
