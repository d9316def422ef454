"""A small convolutional network (conv-BN-ReLU blocks, adaptive pooling) for any image size, cross-entropy loss."""
from __future__ import annotations

from torch import nn

from playground.api import Int, ListOf, input_shape

# Framework keys this component reads (docs/opts.md lists it as their reader).
reads = ["input.num_classes", "model_param.bn_epsilon", "model_param.bn_momentum"]

additional_definitions = [
    {"name": "model_param.cnn_channels", "type": ListOf(Int(1), min_items=1), "default": [16, 32],
     "help": "Output channels of each conv-BN-ReLU block; each block after the first halves the resolution."},
]


def gen_forward_pass_builder_fun(self, model, dataset, is_train):
    i, p = self.opts["input"], self.opts["model_param"]
    in_channels = input_shape(dataset, self.opts)[0]
    momentum = 1.0 - p["bn_momentum"]  # Caffe2 convention -> PyTorch convention
    layers: list[nn.Module] = []
    for index, channels in enumerate(int(c) for c in p["cnn_channels"]):
        stride = 1 if index == 0 else 2
        layers += [nn.Conv2d(in_channels, channels, 3, stride=stride, padding=1, bias=False),
                   nn.BatchNorm2d(channels, eps=p["bn_epsilon"], momentum=momentum), nn.ReLU(inplace=True)]
        in_channels = channels
    layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(in_channels, i["num_classes"])]
    return nn.Sequential(*layers), nn.CrossEntropyLoss()
