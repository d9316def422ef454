"""The hand-written loop's input: a torch DataLoader over LmdbImageDataset.get_samples, built the way a plain
PyTorch script builds one. gpu_train.py's plain arm trains on it; data_pipeline.py's p measures its CPU per image
beside playground's loader (c), on the same dataset.

Whole batches are fetched through the dataset's `__getitems__` (its `get_samples`) from a batch_sampler of
(pass, index) keys, each pass a torch.randperm seeded by its number; the dataset's collate_fn without the batch
ring (each batch in fresh shared memory, handed over by file descriptor: torch's default); prefetch factor 4,
persistent workers, the default start method. The sampler is endless, as a training loop's is: the workers keep
decoding while the loop trains. Given `batches`, it holds only that many (the plain arm's sampler before
2026-12-05: once they were decoded the workers went idle, so a short timed window trained on batches decoded
during the warm-up, with every core free for the training process).
"""
from __future__ import annotations

import itertools
from typing import Any, Iterator

import torch
from torch.utils.data import DataLoader, Dataset

PLAIN_PREFETCH = 4


class WholeBatches(Dataset):
    """Key (pass, index); the loader fetches a whole batch through the dataset's get_samples."""

    def __init__(self, data: Any) -> None:
        self.data = data

    def __len__(self) -> int:
        return len(self.data)

    def __getitems__(self, keys: list[tuple[int, int]]) -> Any:
        return self.data.get_samples(keys)


class PassBatches:
    """Batches of `batch` keys over passes of `size` samples, pass p in the order torch.randperm(size) seeded by p;
    endless, or the first `limit` batches."""

    def __init__(self, size: int, batch: int, limit: int | None = None) -> None:
        self.size, self.batch, self.limit = size, batch, limit

    def __iter__(self) -> Iterator[list[tuple[int, int]]]:
        keys = ((p, i) for p in itertools.count()
                for i in torch.randperm(self.size, generator=torch.Generator().manual_seed(p)).tolist())
        count = itertools.count() if self.limit is None else range(self.limit)
        for _ in count:
            yield list(itertools.islice(keys, self.batch))


def plain_loader(data: Any, batch: int, workers: int, pin_memory: bool, batches: int | None = None,
                 prefetch: int = PLAIN_PREFETCH) -> DataLoader:
    """The loader of (uint8 NxHxWxC images, labels, skipped) batches; endless unless `batches` is given."""
    return DataLoader(WholeBatches(data), batch_sampler=PassBatches(len(data), batch, batches),
                      collate_fn=data.collate_fn, num_workers=workers, pin_memory=pin_memory,
                      persistent_workers=workers > 0, prefetch_factor=prefetch if workers else None)
