"""Test helper: the original Caffe2 explicit ResNet as blobs (named the way the original named them), and its
forward pass computed straight from those blobs, independently of the conversion under test."""
from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F

EPS = 1e-5


def make_blobs(bottleneck: bool, counts: tuple[int, ...], width: int = 4, in_channels: int = 3,
               num_classes: int = 5, stem_kernel: int = 7, conv1_bias: bool = True, seed: int = 0
               ) -> dict[str, np.ndarray]:
    """Random weights and batch-norm statistics under the original's blob names."""
    rng = np.random.default_rng(seed)
    blobs: dict[str, np.ndarray] = {}

    def conv(name: str, out: int, inp: int, kernel: int) -> None:
        std = np.sqrt(2.0 / (inp * kernel * kernel))
        blobs[name + "_w"] = (rng.standard_normal((out, inp, kernel, kernel)) * std).astype(np.float32)

    def bn(name: str, channels: int) -> None:
        blobs[name + "_s"] = rng.uniform(0.5, 1.5, channels).astype(np.float32)
        blobs[name + "_b"] = (rng.standard_normal(channels) * 0.1).astype(np.float32)
        blobs[name + "_rm"] = (rng.standard_normal(channels) * 0.1).astype(np.float32)
        blobs[name + "_riv"] = rng.uniform(0.5, 2.0, channels).astype(np.float32)

    conv("conv1", width, in_channels, stem_kernel)
    if conv1_bias:
        blobs["conv1_b"] = (rng.standard_normal(width) * 0.1).astype(np.float32)
    bn("res_conv1_bn", width)
    dim_in, expansion = width, 4 if bottleneck else 1
    for stage, blocks in enumerate(counts):
        inner = width * 2 ** stage
        out = inner * expansion
        for index in range(blocks):
            prefix = f"res{stage + 2}_{index}"
            if bottleneck:
                for branch, (o, i, k) in zip("abc", ((inner, dim_in, 1), (inner, inner, 3), (out, inner, 1))):
                    conv(f"{prefix}_branch2{branch}", o, i, k)
                    bn(f"{prefix}_branch2{branch}_bn", o)
            else:
                for branch, (o, i) in zip("ab", ((out, dim_in), (out, out))):
                    conv(f"{prefix}_branch2{branch}", o, i, 3)
                    bn(f"{prefix}_branch2{branch}_bn", o)
            if dim_in != out:
                conv(f"{prefix}_branch1", out, dim_in, 1)
                bn(f"{prefix}_branch1_bn", out)
            dim_in = out
    blobs["pred_w"] = (rng.standard_normal((num_classes, dim_in)) * 0.1).astype(np.float32)
    blobs["pred_b"] = (rng.standard_normal(num_classes) * 0.1).astype(np.float32)
    return blobs


def caffe2_forward(blobs: dict[str, np.ndarray], x: torch.Tensor) -> torch.Tensor:
    """The original network in test mode, op by op from the blobs (stride on the 3x3, as the original had it)."""
    t = {k: torch.from_numpy(v) for k, v in blobs.items()}

    def bn(y: torch.Tensor, name: str) -> torch.Tensor:
        return F.batch_norm(y, t[name + "_rm"], t[name + "_riv"], t[name + "_s"], t[name + "_b"], False, 0.0, EPS)

    def conv(y: torch.Tensor, name: str, stride: int = 1) -> torch.Tensor:
        weight = t[name + "_w"]
        return F.conv2d(y, weight, t.get(name + "_b"), stride=stride, padding=weight.shape[-1] // 2)

    stem = t["conv1_w"].shape[-1]
    y = F.relu(bn(conv(x, "conv1", stride=2 if stem == 7 else 1), "res_conv1_bn"))
    if stem == 7:
        y = F.max_pool2d(y, 3, stride=2, padding=1)
    bottleneck = "res2_0_branch2c_w" in t
    for stage in range(2, 6):
        index = 0
        while f"res{stage}_{index}_branch2a_w" in t:
            p, stride = f"res{stage}_{index}", 2 if index == 0 and stage > 2 else 1
            if bottleneck:
                out = F.relu(bn(conv(y, p + "_branch2a"), p + "_branch2a_bn"))
                out = F.relu(bn(conv(out, p + "_branch2b", stride), p + "_branch2b_bn"))
                out = bn(conv(out, p + "_branch2c"), p + "_branch2c_bn")
            else:
                out = F.relu(bn(conv(y, p + "_branch2a", stride), p + "_branch2a_bn"))
                out = bn(conv(out, p + "_branch2b"), p + "_branch2b_bn")
            shortcut = bn(conv(y, p + "_branch1", stride), p + "_branch1_bn") if p + "_branch1_w" in t else y
            y = F.relu(out + shortcut)
            index += 1
    return F.linear(y.mean(dim=(2, 3)), t["pred_w"], t["pred_b"])
