"""This rank's and this loader worker's share of an iterable dataset, read in the dataset's own order.

Item i of the dataset's sequence belongs to rank i % world_size, so 2 ranks x B read the items of 1 rank x 2B.
Within a rank, whole batches go round-robin to the loader workers (batch b to worker b % workers), which is the
order in which the DataLoader collects them: any worker count gives the batches of a single process. Training
streams repeat the dataset without end (each pass iterates it again); test streams read it once, up to a limit.

Resume counts instead of seeking: a stream restarted at batch n iterates again and skips the n x B items of
this rank already consumed, which continues exactly only if the dataset yields the same sequence again (a
map-style dataset resumes exactly always).
"""
from __future__ import annotations

import itertools
from typing import Any, Iterator

from torch.utils.data import IterableDataset, get_worker_info


class RankShard(IterableDataset):
    def __init__(self, dataset: Any, world_size: int, rank: int, batch: int, endless: bool,
                 limit: int | None = None) -> None:
        self.dataset, self.world_size, self.rank, self.batch = dataset, world_size, rank, batch
        self.endless, self.limit = endless, limit   # limit: items of the whole dataset read (test: num_test_sample)
        self.start_batch = 0

    def __len__(self) -> int:
        """Items of this rank in one pass (what the DataLoader divides into batches)."""
        total = len(self.dataset) if self.limit is None else min(self.limit, _length_or(self.dataset, self.limit))
        return max(0, -(-(total - self.rank) // self.world_size))

    def __iter__(self) -> Iterator[Any]:
        info = get_worker_info()
        workers, worker = (info.num_workers, info.id) if info is not None else (1, 0)
        skip = self.start_batch * self.batch
        for k, item in enumerate(self._rank_items()):
            if k >= skip and ((k - skip) // self.batch) % workers == worker:
                yield item

    def _rank_items(self) -> Iterator[Any]:
        """This rank's items, in order, across passes when endless."""
        while True:
            seen = 0
            items = iter(self.dataset) if self.limit is None else itertools.islice(self.dataset, self.limit)
            for position, item in enumerate(items):
                seen += 1
                if position % self.world_size == self.rank:
                    yield item
            if not self.endless:
                return
            if seen == 0:
                raise ValueError("the iterable training dataset yielded no items")


def _length_or(dataset: Any, default: int) -> int:
    try:
        return len(dataset)
    except TypeError:
        return default
