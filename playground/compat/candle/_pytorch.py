"""candle_lib's PyTorch helpers: seeds, threads, losses, activations, optimizers, initializers by name.

Names candle_lib does not map raise an Exception naming the name and those it knows (candle_lib returned None
for an unknown activation, optimizer or initializer, which fails later and far from the cause).
"""
from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F

from playground.compat.candle._helpers import set_seed


def set_pytorch_threads() -> None:
    """Kept for compatibility: does nothing, as in candle_lib."""


def set_pytorch_seed(seed: int) -> None:
    set_seed(seed)
    torch.manual_seed(int(seed))


def get_pytorch_function(name: str) -> torch.nn.Module:
    losses = {"mse": torch.nn.MSELoss, "binary_crossentropy": torch.nn.BCELoss,
              "categorical_crossentropy": torch.nn.CrossEntropyLoss, "smoothL1": torch.nn.SmoothL1Loss}
    return _known("pytorch function", name, losses)()


def build_pytorch_activation(activation: str) -> torch.nn.Module:
    return _known("activation", activation, {"relu": torch.nn.ReLU, "sigmoid": torch.nn.Sigmoid,
                                             "tanh": torch.nn.Tanh})()


def build_pytorch_optimizer(model: torch.nn.Module, optimizer: str, lr: float, kerasDefaults: dict,
                            trainable_only: bool = True) -> torch.optim.Optimizer:
    params = [p for p in model.parameters() if p.requires_grad or not trainable_only]
    d = kerasDefaults
    builders = {
        # candle_lib names torch.optim.GradientDescentMomentum here, which torch never had; SGD is what it meant
        "sgd": lambda: torch.optim.SGD(params, lr=lr, momentum=d["momentum_sgd"], nesterov=d["nesterov_sgd"]),
        "rmsprop": lambda: torch.optim.RMSprop(params, lr=lr, alpha=d["rho"], eps=d["epsilon"]),
        "adagrad": lambda: torch.optim.Adagrad(params, lr=lr, eps=d["epsilon"]),
        "adadelta": lambda: torch.optim.Adadelta(params, eps=d["epsilon"], rho=d["rho"]),
        "adam": lambda: torch.optim.Adam(params, lr=lr, betas=(d["beta_1"], d["beta_2"]), eps=d["epsilon"]),
    }
    return _known("optimizer", optimizer, builders)()


def pytorch_initialize(weights: torch.Tensor, initializer: str, kerasDefaults: dict, seed: Any = None,
                       constant: float = 0.0) -> torch.Tensor:
    d, init = kerasDefaults, torch.nn.init
    builders = {
        "constant": lambda: init.constant_(weights, val=constant),
        "uniform": lambda: init.uniform_(weights, a=d["minval_uniform"], b=d["maxval_uniform"]),
        "normal": lambda: init.normal_(weights, mean=d["mean_normal"], std=d["stddev_normal"]),
        "glorot_normal": lambda: init.xavier_normal_(weights),
        "glorot_uniform": lambda: init.xavier_uniform_(weights),
        "he_normal": lambda: init.kaiming_uniform_(weights),   # candle_lib's choice, kept
    }
    return _known("initializer", initializer, builders)()


def pytorch_xent(y_true: torch.Tensor, y_pred: torch.Tensor) -> torch.Tensor:
    return F.cross_entropy(y_pred, y_true)


def pytorch_mse(y_true: torch.Tensor, y_pred: torch.Tensor) -> torch.Tensor:
    return F.mse_loss(y_pred, y_true)


def _known(kind: str, name: str, table: dict) -> Any:
    if name not in table:
        raise Exception(f'No pytorch {kind} found for "{name}" (known: {", ".join(table)})')
    return table[name]


# The names Benchmarks' own `common/` package gives the same functions when torch is imported (P1B2's PyTorch
# benchmark calls these).
build_activation = build_pytorch_activation
build_optimizer = build_pytorch_optimizer
get_function = get_pytorch_function
initialize = pytorch_initialize
mse = pytorch_mse
xent = pytorch_xent
