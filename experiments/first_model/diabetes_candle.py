"""The diabetes regression of diabetes_mlp.json as a CANDLE benchmark script: `initialize_parameters()` reads
this folder's diabetes_default_model.txt, `run(params)` trains with a hand-written loop and returns the history.
playground's CANDLE checkpoint helper makes it resume exactly after a kill. Run it from the repository root:

    playground candle experiments/first_model/diabetes_candle.py --set epochs=10 --run-dir runs/diabetes-candle

or alone: `python experiments/first_model/diabetes_candle.py`.
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
    {"name": "weight_decay", "type": float, "help": "AdamW weight decay"},
    {"name": "test_fraction", "type": float, "default": 0.2, "help": "fraction of the patients held out"},
]
required = ["epochs", "batch_size", "learning_rate", "hidden", "rng_seed"]


def initialize_parameters(default_model: str = "diabetes_default_model.txt") -> dict:
    return candle_initialize_parameters(default_model, file_path, additional_definitions, required)


def build_model(params: dict, features: int) -> nn.Module:
    layers: list[nn.Module] = [nn.Flatten()]
    for width in params["hidden"]:
        layers += [nn.Linear(features, width), nn.ReLU()]
        features = width
    layers += [nn.Linear(features, 1), nn.Flatten(start_dim=0)]      # one value per sample: shape (batch,)
    return nn.Sequential(*layers)


def evaluate(model: nn.Module, x: torch.Tensor, y: torch.Tensor) -> dict:
    """Mean squared error and R² over the whole test set."""
    model.eval()
    with torch.inference_mode():
        mse = ((model(x) - y) ** 2).double().mean().item()
    model.train()
    return {"val_loss": mse, "val_r2": 1.0 - mse / y.double().var(unbiased=False).item()}


def run(params: dict) -> dict:
    from experiments.first_model.diabetes_input import load_diabetes_split
    from playground.api import pass_permutation

    seed = params["rng_seed"]
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    x_train, y_train, x_test, y_test = (torch.from_numpy(a) for a in load_diabetes_split(params["test_fraction"]))
    model = build_model(params, x_train.shape[1])
    optimizer = torch.optim.AdamW(model.parameters(), lr=params["learning_rate"], weight_decay=params["weight_decay"])
    loss_fn = nn.MSELoss()
    batch, steps = params["batch_size"], len(y_train) // params["batch_size"]
    ckpt = CandleCheckpoint(params, model, optimizer, samples_per_epoch=steps * batch)

    history: dict[str, list] = {"loss": [], "val_loss": [], "val_r2": []}
    for epoch in range(ckpt.restart(), params["epochs"]):
        order = pass_permutation(len(y_train), seed, epoch)     # the order playground gives a training pass
        total = 0.0
        for step in range(steps):
            index = order[step * batch:(step + 1) * batch]
            loss = loss_fn(model(x_train[index]), y_train[index])
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            total += loss.item()
        logs = {"loss": total / steps, **evaluate(model, x_test, y_test)}
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
