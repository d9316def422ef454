"""The demo's explicit ResNet (depth from model_param.num_layer, any image size and class count), cross-entropy loss.

The network lives in components/networks/explicit_resnet.py. This component turns the opts into it: depth
(`num_layer`: 18, 34, 50, 101, 152, 200; `block_counts` for other layouts such as the original's 264 and 284),
`stem`, `width`, `conv1_bias`, batch norm (`bn_epsilon`; `bn_momentum` in Caffe2's convention, converted),
`custom_bn_init`/`bn_init_gamma` (gamma of every block's last batch norm), `memonger` (activation checkpointing
per stage), `engine: "CUDNN"` (cuDNN autotuning) and `channels_last`. Input channels come from the dataset's
first sample. `caffe2_blobs_to_state_dict` converts an original Playground checkpoint of this network.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np
import torch
from torch import nn

from components.networks.explicit_resnet import BLOCK_COUNTS, STEMS, ExplicitResNet, ResNetSpec
from components.networks.explicit_resnet_caffe2 import Caffe2BlobError, blobs_to_state_dict, infer_spec
from playground.api import Int, ListOf, input_shape

# The original Playground's extra depths: non-standard bottleneck layouts, reachable through block_counts.
# (Its 200 was (3, 32, 36, 3) too; here 200 is the published (3, 24, 36, 3), see docs/resnet.md.)
ORIGINAL_LAYOUTS = {264: (3, 64, 36, 3), 284: (3, 32, 64, 3)}

# Framework keys this component reads (docs/opts.md lists it as their reader).
reads = ["input.num_classes",
         "model_param.engine",
         "model_param.bn_epsilon",
         "model_param.bn_momentum",
         "model_param.custom_bn_init",
         "model_param.bn_init_gamma",
         "model_param.memonger",
         "model_param.num_layer"]

additional_definitions = [
    {"name": "model_param.stem", "type": str, "choices": list(STEMS), "default": "imagenet",
     "help": 'ResNet stem: "imagenet" (7x7 stride-2 conv and 3x3 max-pool) or "small" (3x3 stride-1 conv, no '
             'pool; for 8-32 pixel images).'},
    {"name": "model_param.width", "type": Int(1), "default": 64,
     "help": "ResNet channels of the first stage (64 is the standard network); each later stage doubles them."},
    {"name": "model_param.block_counts", "type": ListOf(Int(1), min_items=4), "nullable": True, "default": None,
     "help": "ResNet blocks per stage (4 numbers) replacing the canonical ones of num_layer, which then only picks "
             "the block type (basic below 50, else bottleneck); e.g. the original's 264: [3, 64, 36, 3]."},
    {"name": "model_param.conv1_bias", "type": bool, "default": False,
     "help": "A bias on the ResNet stem convolution, as the original Caffe2 network had (off: torchvision's counts)."},
    {"name": "model_param.channels_last", "type": bool, "default": False,
     "help": "Run the ResNet in channels-last memory format (faster convolutions on recent GPUs)."},
]


def validate_opts(opts: dict) -> list[str]:
    p = opts["model_param"]
    depth, counts = p["num_layer"], p["block_counts"]
    if counts is not None and len(counts) != 4:
        return [f"opts.model_param.block_counts: expected 4 numbers (blocks of res2..res5), got {counts}"]
    if counts is None and depth not in BLOCK_COUNTS:
        hint = ""
        if depth in ORIGINAL_LAYOUTS:
            hint = (f" The original Playground's {depth} was the non-standard bottleneck layout "
                    f"{list(ORIGINAL_LAYOUTS[depth])}; to build it, also set model_param.block_counts to that list.")
        return [f"opts.model_param.num_layer: {depth} is not a ResNet depth explicit_resnet_forward knows; "
                f"use one of {', '.join(map(str, BLOCK_COUNTS))}.{hint}"]
    return []


def gen_forward_pass_builder_fun(self, model, dataset, is_train):
    shape = input_shape(dataset, self.opts)
    if len(shape) != 3:
        raise ValueError(f"explicit_resnet_forward needs image samples shaped (channels, height, width); the "
                         f"input component {self.opts['input']['input_name_py']} gives samples of shape {shape}")
    if self.opts["model_param"]["engine"].upper() == "CUDNN":
        torch.backends.cudnn.benchmark = True
    net = ExplicitResNet(spec_from_opts(self.opts, in_channels=shape[0]))
    if net.spec.channels_last:
        net = net.to(memory_format=torch.channels_last)
    return net, nn.CrossEntropyLoss()


def spec_from_opts(opts: dict, in_channels: int, num_classes: int | None = None) -> ResNetSpec:
    """The network the opts describe, for inputs with `in_channels` channels."""
    p = opts["model_param"]
    counts = p.get("block_counts")
    return ResNetSpec(
        depth=p["num_layer"], num_classes=num_classes or opts["input"]["num_classes"], in_channels=in_channels,
        stem=p["stem"], width=p["width"], block_counts=tuple(counts) if counts else None,
        conv1_bias=p["conv1_bias"], bn_epsilon=p["bn_epsilon"], bn_momentum=1.0 - p["bn_momentum"],
        last_bn_gamma=p["bn_init_gamma"] if p["custom_bn_init"] else None,
        checkpoint_stages=bool(p["memonger"]), channels_last=p["channels_last"])


def caffe2_blobs_to_state_dict(blobs: dict[str, np.ndarray], opts: dict | None = None
                               ) -> tuple[dict[str, torch.Tensor], list[str]]:
    """A state_dict of this network from an original Playground checkpoint's blobs, and notes for the user.

    The architecture is read from the blobs. `opts` (optional, raw opts of the experiment that will load the
    result) is checked against it: the model_param keys it sets (num_layer, block_counts, stem, width) must
    describe the same network, and its conv1_bias decides whether a `conv1_b` blob is kept or folded.
    """
    found = infer_spec(blobs)
    p = dict((opts or {}).get("model_param") or {})
    wanted = replace(found, conv1_bias=bool(p.get("conv1_bias", False)))
    problems = _differences(found, p)
    if problems:
        raise Caffe2BlobError("the checkpoint does not match the opts: " + "; ".join(problems))
    state, unused = blobs_to_state_dict(blobs, wanted)
    notes = [f"network: {_describe(found)}; load it with model_param.pretrained_model and these opts: "
             f"{_opts_for(found)}, input.num_classes {found.num_classes}"]
    if "conv1_b" in blobs and not wanted.conv1_bias:
        notes.append("conv1_b was folded into bn1.running_mean (exact); set model_param.conv1_bias true to keep it")
    if unused:
        more = " ..." if len(unused) > 20 else ""
        notes.append(f"{len(unused)} blob(s) not used: " + ", ".join(unused[:20]) + more)
    return state, notes


def _differences(found: ResNetSpec, p: dict) -> list[str]:
    problems = []
    if "num_layer" in p or "block_counts" in p:
        depth, counts = p.get("num_layer", 50), p.get("block_counts")
        layout = tuple(counts) if counts else BLOCK_COUNTS.get(depth)
        if layout != found.stage_blocks or (depth >= 50) != found.bottleneck:
            problems.append(f"the opts (num_layer {depth}, block_counts {counts}) describe blocks {layout}, the "
                            f"checkpoint is {_describe(found)}")
    for key in ("stem", "width"):
        if key in p and p[key] != getattr(found, key):
            problems.append(f"model_param.{key} is {p[key]!r}, the checkpoint's is {getattr(found, key)!r}")
    return problems


def _describe(spec: ResNetSpec) -> str:
    kind = "bottleneck" if spec.bottleneck else "basic"
    return (f"ResNet-{spec.layers} ({kind} blocks {list(spec.stage_blocks)}, {spec.stem} stem, width {spec.width}, "
            f"{spec.in_channels} input channels, {spec.num_classes} classes)")


def _opts_for(spec: ResNetSpec) -> str:
    keys = [f"model_param.num_layer {spec.depth}"]
    if spec.block_counts is not None:
        keys.append(f"model_param.block_counts {list(spec.block_counts)}")
    keys += [f'model_param.stem "{spec.stem}"', f"model_param.width {spec.width}"]
    return ", ".join(keys)
