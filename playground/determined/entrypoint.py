"""A Determined `entrypoint` as the command the runner starts on every slot (one process per rank).

- `module:TrialClass` (the Trial API of 0.2x): playground's trial harness, `python -m
  playground.determined.trial_main module:TrialClass`.
- a command (a string, split as a shell would, or a list): a leading `python`/`python3`/`pythonX.Y` becomes this
  interpreter. Determined's launcher prefix `python3 -m determined.launch.torch_distributed [OVERRIDES --]
  (--trial module:Class | SCRIPT...)` is taken off: the runner already starts one process per slot.
"""
from __future__ import annotations

import re
import shlex
import sys
from typing import Any

TRIAL_MAIN = "playground.determined.trial_main"
_TRIAL_REF = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_]\w*$")
_PYTHON = re.compile(r"^(.*/)?python(\d+(\.\d+)?)?$")
_LAUNCHERS = {"determined.launch.torch_distributed": "torch_distributed", "determined.launch.horovod": "horovod",
              "determined.launch.deepspeed": "deepspeed", "determined.launch.tensorflow": "tensorflow"}


class EntrypointError(ValueError):
    """The entrypoint cannot be run locally; the message names why."""


def entrypoint_problem(raw: Any) -> str | None:
    """Why `raw` is not a usable entrypoint (as `entrypoint: ...`), or None."""
    try:
        entrypoint_command(raw)
    except EntrypointError as err:
        return f"entrypoint: {err}"
    return None


def entrypoint_command(raw: Any) -> list[str]:
    """The argv the runner starts for the entrypoint `raw` (see the module docstring)."""
    if isinstance(raw, str) and _TRIAL_REF.match(raw.strip()):
        return trial_command(raw.strip())
    if isinstance(raw, str):
        try:
            words = shlex.split(raw)
        except ValueError as err:
            raise EntrypointError(f"{raw!r} cannot be split into words: {err}") from None
    elif isinstance(raw, list) and all(isinstance(w, str) for w in raw):
        words = list(raw)
    else:
        raise EntrypointError("required: `module:TrialClass` or a command (a string or a list of strings)")
    if not words:
        raise EntrypointError("the command is empty")
    return _without_launcher(_with_this_python(words))


def trial_command(reference: str) -> list[str]:
    return [sys.executable, "-m", TRIAL_MAIN, reference]


def _with_this_python(words: list[str]) -> list[str]:
    return [sys.executable, *words[1:]] if _PYTHON.match(words[0]) else words


def _without_launcher(words: list[str]) -> list[str]:
    if len(words) < 3 or words[0] != sys.executable or words[1] != "-m" or words[2] not in _LAUNCHERS:
        return words
    launcher, rest = _LAUNCHERS[words[2]], words[3:]
    if "--" in rest:                         # torch.distributed overrides: the runner sets ranks and ports
        rest = rest[rest.index("--") + 1:]
    if rest[:1] == ["--autohorovod"]:
        rest = rest[1:]
    if rest[:1] == ["--trial"] or (rest and rest[0].startswith("--trial=")):
        reference = rest[1] if rest[0] == "--trial" and len(rest) > 1 else rest[0].partition("=")[2]
        if not _TRIAL_REF.match(reference) or len(rest) > (2 if rest[0] == "--trial" else 1):
            raise EntrypointError(f"{words[2]} --trial takes one `module:TrialClass` and nothing after it")
        return trial_command(reference)
    if launcher != "torch_distributed":
        raise EntrypointError(f"{words[2]} runs scripts on {launcher}, which playground does not provide; use "
                              "determined.launch.torch_distributed (PyTorch DDP) or a Trial class")
    if not rest:
        raise EntrypointError(f"{words[2]} needs a script to launch (SCRIPT... or --trial module:Class)")
    return _with_this_python(rest)
