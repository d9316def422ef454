"""The original Caffe2 Playground's blob names for the explicit ResNet, and its checkpoints as our state_dicts.

Caffe2 named the demo network's blobs `conv1_w` (+ `conv1_b`), `res_conv1_bn_{s,b,rm,riv}`,
`res{2..5}_{block}_branch2{a,b,c}_w` with `..._bn_{s,b,rm,riv}`, `res{2..5}_{block}_branch1_w` (projection
shortcut) with its `_bn_*`, and `pred_w`/`pred_b`. `_s`/`_b` are batch-norm gamma/beta, `_rm` the running mean
and `_riv`, despite its name, the running variance (the `var` input of Caffe2's SpatialBN). Layouts match
PyTorch's (OIHW convolutions, out x in linear weights), so conversion is renaming plus shape checks.
"""
from __future__ import annotations

import re
from dataclasses import replace

import numpy as np
import torch

from components.networks.explicit_resnet import BLOCK_COUNTS, ExplicitResNet, ResNetSpec


class Caffe2BlobError(ValueError):
    """The blobs are not a checkpoint of the explicit ResNet, or not of the one described."""


_BN_SUFFIX = {"weight": "s", "bias": "b", "running_mean": "rm", "running_var": "riv"}
# Optimizer state and per-batch scratch blobs that a checkpoint may hold; none of it is a weight.
_SCRATCH = re.compile(r".*_(momentum|sm|siv)$")
_BLOCK_MODULE = re.compile(r"layer(\d+)\.(\d+)\.(conv\d|bn\d|downsample\.[01])")
# part of a block -> (Caffe2 branch, is a batch norm)
_BRANCH = {"conv1": ("branch2a", False), "bn1": ("branch2a", True), "conv2": ("branch2b", False),
           "bn2": ("branch2b", True), "conv3": ("branch2c", False), "bn3": ("branch2c", True),
           "downsample.0": ("branch1", False), "downsample.1": ("branch1", True)}


def caffe2_name(torch_name: str) -> str | None:
    """The Caffe2 blob holding the tensor `torch_name` of ExplicitResNet (None for num_batches_tracked)."""
    module, _, tensor = torch_name.rpartition(".")
    if tensor == "num_batches_tracked":
        return None
    if module in ("conv1", "fc"):
        return f"{'pred' if module == 'fc' else 'conv1'}_{tensor[0]}"
    if module == "bn1":
        return f"res_conv1_bn_{_BN_SUFFIX[tensor]}"
    match = _BLOCK_MODULE.fullmatch(module)
    if match is None or tensor not in _BN_SUFFIX:
        raise KeyError(f"{torch_name} is not a tensor of ExplicitResNet")
    stage, block, part = match.groups()
    branch, is_bn = _BRANCH[part]
    prefix = f"res{int(stage) + 1}_{block}_{branch}"
    return f"{prefix}_bn_{_BN_SUFFIX[tensor]}" if is_bn else f"{prefix}_w"


def infer_spec(blobs: dict[str, np.ndarray]) -> ResNetSpec:
    """The architecture the blobs describe: block type and counts, stem, width, channels, classes, stem bias."""
    for needed in ("conv1_w", "pred_w", "res2_0_branch2a_w"):
        if needed not in blobs:
            sample = ", ".join(sorted(blobs)[:8]) + (" ..." if len(blobs) > 8 else "")
            raise Caffe2BlobError(f"no blob {needed!r}: this is not a checkpoint of the explicit ResNet "
                                  f"(explicit_resnet_forward); its blobs are {sample or 'none'}")
    conv1 = blobs["conv1_w"]
    if conv1.ndim != 4 or conv1.shape[2] not in (3, 7):
        raise Caffe2BlobError(f"conv1_w has shape {tuple(conv1.shape)}; expected (width, channels, 7, 7) or "
                              "(width, channels, 3, 3)")
    bottleneck = "res2_0_branch2c_w" in blobs
    counts = tuple(_count_blocks(blobs, stage) for stage in range(2, 6))
    if 0 in counts:
        raise Caffe2BlobError(f"blocks per stage res2..res5: {counts}; every stage needs at least one block "
                              f"(no res{2 + counts.index(0)}_0_branch2a_w)")
    canonical = [d for d, c in BLOCK_COUNTS.items() if c == counts and (d >= 50) == bottleneck]
    layers = sum(counts) * (3 if bottleneck else 2) + 2
    if not bottleneck and layers >= 50:
        raise Caffe2BlobError(f"a basic-block ResNet with {sum(counts)} blocks {counts} cannot be built: basic "
                              "blocks are used below 50 layers only")
    # Outside the canonical layouts the depth only selects the block type (bottleneck from 50 on).
    depth = canonical[0] if canonical else max(layers, 50) if bottleneck else layers
    return ResNetSpec(depth=depth, num_classes=int(blobs["pred_w"].shape[0]), in_channels=int(conv1.shape[1]),
                      stem="imagenet" if conv1.shape[2] == 7 else "small", width=int(conv1.shape[0]),
                      block_counts=None if canonical else counts, conv1_bias="conv1_b" in blobs)


def blobs_to_state_dict(blobs: dict[str, np.ndarray], spec: ResNetSpec) -> tuple[dict[str, torch.Tensor], list[str]]:
    """Tensors of ExplicitResNet(spec) from the blobs, and the names of blobs left unused.

    With `spec.conv1_bias` off, a `conv1_b` blob is folded into the stem batch norm's running mean, which is
    exact: batch norm removes a constant per-channel shift in training and subtracts the running mean in eval.
    """
    with torch.device("meta"):
        target = ExplicitResNet(replace(spec, last_bn_gamma=None)).state_dict()
    state: dict[str, torch.Tensor] = {}
    used, problems = set(), []
    for name, like in target.items():
        blob = caffe2_name(name)
        if blob is None:
            state[name] = torch.zeros((), dtype=like.dtype)
            continue
        if blob not in blobs:
            problems.append(f"{blob} (for {name}) is missing")
            continue
        array = np.asarray(blobs[blob])
        if tuple(array.shape) != tuple(like.shape):
            problems.append(f"{blob} has shape {tuple(array.shape)}, {name} needs {tuple(like.shape)}")
            continue
        state[name] = torch.tensor(array, dtype=torch.float32)
        used.add(blob)
    if problems:
        raise Caffe2BlobError("the blobs do not fit the network: " + "; ".join(problems))
    if "conv1_b" in blobs and not spec.conv1_bias:
        state["bn1.running_mean"] = state["bn1.running_mean"] - torch.tensor(blobs["conv1_b"], dtype=torch.float32)
        used.add("conv1_b")
    unused = sorted(b for b in blobs if b not in used and not _SCRATCH.fullmatch(b))
    return state, unused


def _count_blocks(blobs: dict[str, np.ndarray], stage: int) -> int:
    count = 0
    while f"res{stage}_{count}_branch2a_w" in blobs:
        count += 1
    return count
