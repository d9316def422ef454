"""Determined's PyTorchTrial base class (0.2x to 0.38) and its training lengths, `Batch` and `Epoch`.

A trial builds its models, optimizers and schedulers in `__init__(self, context)` (0.38's examples also take
`hparams`: `__init__(self, context, hparams)`), gives its data in `build_training_data_loader` /
`build_validation_data_loader`, and defines `train_batch(batch, epoch_idx, batch_idx)` and either
`evaluate_batch(batch[, batch_idx])` or `evaluate_full_dataset(data_loader)`. Subclasses of this class, and
classes that only have its methods, both run (fit.py).
"""
from __future__ import annotations

import inspect
import sys
from collections.abc import Container
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
    """A training length or period: `Batch(n)` or `Epoch(n)` (0.38's pytorch.Batch / pytorch.Epoch).

    As a period (validation, checkpoint) the value is a number n (every n-th batch or epoch; below 1: every one,
    as Determined's `_divides`) or a collection of them, a schedule (`Batch([1, 5, 10])`: after those batches).
    A length (max_length) is a positive whole number (`length()` says so)."""

    unit = ""

    def __init__(self, value: int | Container[int]) -> None:
        if isinstance(value, bool) or not (isinstance(value, int) or (
                isinstance(value, Container) and not isinstance(value, (str, bytes)))):
            raise ValueError(f"{type(self).__name__}({value!r}): a number of {self.unit} or a collection of them "
                             "(a schedule)")
        self.value = value

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.value!r})"

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other) and self.value == other.value

    def __hash__(self) -> int:
        return hash((type(self).__name__, self.value if isinstance(self.value, int) else None))

    def should_stop(self, step: int) -> bool:
        """Whether the period ends after `step` (1-based) batches or epochs: n divides it (n < 1: always), or the
        schedule holds it. Determined's name: its boundaries stop training there to validate or checkpoint."""
        if isinstance(self.value, int):
            return self.value < 1 or (step != 0 and step % self.value == 0)
        return step in self.value

    def is_never(self) -> bool:
        """A period that never ends: a configuration's 0 (Determined reads `{batches: 0}` as sys.maxsize)."""
        return isinstance(self.value, int) and self.value >= sys.maxsize

    def length(self) -> int:
        """The value as a training length (max_length): a positive whole number, else ValueError."""
        if not isinstance(self.value, int) or self.value < 1:
            raise ValueError(f"max_length {self!r}: a training length is a positive whole number of {self.unit}")
        return self.value

    @staticmethod
    def from_config(length: Any, global_batch: int) -> "TrainUnit | None":
        """A length as the experiment configuration writes it: {"batches"|"epochs"|"records": n} (or None).
        A value below 1 never ends (a period that never comes), as Determined's TrainUnit._from_values."""
        if not isinstance(length, dict) or len(length) != 1:
            return None
        (unit, value), = length.items()
        value = int(value)
        value = value if value >= 1 else sys.maxsize
        if unit == "batches":
            return Batch(value)
        if unit == "epochs":
            return Epoch(value)
        if unit == "records":
            return Batch(max(1, value // max(1, global_batch)))
        raise ValueError(f"a length in {unit!r}: use batches, records or epochs")


class Batch(TrainUnit):
    unit = "batches"


class Epoch(TrainUnit):
    unit = "epochs"
