"""The meter interface (Reset / Add / Compute, as in the original) and the blobs a meter reads.

A meter is a class in a registered module, constructed as `Meter(opts=opts, **meter_kargs)`. `Add(blobs)` is
called after every train step (train meters) or test batch (test meters) with the outputs of that forward pass;
`Compute()` at a record point gives the value over everything added since the last `Reset()`.

Subclass `Meter` and keep your state in `self.total` and `self.count` (tensors of any shape), or define
`state()` / `load_state()` for any named tensors (playground/trainer/meter_state.py), so that the framework can add the
state of all ranks before `Compute` and checkpoint it: a metric is then exact over the whole global batch,
never an average of per-rank averages. Older meters with `sums()`/`load_sums()` keep working. A meter with
neither is computed on each rank alone. The contract, with an example, is in docs/components.md ("Meter").
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Iterator

import torch


class Blobs(Mapping):
    """Outputs of one forward pass by the original blob names: `loss`, `softmax`, `label`, plus `logits`, and the
    values a trial's train_batch / evaluate_batch returned, by their names.

    `softmax` is computed from `logits` on first use only. `samples` is the batch's size.
    """

    def __init__(self, loss: torch.Tensor | None, logits: Any, label: Any, named: dict | None = None,
                 samples: int | None = None) -> None:
        self._blobs: dict[str, Any] = {"loss": loss, "logits": logits, "label": label, **(named or {})}
        self.samples = samples if samples is not None else batch_size_of(label) if label is not None else 1

    def __getitem__(self, name: str) -> Any:
        if name == "softmax" and "softmax" not in self._blobs and self._blobs["logits"] is not None:
            self._blobs["softmax"] = torch.softmax(self._blobs["logits"].float(), dim=-1)
        if self._blobs.get(name) is None:
            given = ", ".join(n for n in self if n != "softmax" or self._blobs["logits"] is not None)
            raise KeyError(f"no blob named {name!r}; this step gives {given}")
        return self._blobs[name]

    def __iter__(self) -> Iterator[str]:
        names = ["loss", "softmax", "logits", "label", *self._blobs]
        return iter([n for n in dict.fromkeys(names) if self._blobs.get(n) is not None or n == "softmax"])

    def __len__(self) -> int:
        return len(list(iter(self)))


class Meter:
    """Base class: a sum and a count, added across ranks before Compute() = total / count."""

    def __init__(self, opts: dict | None = None, blob_name: Any = None) -> None:
        self.opts = opts
        self.blob_name = blob_name
        self.Reset()

    def Reset(self) -> None:
        self.total: torch.Tensor | float = 0.0
        self.count: torch.Tensor | float = 0.0

    def Add(self, blobs: Blobs) -> None:
        raise NotImplementedError

    def Compute(self) -> float | None:
        count = float(self.count)
        return float(self.total) / count if count else None

    def state(self) -> dict[str, torch.Tensor]:
        """`total` and `count`, of any shape, added across ranks (an older subclass's own sums() is kept)."""
        if type(self).sums is not Meter.sums:
            return {"sums": self.sums()}
        return {"total": torch.as_tensor(self.total, dtype=torch.float64).detach().cpu(),
                "count": torch.as_tensor(self.count, dtype=torch.float64).detach().cpu()}

    def load_state(self, state: dict[str, torch.Tensor]) -> None:
        if "sums" in state:
            self.load_sums(state["sums"])
        else:
            self.total, self.count = state["total"].clone(), state["count"].clone()

    def sums(self) -> torch.Tensor:
        """The older interface: the state that adds across ranks, as a float64 vector (scalar total and count)."""
        return torch.stack([torch.as_tensor(self.total, dtype=torch.float64).cpu(),
                            torch.as_tensor(self.count, dtype=torch.float64).cpu()])

    def load_sums(self, sums: torch.Tensor) -> None:
        self.total, self.count = sums[0].clone(), sums[1].clone()


class MeanTrainingLoss(Meter):
    """The mean training loss per sample: what a run with no output.metrics still logs (as train_loss)."""

    higher_is_better = False

    def Add(self, blobs: Blobs) -> None:
        n = batch_size_of(blobs["label"])
        self.total = self.total + blobs["loss"].double() * n
        self.count = self.count + n


def batch_size_of(label: Any) -> int:
    return int(label.shape[0]) if hasattr(label, "shape") and label.dim() > 0 else 1


def samples_in(batch: Any) -> int:
    """Samples in a batch of any structure: the first dimension of its first tensor (0 when it has none)."""
    if isinstance(batch, torch.Tensor):
        return int(batch.shape[0]) if batch.dim() > 0 else 1
    items = batch.values() if isinstance(batch, dict) else batch if isinstance(batch, (list, tuple)) else ()
    for item in items:
        size = samples_in(item)
        if size:
            return size
    return 0
