"""Determined's PyTorchTrial base class (0.2x to 0.38) and its training lengths, `Batch` and `Epoch`.

A trial builds its models, optimizers and schedulers in `__init__(self, context)` (0.38's examples also take
`hparams`: `__init__(self, context, hparams)`), gives its data in `build_training_data_loader` /
`build_validation_data_loader`, and defines `train_batch(batch, epoch_idx, batch_idx)` and either
`evaluate_batch(batch[, batch_idx])` or `evaluate_full_dataset(data_loader)`. Subclasses of this class, and
classes that only have its methods, both run (fit.py).
"""
from __future__ import annotations

import inspect
from typing import Any


class PyTorchTrial:
    """`determined.pytorch.PyTorchTrial`."""

    def __init__(self, context: Any) -> None:   # noqa: B027 (subclasses define it)
        pass

    def train_batch(self, batch: Any, epoch_idx: int, batch_idx: int) -> Any:
        raise NotImplementedError(f"{type(self).__name__} must define train_batch(batch, epoch_idx, batch_idx)")

    def build_training_data_loader(self) -> Any:
        raise NotImplementedError(f"{type(self).__name__} must define build_training_data_loader()")

    def build_validation_data_loader(self) -> Any:
        raise NotImplementedError(f"{type(self).__name__} must define build_validation_data_loader()")

    def build_callbacks(self) -> dict:
        return {}

    def evaluate_batch(self, batch: Any, batch_idx: int) -> dict:
        raise NotImplementedError(f"{type(self).__name__} must define evaluate_batch or evaluate_full_dataset")

    def evaluate_full_dataset(self, data_loader: Any) -> dict:
        raise NotImplementedError(f"{type(self).__name__} must define evaluate_batch or evaluate_full_dataset")

    def get_batch_length(self, batch: Any) -> int:
        from playground.trainer.meters import samples_in
        return samples_in(batch)


def evaluates_full_dataset(trial: Any) -> bool:
    """Whether validation is the trial's evaluate_full_dataset (it defines it, and no evaluate_batch of its own)."""
    cls = type(trial)
    own_full = callable(getattr(cls, "evaluate_full_dataset", None)) and \
        getattr(cls, "evaluate_full_dataset") is not PyTorchTrial.evaluate_full_dataset
    own_batch = callable(getattr(cls, "evaluate_batch", None)) and \
        getattr(cls, "evaluate_batch") is not PyTorchTrial.evaluate_batch
    if not own_full and not own_batch:
        raise TypeError(f"{cls.__name__} defines neither evaluate_batch nor evaluate_full_dataset")
    return own_full and not own_batch


def takes_batch_index(trial: Any) -> bool:
    """Whether the trial's evaluate_batch takes (batch, batch_idx), the 0.2x+ form, or only (batch)."""
    try:
        params = [p for p in inspect.signature(trial.evaluate_batch).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        return True
    return len(params) >= 2


class TrainUnit:
    """A training length or period: `Batch(n)` or `Epoch(n)` (0.38's pytorch.Batch / pytorch.Epoch)."""

    unit = ""

    def __init__(self, value: int) -> None:
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{type(self).__name__}({value!r}): the length must be a positive integer")
        self.value = value

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.value})"

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other) and self.value == other.value

    def __hash__(self) -> int:
        return hash((type(self).__name__, self.value))

    @staticmethod
    def from_config(length: Any, global_batch: int) -> "TrainUnit | None":
        """A length as the experiment configuration writes it: {"batches"|"epochs"|"records": n} (or None)."""
        if not isinstance(length, dict) or len(length) != 1:
            return None
        (unit, value), = length.items()
        if unit == "batches":
            return Batch(int(value))
        if unit == "epochs":
            return Epoch(int(value))
        if unit == "records":
            return Batch(max(1, int(value) // max(1, global_batch)))
        raise ValueError(f"a length in {unit!r}: use batches, records or epochs")


class Batch(TrainUnit):
    unit = "batches"


class Epoch(TrainUnit):
    unit = "epochs"
