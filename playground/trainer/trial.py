"""The trial-class contract (Determined's PyTorchTrial shape) and the context a trial receives.

A trial is any class, named in `model.trial_py`, built as `Trial(context)` and defining:

- `build_model() -> nn.Module`
- `build_training_data_loader()`, `build_validation_data_loader()`: data in any form playground/data/forms.py
  accepts (an (x, y) tuple of arrays, a Dataset, a DataLoader, an IterableDataset); the validation data may be None
- optionally `build_optimizer(model) -> optimizer or (optimizer, schedule)` (else the opts' update rule),
  `build_loss() -> loss_fn(output, labels)` (else cross-entropy, for the usual forward and loss),
  `train_batch(batch, epoch_idx, batch_idx) -> {"loss": scalar tensor, ...}` (else the usual forward and loss),
  `evaluate_batch(batch) -> {name: value, ...}` (else the usual forward and loss) and
  `build_hooks() -> [playground.trainer.Hook, ...]`.

`self.model` is set by the trainer: in `train_batch` the network as training calls it (wrapped for data
parallelism on several ranks), in `evaluate_batch` the bare network in eval mode. Subclassing `Trial` is optional;
it documents the contract and keeps the context. This module imports nothing heavy (the registry reads it
while printing --help).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

@dataclass
class TrialContext:
    """What a trial may read: the resolved opts, the hyperparameters (`opts["model_param"]`, the section sweeps
    vary), this process's rank and the world size, and its device."""

    opts: dict
    hparams: dict
    rank: int
    world_size: int
    device: Any

    def get_hparam(self, name: str) -> Any:
        """One hyperparameter, with an error naming the opts key when it is missing."""
        if name not in self.hparams:
            raise KeyError(f"opts.model_param.{name}: the trial reads it, but the opts do not set it")
        return self.hparams[name]

    def get_per_slot_batch_size(self) -> int:
        return int(self.opts["epoch_iter"]["batch_per_device"])


class Trial:
    """Optional base class of a trial: keeps `self.context` and `self.model`."""

    def __init__(self, context: TrialContext) -> None:
        self.context = context
        self.model: Any = None

    def build_model(self) -> Any:
        raise NotImplementedError

    def build_training_data_loader(self) -> Any:
        raise NotImplementedError

    def build_validation_data_loader(self) -> Any:
        raise NotImplementedError


def trial_for_checks(trial_class: type, opts: dict) -> Any:
    """A trial made in the launching process, with rank 0's context on the CPU, for checks before launch."""
    import torch
    return trial_class(TrialContext(opts=opts, hparams=opts["model_param"], rank=0, world_size=1,
                                    device=torch.device("cpu")))
