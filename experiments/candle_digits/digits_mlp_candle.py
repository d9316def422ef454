"""CANDLE's MNIST MLP example (mnist_mlp_candle.py) converted to PyTorch, on scikit-learn's digits.

The CANDLE contract: `initialize_parameters()` returns the params (this folder's digits_mlp_default_model.txt,
checked against `additional_definitions` and `required`), `run(params)` trains and returns the history.
The Keras `model.fit` became a hand-written loop with playground's CANDLE checkpoint helper, so the run
resumes exactly after a kill. Run it as a playground run (run folder, metrics, sweeps):

    playground candle experiments/candle_digits/digits_mlp_candle.py --set epochs=8 --run-dir runs/digits-candle

or alone: `python experiments/candle_digits/digits_mlp_candle.py`. It trains the network of
experiments/digits_mlp.json on the same data in the same order, so both end with the same weights.
"""
from __future__ import annotations

import os
import random

import numpy as np
import torch
from torch import nn

from playground.candle import CandleCheckpoint
from playground.candle import initialize_parameters as candle_initialize_parameters

file_path = os.path.dirname(os.path.realpath(__file__))

additional_definitions = [
    {"name": "hidden", "nargs": "+", "type": int, "help": "widths of the hidden layers"},
    {"name": "momentum", "type": float, "help": "SGD momentum"},
    {"name": "weight_decay", "type": float, "help": "L2 weight decay"},
    {"name": "test_fraction", "type": float, "default": 0.2, "help": "fraction of the digits held out"},
]
required = ["epochs", "batch_size", "learning_rate", "hidden", "rng_seed"]


def initialize_parameters(default_model: str = "digits_mlp_default_model.txt") -> dict:
    return candle_initialize_parameters(default_model, file_path, additional_definitions, required)


def build_model(params: dict, features: int, classes: int) -> nn.Module:
    layers: list[nn.Module] = [nn.Flatten()]
    for width in params["hidden"]:
        layers += [nn.Linear(features, width), nn.ReLU(inplace=True)]
        if params["dropout"] > 0:
            layers.append(nn.Dropout(params["dropout"]))
        features = width
    layers.append(nn.Linear(features, classes))
    return nn.Sequential(*layers)


def evaluate(model: nn.Module, loss_fn: nn.Module, x: torch.Tensor, y: torch.Tensor) -> dict:
    model.eval()
    with torch.inference_mode():
        out = model(x)
        logs = {"val_loss": loss_fn(out, y).item(), "val_accuracy": (out.argmax(1) == y).double().mean().item()}
    model.train()
    return logs


def run(params: dict) -> dict:
    from components.inputs.digits_arrays import load_digits_split
    from playground.api import pass_permutation

    seed = params["rng_seed"]
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    x_train, y_train, x_test, y_test = (torch.from_numpy(a) for a in load_digits_split(params["test_fraction"]))
    model = build_model(params, x_train.shape[1], 10)
    optimizer = torch.optim.SGD(model.parameters(), lr=params["learning_rate"], momentum=params["momentum"],
                                weight_decay=params["weight_decay"])
    loss_fn = nn.CrossEntropyLoss()
    batch, steps = params["batch_size"], len(y_train) // params["batch_size"]
    ckpt = CandleCheckpoint(params, model, optimizer, samples_per_epoch=steps * batch)

    history: dict[str, list] = {"loss": [], "val_loss": [], "val_accuracy": []}
    for epoch in range(ckpt.restart(), params["epochs"]):
        # The order playground gives a training pass, so this loop matches experiments/digits_mlp.json.
        order = pass_permutation(len(y_train), seed, epoch)
        total = 0.0
        for step in range(steps):
            index = order[step * batch:(step + 1) * batch]
            loss = loss_fn(model(x_train[index]), y_train[index])
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            total += loss.item()
        logs = {"loss": total / steps, **evaluate(model, loss_fn, x_test, y_test)}
        print(f"epoch {epoch + 1}/{params['epochs']}: " + ", ".join(f"{k} {v:.4f}" for k, v in logs.items()))
        for key, value in logs.items():
            history[key].append(value)
        ckpt.save(epoch, logs)
    ckpt.report_final()
    return history


def main() -> None:
    run(initialize_parameters())


if __name__ == "__main__":
    main()
