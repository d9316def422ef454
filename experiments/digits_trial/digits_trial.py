"""Determined's MNIST PyTorch trial, converted to playground's trial class, on scikit-learn's digits (no downloads).

The network, data, optimizer and order are those of experiments/digits_mlp.json (components) and of
experiments/candle_digits/ (a CANDLE script), so all three end with the same weights. Run it from the
repository root:

    playground run --parameters-file experiments/digits_trial.json --run-dir runs/digits-trial
    playground run --parameters-file experiments/digits_trial.json --test     # one batch of each, in seconds
"""
from __future__ import annotations

from typing import Any

import torch
from torch import nn
from torch.nn import functional as F

from playground.api import Trial, TrialContext

# The trial's own hyperparameters, declared like a component's: checked, defaulted, listed by `--dry-run`.
additional_definitions = [
    {"name": "model_param.hidden", "type": list, "default": [64], "help": "Widths of the hidden layers."},
    {"name": "model_param.momentum", "type": float, "default": 0.9, "help": "SGD momentum."},
    {"name": "model_param.test_fraction", "type": float, "default": 0.2, "help": "Fraction of the digits held out."},
]


class DigitsTrial(Trial):
    def __init__(self, context: TrialContext) -> None:
        super().__init__(context)
        from components.inputs.digits_arrays import load_digits_split

        # One split for both loaders: numpy (inputs, labels) tuples, 64 pixels in [0, 1] and labels 0-9.
        self.x_train, self.y_train, self.x_test, self.y_test = load_digits_split(context.get_hparam("test_fraction"))

    def build_model(self) -> nn.Module:
        layers: list[nn.Module] = [nn.Flatten()]
        features = self.x_train.shape[1]
        for width in self.context.get_hparam("hidden"):
            layers += [nn.Linear(features, int(width)), nn.ReLU(inplace=True)]
            features = int(width)
        layers.append(nn.Linear(features, 10))
        return nn.Sequential(*layers)

    def build_optimizer(self, model: nn.Module) -> torch.optim.Optimizer:
        hp = self.context.hparams
        return torch.optim.SGD(model.parameters(), lr=hp["base_learning_rate"], momentum=hp["momentum"],
                               weight_decay=hp["weight_decay"])

    def build_training_data_loader(self) -> Any:
        return self.x_train, self.y_train

    def build_validation_data_loader(self) -> Any:
        return self.x_test, self.y_test

    def train_batch(self, batch: Any, epoch_idx: int, batch_idx: int) -> dict:
        data, labels = batch
        loss = F.cross_entropy(self.model(data), labels)
        return {"loss": loss}

    def evaluate_batch(self, batch: Any) -> dict:
        data, labels = batch
        output = self.model(data)
        correct = (output.argmax(dim=1) == labels).sum()
        # (sum, count) pairs add exactly over batches and ranks; a plain value is a mean over the batch.
        return {"validation_loss": F.cross_entropy(output, labels), "accuracy": (correct, len(labels))}
