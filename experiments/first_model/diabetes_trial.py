"""The diabetes regression of diabetes_mlp.json as one trial class (Determined's PyTorchTrial shape): the data,
the network, the loss and the two steps in one file, with the same meters. Run it from the repository root:

    playground run --parameters-file experiments/first_model/diabetes_trial.json --run-dir runs/diabetes-trial
"""
from __future__ import annotations

from typing import Any

from torch import nn
from torch.nn import functional as F

from playground.api import Trial, TrialContext

# The trial's own hyperparameters, declared like a component's: checked, defaulted, listed by `--dry-run`.
additional_definitions = [
    {"name": "model_param.hidden", "type": list, "default": [32], "help": "Widths of the hidden layers."},
    {"name": "model_param.test_fraction", "type": float, "default": 0.2, "help": "Fraction of the patients held out."},
]


class DiabetesTrial(Trial):
    def __init__(self, context: TrialContext) -> None:
        super().__init__(context)
        from experiments.first_model.diabetes_input import load_diabetes_split

        # numpy (inputs, targets) tuples: 10 standardised measurements, one standardised target per patient
        self.x_train, self.y_train, self.x_test, self.y_test = load_diabetes_split(context.get_hparam("test_fraction"))

    def build_model(self) -> nn.Module:
        layers: list[nn.Module] = [nn.Flatten()]
        features = self.x_train.shape[1]
        for width in self.context.get_hparam("hidden"):
            layers += [nn.Linear(features, int(width)), nn.ReLU()]
            features = int(width)
        layers += [nn.Linear(features, 1), nn.Flatten(start_dim=0)]    # one value per sample: shape (batch,)
        return nn.Sequential(*layers)

    def build_training_data_loader(self) -> Any:
        return self.x_train, self.y_train

    def build_validation_data_loader(self) -> Any:
        return self.x_test, self.y_test

    def train_batch(self, batch: Any, epoch_idx: int, batch_idx: int) -> dict:
        data, targets = batch
        return {"loss": F.mse_loss(self.model(data), targets)}

    def evaluate_batch(self, batch: Any) -> dict:
        data, targets = batch
        # the meters of output.metrics read "prediction" beside the batch's targets ("label")
        return {"prediction": self.model(data)}
