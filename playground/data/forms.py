"""The forms of data an input component (or trial) may give, adapted to what the batch stream reads.

- `(x, y)` of numpy arrays or tensors, x possibly a dict of named inputs: `ArrayDataset`, one sample per row.
- a map-style dataset (`__len__` and `__getitem__`): used as it is (exact resume, any world size).
- a `DataLoader`: its dataset (adapted the same way), collate function and batch size are taken over by the
  seeded, rank-sharded stream; its own sampler or shuffle is replaced, with a warning for a custom sampler.
- an `IterableDataset`: `IterableSource`, read in order and sharded across ranks and loader workers; resume
  skips the samples already consumed, which is exact only when the dataset yields the same sequence again.

Anything else raises `DataFormError` naming what was given and what would be accepted.
"""
from __future__ import annotations

import logging
from typing import Any, Callable

import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset, IterableDataset, RandomSampler, SequentialSampler

from playground.processes.exit_codes import UserError

log = logging.getLogger("playground")

ACCEPTED = ("an (inputs, labels) tuple of numpy arrays or tensors (inputs may be a dict of named arrays), a map-style "
            "Dataset (with __len__ and __getitem__), a torch DataLoader, or an IterableDataset")


class DataFormError(UserError, TypeError):
    """The data is in no form the batch stream can read; the message says which forms are accepted."""


class ArrayDataset(Dataset):
    """Rows of `inputs` (an array, or a dict of arrays) with the rows of `labels`, as tensors."""

    def __init__(self, inputs: Any, labels: Any) -> None:
        self.inputs = {k: _tensor(v) for k, v in inputs.items()} if isinstance(inputs, dict) else _tensor(inputs)
        self.labels = _tensor(labels, is_label=True)
        lengths = {len(v) for v in (self.inputs.values() if isinstance(self.inputs, dict) else [self.inputs])}
        if lengths != {len(self.labels)}:
            raise DataFormError(f"the inputs have {sorted(lengths)} rows but the labels {len(self.labels)}: an "
                                "(inputs, labels) tuple needs one label per row")
        if not isinstance(self.inputs, dict):
            self.sample_shape = tuple(self.inputs.shape[1:])

    def __len__(self) -> int:
        return len(self.labels)

    def __getitem__(self, index: int) -> tuple[Any, torch.Tensor]:
        if isinstance(self.inputs, dict):
            return {k: v[index] for k, v in self.inputs.items()}, self.labels[index]
        return self.inputs[index], self.labels[index]


class IterableSource:
    """An iterable dataset to be read in order: marks the stream to shard it by position, not by index."""

    def __init__(self, dataset: IterableDataset, collate_fn: Callable | None = None) -> None:
        self.dataset, self.collate_fn = dataset, collate_fn

    def __len__(self) -> int:
        try:
            return len(self.dataset)
        except TypeError:
            raise TypeError("an iterable dataset without __len__ has no epoch length: set "
                            "epoch_iter.num_train_sample_per_epoch (and num_test_sample for test data)") from None


class _LoaderDataset(Dataset):
    """A DataLoader's map-style dataset with the loader's collate function, which the stream then uses, and its
    batch size (for a caller that sizes the run by it, such as a trial class)."""

    def __init__(self, dataset: Any, collate_fn: Callable, batch_size: int | None = None) -> None:
        self.dataset, self.collate_fn, self.loader_batch_size = dataset, collate_fn, batch_size
        shape = getattr(dataset, "sample_shape", None)
        if shape is not None:
            self.sample_shape = shape

    def __len__(self) -> int:
        return len(self.dataset)

    def __getitem__(self, index: int) -> Any:
        return self.dataset[index]

    def __getattr__(self, name: str) -> Any:   # get_sample, num_classes ... of the wrapped dataset
        if name in ("dataset", "collate_fn", "loader_batch_size"):
            raise AttributeError(name)
        return getattr(self.dataset, name)


def as_stream_source(data: Any, what: str, batch_per_device: int | None = None) -> Any:
    """`data` in a form the batch stream reads; raises DataFormError. `what` names it in messages."""
    if data is None:
        return None
    if isinstance(data, DataLoader):
        return _from_loader(data, what, batch_per_device)
    if isinstance(data, IterableDataset):
        return IterableSource(data)
    if isinstance(data, (tuple, list)) and len(data) == 2 and _is_array_like(data[1]) and (
            _is_array_like(data[0]) or (isinstance(data[0], dict) and data[0]
                                        and all(_is_array_like(v) for v in data[0].values()))):
        return ArrayDataset(*data)
    if hasattr(data, "__getitem__") and hasattr(data, "__len__") and not isinstance(data, (tuple, list, dict, str)):
        return data
    raise DataFormError(f"the {what} data is a {type(data).__name__}{_shape_hint(data)}; expected {ACCEPTED}")


def _from_loader(loader: DataLoader, what: str, batch_per_device: int | None) -> Any:
    if not isinstance(loader.sampler, (RandomSampler, SequentialSampler)) or loader.batch_sampler is None:
        log.warning("the %s DataLoader has its own sampler (%s): it is replaced by the seeded, rank-sharded order "
                    "of the batch stream", what, type(loader.sampler).__name__)
    if batch_per_device and loader.batch_size and loader.batch_size != batch_per_device:
        log.warning("the %s DataLoader's batch size is %d; epoch_iter.batch_per_device (%d) is used", what,
                    loader.batch_size, batch_per_device)
    inner = as_stream_source(loader.dataset, what)
    if isinstance(inner, IterableSource):
        return IterableSource(inner.dataset, loader.collate_fn)
    return _LoaderDataset(inner, loader.collate_fn, loader.batch_size)


def _is_array_like(value: Any) -> bool:
    return isinstance(value, (np.ndarray, torch.Tensor)) and value.ndim >= 1


def _tensor(value: Any, is_label: bool = False) -> torch.Tensor:
    """float64 becomes float32 (the networks' type); integer labels become int64 (what the losses index with)."""
    tensor = torch.from_numpy(np.ascontiguousarray(value)) if isinstance(value, np.ndarray) else value
    if tensor.dtype == torch.float64:
        tensor = tensor.float()
    elif is_label and not tensor.is_floating_point() and tensor.dtype != torch.bool:
        tensor = tensor.long()
    return tensor


def _shape_hint(data: Any) -> str:
    if isinstance(data, (tuple, list)):
        return f" of {len(data)} items ({', '.join(type(d).__name__ for d in data[:4])})"
    return ""
