"""A multi-layer perceptron with one output per sample and mean-squared-error loss: a forward pass component.

It never reads input.num_classes (leave it null): the network ends in a single unit, flattened so that its
output has the targets' shape (batch,).
"""
from __future__ import annotations

import math

from torch import nn

from playground.api import Int, ListOf, input_shape

additional_definitions = [
    {"name": "model_param.regression_hidden", "type": ListOf(Int(1)), "default": [32],
     "help": "Widths of the hidden layers of the regression MLP."},
]


def gen_forward_pass_builder_fun(self, model, dataset, is_train):
    features = math.prod(input_shape(dataset, self.opts))
    layers: list[nn.Module] = [nn.Flatten()]
    for width in self.opts["model_param"]["regression_hidden"]:
        layers += [nn.Linear(features, width), nn.ReLU()]
        features = width
    layers += [nn.Linear(features, 1), nn.Flatten(start_dim=0)]
    return nn.Sequential(*layers), nn.MSELoss()
