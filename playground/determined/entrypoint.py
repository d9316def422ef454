"""A Determined `entrypoint` as the command the runner starts, and where: once per slot, or once per node.

- `module:TrialClass` (the Trial API of 0.2x): playground's trial harness, `python -m
  playground.determined.trial_main module:TrialClass`, once per slot (Determined started it under its launch
  layer).
- a command (a string, split as a shell would, or a list): a leading `python`/`python3`/`pythonX.Y` becomes this
  interpreter. Determined's launch layer prefix `python3 -m determined.launch.torch_distributed [OVERRIDES --]
  (--trial module:Class | SCRIPT...)` is taken off and the rest started once per slot (the runner does what
  the launcher did: one process per slot with torchrun's variables). Any other command is started once per
  node, as Determined starts an entrypoint in each container: a script with its own launcher (Determined's
  Core API distributed tutorial) starts its workers itself (`launches_per_slot`).
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


def launches_per_slot(raw: Any) -> bool:
    """Whether the runner starts the entrypoint `raw` once per slot (a Trial class, the trial harness, or
    Determined's launch layer prefix), else once per node."""
    if isinstance(raw, str) and _TRIAL_REF.match(raw.strip()):
        return True
    try:
        words = shlex.split(raw) if isinstance(raw, str) else list(raw)
    except (ValueError, TypeError):
        return False
    words = _with_this_python(words) if words else words
    return len(words) >= 3 and words[0] == sys.executable and words[1] == "-m" and (
        words[2] in _LAUNCHERS or words[2] == TRIAL_MAIN)


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
