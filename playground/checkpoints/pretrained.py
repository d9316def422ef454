"""`model_param.pretrained_model`: load weights (only) from a checkpoint or state_dict file of common layouts.

Accepted layouts: our own checkpoints, `{"model": state_dict}` (detectron2, nanoGPT), `{"state_dict": ...}`,
and a bare state dict; names may carry a `module.` (DataParallel/DDP), `model.` or `_orig_mod.` (torch.compile)
prefix. Parameters missing from the file, unexpected in it, or of another shape are listed and skipped, so a
network with a new classifier head starts from the rest; a file of which nothing matches is an error that shows
names from both sides. Files are read with `weights_only=True`. `check_pretrained_file` runs before launch.
"""
from __future__ import annotations

import logging
import os
from typing import Any

import torch
from torch import nn

from playground.processes.exit_codes import UserError

PREFIXES = ("module.", "model.", "_orig_mod.")
KEY = "model_param.pretrained_model"


class PretrainedError(UserError, RuntimeError):
    pass


def read_weights(path: str) -> tuple[dict[str, torch.Tensor], int | None]:
    """The file's tensors by name and its epoch count when it records one; `PretrainedError` if unusable."""
    if not os.path.isfile(path):
        raise PretrainedError(f"{KEY}: {path} does not exist or is not a file")
    try:
        data = _load(path)
    except Exception as err:  # unreadable, truncated, or a pickle weights_only refuses
        raise PretrainedError(f"{KEY}: cannot read {path} as a weights file (read with weights_only=True): "
                              f"{type(err).__name__}: {err}") from err
    weights = _state_dict_of(data)
    epoch = None
    if isinstance(data, dict) and weights is not data and isinstance(data.get("epoch"), (int, float)) \
            and not isinstance(data.get("epoch"), bool):
        epoch = int(data["epoch"])  # our checkpoints, and converted Caffe2 ones, record it beside the weights
    if weights is None:
        raise PretrainedError(f"{KEY}: {path} holds no state dict (a {type(data).__name__}"
                              f"{' with keys ' + ', '.join(map(str, list(data)[:6])) if isinstance(data, dict) else ''}); "
                              "expected a state dict, or a dict holding one under 'model' or 'state_dict'")
    return weights, epoch


def check_pretrained_file(path: str) -> list[str]:
    """Problems with the file named by pretrained_model, found before any process starts."""
    try:
        read_weights(path)
    except PretrainedError as err:
        return [f"opts.{err}"]
    return []


def load_pretrained(module: nn.Module, path: str, log: logging.Logger) -> int | None:
    """Copy matching tensors from `path` into `module`; return the file's epoch count when it has one."""
    weights, epoch = read_weights(path)
    report = copy_matching(module, weights)
    if report["loaded"] == 0:
        raise PretrainedError(
            f"{KEY}: no tensor of {path} matches the network. File: {_few(sorted(weights))}; network: "
            f"{_few(sorted(module.state_dict()))}")
    log.info("pretrained weights from %s: %d tensors loaded", path, report["loaded"])
    for key in ("missing", "unexpected", "mismatched"):
        if report[key]:
            log.warning("pretrained_model: %d %s parameter(s) skipped: %s", len(report[key]), key,
                        ", ".join(report[key][:20]) + (" ..." if len(report[key]) > 20 else ""))
    return epoch


def copy_matching(module: nn.Module, weights: dict) -> dict:
    """Load the tensors of `weights` whose name (after stripping known prefixes) and shape match; report the rest."""
    own = module.state_dict()
    weights = {_own_name(k, own): v for k, v in weights.items() if isinstance(v, torch.Tensor)}
    usable, mismatched = {}, []
    for name, tensor in weights.items():
        if name in own:
            if own[name].shape == tensor.shape:
                usable[name] = tensor
            else:
                mismatched.append(f"{name} (file {tuple(tensor.shape)}, network {tuple(own[name].shape)})")
    module.load_state_dict(usable, strict=False)
    return {"loaded": len(usable), "missing": sorted(set(own) - set(weights)),
            "unexpected": sorted(set(weights) - set(own)), "mismatched": mismatched}


def _load(path: str) -> Any:
    try:  # zip-format files are mapped, not read, so checking a large file before launch stays cheap
        return torch.load(path, map_location="cpu", weights_only=True, mmap=True)
    except RuntimeError:
        return torch.load(path, map_location="cpu", weights_only=True)


def _state_dict_of(data: Any) -> dict | None:
    if not isinstance(data, dict):
        return None
    for key in ("model", "state_dict"):
        inner = data.get(key)
        if isinstance(inner, dict) and any(isinstance(v, torch.Tensor) for v in inner.values()):
            return inner
    return data if any(isinstance(v, torch.Tensor) for v in data.values()) else None


def _own_name(name: str, own: dict) -> str:
    """The network's name for a file's tensor: as written if the network has it, else without wrapper prefixes."""
    stripped = name
    while stripped not in own:
        prefix = next((p for p in PREFIXES if stripped.startswith(p)), None)
        if prefix is None:
            return name
        stripped = stripped[len(prefix):]
    return stripped


def _few(names: list[str], n: int = 4) -> str:
    return ", ".join(names[:n]) + (f" ... ({len(names)} in all)" if len(names) > n else "") if names else "(none)"
