"""A multi-layer perceptron over the flattened input, with cross-entropy loss."""
from __future__ import annotations

import math

from torch import nn

from playground.api import Int, ListOf, input_shape

# Framework keys this component reads (docs/opts.md lists it as their reader).
reads = ["input.num_classes"]

additional_definitions = [
    {"name": "model_param.mlp_hidden", "type": ListOf(Int(1)), "default": [256], "help": "Widths of the hidden layers."},
    {"name": "model_param.dropout", "type": float, "default": 0.0, "help": "Dropout after each hidden layer."},
]


def gen_forward_pass_builder_fun(self, model, dataset, is_train):
    i, p = self.opts["input"], self.opts["model_param"]
    features = math.prod(input_shape(dataset, self.opts))
    layers: list[nn.Module] = [nn.Flatten()]
    for width in p["mlp_hidden"]:
        layers += [nn.Linear(features, int(width)), nn.ReLU(inplace=True)]
        if p["dropout"] > 0:
            layers.append(nn.Dropout(p["dropout"]))
        features = int(width)
    layers.append(nn.Linear(features, i["num_classes"]))
    return nn.Sequential(*layers), nn.CrossEntropyLoss()


