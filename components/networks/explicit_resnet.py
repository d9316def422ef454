"""The demo's explicit ResNet (v1.5): any canonical depth, any image size, any class count, any input channels.

A public module: `explicit_resnet_forward` builds it from the opts and the Caffe2 checkpoint conversion
(`explicit_resnet_caffe2`) names its tensors. Submodules carry torchvision's names (conv1, bn1, layer1..layer4,
fc; in a block conv1/bn1..conv3/bn3 and downsample.0/1), so torchvision state_dicts load into it and, with the
default spec, depths 18 and 50 have exactly torchvision's parameters. Differences from torchvision are options:
a 3x3 stride-1 stem without max-pool for small images, a stem-conv bias (the original Caffe2 net had one), a
base width, initial gamma of each block's last batch norm, and activation checkpointing per stage.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from components.networks.activation_checkpoint import checkpointed

# Blocks per stage of the canonical depths (He et al. 2016, and ResNet-200 of the identity-mappings paper).
BLOCK_COUNTS: dict[int, tuple[int, int, int, int]] = {
    18: (2, 2, 2, 2), 34: (3, 4, 6, 3), 50: (3, 4, 6, 3),
    101: (3, 4, 23, 3), 152: (3, 8, 36, 3), 200: (3, 24, 36, 3),
}
STEMS = ("imagenet", "small")


@dataclass(frozen=True)
class ResNetSpec:
    """Everything that decides the network. `bn_momentum` is in PyTorch's convention (weight of the new batch)."""

    depth: int = 50                      # 18 and 34 use basic blocks; anything else bottleneck blocks
    num_classes: int = 1000
    in_channels: int = 3
    stem: str = "imagenet"               # "imagenet": 7x7/2 conv + 3x3/2 max-pool; "small": 3x3/1 conv only
    width: int = 64                      # channels of the first stage; each later stage doubles them
    block_counts: tuple[int, ...] | None = None   # replaces BLOCK_COUNTS[depth] when given
    conv1_bias: bool = False
    bn_epsilon: float = 1e-5
    bn_momentum: float = 0.1
    last_bn_gamma: float | None = None   # initial gamma of the last batch norm of every block; None keeps 1
    checkpoint_stages: bool = False      # recompute each stage's activations in backward (training only)
    channels_last: bool = False

    @property
    def bottleneck(self) -> bool:
        return self.depth >= 50

    @property
    def layers(self) -> int:
        """Weighted layers on the main path plus the classifier (equals `depth` for the canonical layouts)."""
        return sum(self.stage_blocks) * (3 if self.bottleneck else 2) + 2

    @property
    def stage_blocks(self) -> tuple[int, ...]:
        if self.block_counts is not None:
            return tuple(self.block_counts)
        if self.depth not in BLOCK_COUNTS:
            raise ValueError(f"no block layout for depth {self.depth}; supported depths: "
                             f"{', '.join(map(str, BLOCK_COUNTS))} (or give block_counts)")
        return BLOCK_COUNTS[self.depth]


class BasicBlock(nn.Module):
    """Two 3x3 convolutions (the first strided) plus the shortcut; for depths 18 and 34."""

    expansion = 1

    def __init__(self, in_channels: int, width: int, stride: int, spec: ResNetSpec) -> None:
        super().__init__()
        self.conv1 = _conv(in_channels, width, 3, stride)
        self.bn1 = _bn(width, spec)
        self.conv2 = _conv(width, width, 3, 1)
        self.bn2 = _bn(width, spec)
        self.relu = nn.ReLU(inplace=True)
        self.downsample = _shortcut(in_channels, width, stride, spec)

    @property
    def last_bn(self) -> nn.BatchNorm2d:
        return self.bn2

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return self.relu(out + (x if self.downsample is None else self.downsample(x)))


class Bottleneck(nn.Module):
    """1x1 reduce, 3x3 (strided: v1.5), 1x1 expand x4, plus the shortcut; for depths 50 and up."""

    expansion = 4

    def __init__(self, in_channels: int, width: int, stride: int, spec: ResNetSpec) -> None:
        super().__init__()
        self.conv1 = _conv(in_channels, width, 1, 1)
        self.bn1 = _bn(width, spec)
        self.conv2 = _conv(width, width, 3, stride)
        self.bn2 = _bn(width, spec)
        self.conv3 = _conv(width, width * self.expansion, 1, 1)
        self.bn3 = _bn(width * self.expansion, spec)
        self.relu = nn.ReLU(inplace=True)
        self.downsample = _shortcut(in_channels, width * self.expansion, stride, spec)

    @property
    def last_bn(self) -> nn.BatchNorm2d:
        return self.bn3

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.relu(self.bn2(self.conv2(out)))
        out = self.bn3(self.conv3(out))
        return self.relu(out + (x if self.downsample is None else self.downsample(x)))


class ExplicitResNet(nn.Module):
    """The network of `spec`: stem, four stages, global average pooling (any input size), a linear classifier."""

    def __init__(self, spec: ResNetSpec) -> None:
        super().__init__()
        if spec.stem not in STEMS:
            raise ValueError(f"unknown stem {spec.stem!r}; choose one of {', '.join(STEMS)}")
        self.spec = spec
        if spec.stem == "imagenet":
            self.conv1 = nn.Conv2d(spec.in_channels, spec.width, 7, stride=2, padding=3, bias=spec.conv1_bias)
            self.maxpool: nn.Module = nn.MaxPool2d(3, stride=2, padding=1)
        else:
            self.conv1 = nn.Conv2d(spec.in_channels, spec.width, 3, stride=1, padding=1, bias=spec.conv1_bias)
            self.maxpool = nn.Identity()
        self.bn1 = _bn(spec.width, spec)
        self.relu = nn.ReLU(inplace=True)
        block = Bottleneck if spec.bottleneck else BasicBlock
        channels = spec.width
        for index, blocks in enumerate(spec.stage_blocks):
            width = spec.width * 2 ** index
            stride = 1 if index == 0 else 2
            stage = [block(channels if i == 0 else width * block.expansion, width, stride if i == 0 else 1, spec)
                     for i in range(blocks)]
            self.add_module(f"layer{index + 1}", nn.Sequential(*stage))
            channels = width * block.expansion
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(channels, spec.num_classes)
        self._initialise()

    def stages(self) -> list[nn.Sequential]:
        return [getattr(self, f"layer{i + 1}") for i in range(len(self.spec.stage_blocks))]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.spec.channels_last:
            x = x.contiguous(memory_format=torch.channels_last)
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        for stage in self.stages():
            x = self._run_stage(stage, x)
        return self.fc(torch.flatten(self.avgpool(x), 1))

    def _run_stage(self, stage: nn.Sequential, x: torch.Tensor) -> torch.Tensor:
        return checkpointed(stage, x) if self.spec.checkpoint_stages else stage(x)

    def _initialise(self) -> None:
        for module in self.modules():
            if isinstance(module, nn.Conv2d):
                nn.init.kaiming_normal_(module.weight, mode="fan_out", nonlinearity="relu")
                if module.bias is not None:
                    nn.init.zeros_(module.bias)
            elif isinstance(module, nn.BatchNorm2d):
                nn.init.ones_(module.weight)
                nn.init.zeros_(module.bias)
        if self.spec.last_bn_gamma is not None:
            for module in self.modules():
                if isinstance(module, (BasicBlock, Bottleneck)):
                    nn.init.constant_(module.last_bn.weight, self.spec.last_bn_gamma)


def _conv(in_channels: int, out_channels: int, kernel: int, stride: int) -> nn.Conv2d:
    return nn.Conv2d(in_channels, out_channels, kernel, stride=stride, padding=kernel // 2, bias=False)


def _bn(channels: int, spec: ResNetSpec) -> nn.BatchNorm2d:
    return nn.BatchNorm2d(channels, eps=spec.bn_epsilon, momentum=spec.bn_momentum)


def _shortcut(in_channels: int, out_channels: int, stride: int, spec: ResNetSpec) -> nn.Sequential | None:
    """A projection (1x1 conv + batch norm) when the shape changes, else the identity (None)."""
    if stride == 1 and in_channels == out_channels:
        return None
    return nn.Sequential(_conv(in_channels, out_channels, 1, stride), _bn(out_channels, spec))
