"""`model_param.pretrained_model`: load weights (only) from a playground checkpoint or a state_dict file.

Parameters missing from the file, unexpected in it, or of another shape are listed and skipped, never fatal,
so a network with a new classifier head starts from the rest. Files are read with `weights_only=True`.
"""
from __future__ import annotations

import logging
import os

import torch
from torch import nn

from playground.checkpoint_files import FORMAT


class PretrainedError(RuntimeError):
    pass


def load_pretrained(module: nn.Module, path: str, log: logging.Logger) -> int | None:
    """Copy matching tensors from `path` into `module`; return the file's epoch count when it has one."""
    if not os.path.isfile(path):
        raise PretrainedError(f"model_param.pretrained_model: {path} does not exist or is not a file")
    try:
        data = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as err:
        raise PretrainedError(f"model_param.pretrained_model: cannot read {path} as a weights file: "
                              f"{type(err).__name__}: {err}") from err
    epoch = None
    if isinstance(data, dict) and data.get("format") == FORMAT:
        weights, epoch = data["model"], int(data["epoch"])
    elif isinstance(data, dict) and "state_dict" in data and isinstance(data["state_dict"], dict):
        weights = data["state_dict"]
    elif isinstance(data, dict):
        weights = data
    else:
        raise PretrainedError(f"model_param.pretrained_model: {path} holds a {type(data).__name__}, not a state_dict")
    report = copy_matching(module, weights)
    log.info("pretrained weights from %s: %d tensors loaded", path, report["loaded"])
    for key in ("missing", "unexpected", "mismatched"):
        if report[key]:
            log.warning("pretrained_model: %d %s parameter(s) skipped: %s", len(report[key]), key,
                        ", ".join(report[key][:20]) + (" ..." if len(report[key]) > 20 else ""))
    return epoch


def copy_matching(module: nn.Module, weights: dict) -> dict:
    """Load the tensors of `weights` whose name and shape match; report the rest."""
    own = module.state_dict()
    weights = {k.removeprefix("module."): v for k, v in weights.items() if isinstance(v, torch.Tensor)}
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
