"""`determined.pytorch.samplers`: Determined's building blocks for a torch DataLoader that a trial orders, shards
and resumes itself (with `context.experimental.disable_dataset_reproducibility_checks()`), written here with
the behaviour Determined documents for each:

- ReproducibleShuffleSampler / ReproducibleShuffleBatchSampler(sampler, seed): each pass a new permutation of
  the wrapped sampler's items from one NumPy RandomState seeded once (so pass k is the same in every run).
  Shuffle before skipping and before repeating.
- RepeatSampler / RepeatBatchSampler(sampler): the wrapped sampler's passes one after another, forever; its
  length is one pass's.
- DistributedSampler(sampler, num_workers, rank) / DistributedBatchSampler(batch_sampler, num_workers, rank):
  every num_workers-th item from position `rank` (this shard); the length is this shard's.
- SkipSampler / SkipBatchSampler(sampler, skip): the wrapped sampler without its first `skip` items (a resumed
  trial skips `context.get_initial_batch()` batches); the length is the wrapped sampler's. Skip before
  repeating, or every pass is cut.
"""
from __future__ import annotations

from typing import Any, Iterator

import numpy as np
import torch


class ReproducibleShuffleSampler(torch.utils.data.Sampler):
    def __init__(self, sampler: Any, seed: int) -> None:
        self._sampler = sampler
        self._rng = np.random.RandomState(seed)

    def __iter__(self) -> Iterator:
        items = list(self._sampler)
        order = self._rng.permutation(len(items))
        return iter([items[i] for i in order])

    def __len__(self) -> int:
        return len(self._sampler)


class ReproducibleShuffleBatchSampler(ReproducibleShuffleSampler):
    """The batches of a batch sampler in a reproducible shuffled order (their contents unchanged)."""

    def __init__(self, batch_sampler: Any, seed: int) -> None:
        super().__init__(batch_sampler, seed)
        self.batch_sampler = batch_sampler


class RepeatSampler(torch.utils.data.Sampler):
    def __init__(self, sampler: Any) -> None:
        self._sampler = sampler

    def __iter__(self) -> Iterator:
        while True:
            yield from self._sampler

    def __len__(self) -> int:
        return len(self._sampler)


class RepeatBatchSampler(RepeatSampler):
    def __init__(self, batch_sampler: Any) -> None:
        super().__init__(batch_sampler)
        self.batch_sampler = batch_sampler


class DistributedSampler(torch.utils.data.Sampler):
    def __init__(self, sampler: Any, num_workers: int, rank: int) -> None:
        if num_workers < 1 or not 0 <= rank < num_workers:
            raise ValueError(f"DistributedSampler: rank {rank} of {num_workers} workers: need 0 <= rank < "
                             "num_workers and num_workers >= 1")
        self._sampler, self._num_workers, self._rank = sampler, num_workers, rank

    def __iter__(self) -> Iterator:
        for position, item in enumerate(self._sampler):
            if position % self._num_workers == self._rank:
                yield item

    def __len__(self) -> int:
        total = len(self._sampler)
        return total // self._num_workers + (1 if total % self._num_workers > self._rank else 0)


class DistributedBatchSampler(DistributedSampler):
    def __init__(self, batch_sampler: Any, num_workers: int, rank: int) -> None:
        super().__init__(batch_sampler, num_workers, rank)
        self.batch_sampler, self.num_workers, self.rank = batch_sampler, num_workers, rank


class SkipSampler(torch.utils.data.Sampler):
    def __init__(self, sampler: Any, skip: int) -> None:
        self._sampler, self._skip = sampler, int(skip)

    def __iter__(self) -> Iterator:
        items = iter(self._sampler)
        for _ in range(self._skip):
            if next(items, _END) is _END:
                return
        yield from items

    def __len__(self) -> int:
        return len(self._sampler)


class SkipBatchSampler(SkipSampler):
    def __init__(self, batch_sampler: Any, skip: int) -> None:
        super().__init__(batch_sampler, skip)
        self.batch_sampler, self.skip = batch_sampler, int(skip)


_END = object()

__all__ = ["DistributedBatchSampler", "DistributedSampler", "RepeatBatchSampler", "RepeatSampler",
           "ReproducibleShuffleBatchSampler", "ReproducibleShuffleSampler", "SkipBatchSampler", "SkipSampler"]
