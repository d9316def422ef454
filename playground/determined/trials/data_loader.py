"""Determined's `pytorch.DataLoader`: a thin spec of a torch DataLoader (same arguments) that the trainer turns
into playground's seeded, rank-sharded batch stream, so the data position is checkpointed and a resume continues
from the next batch. `batch_size` is per slot (rank); `shuffle` decides whether training data is reshuffled
every epoch (seeded by the experiment's seed); a custom `sampler` or `batch_sampler` is replaced, with a warning,
as for any DataLoader playground reads (playground/data/forms.py).

The training batches (`SlotBatches`) are those Determined's harness reads, and an epoch is the chief's
`len(loader)`: Determined cuts each pass over the N records (reshuffled per pass when the loader shuffles) into
per-slot batches of b, the last one short (N mod b) unless the loader has drop_last; repeats the passes without
end (RepeatBatchSampler); and deals the batches to the W ranks in turn (DistributedBatchSampler): rank r trains on
batches r, r + W, r + 2W... of that endless sequence. So an epoch is ceil(B / W) steps for B = ceil(N / b)
batches a pass (N // b with drop_last): 10 records in batches of 4 are epochs of 3 steps (4, 4 and 2 records),
not the 2 of an opts run's drop-last epoch; where W does not divide B an epoch ends inside a pass, as there. Each
pass is the permutation every playground stream uses, so where b x W divides N these are exactly the batches of
the stream's TrainSampler; step i of rank r is a pure function of (seed, i, r), so a resume reads nothing twice.
A trial whose epoch is 0.2x's `records_per_epoch` keeps the stream's whole global batches (loop.py).
"""
from __future__ import annotations

import math
from typing import Any, Callable, Iterator

import torch
from torch.utils import data

from playground.data.batch_stream import Key, TrainSampler
from playground.data.batch_stream import to_device  # noqa: F401  (determined.pytorch.to_device)

TorchData = Any   # Union[Dict[str, torch.Tensor], Sequence[torch.Tensor], torch.Tensor] in Determined


def data_length(data: Any) -> int:
    """Samples in a batch of any structure (Determined's `pytorch.data_length`)."""
    from playground.trainer.meters import samples_in
    return samples_in(data)


class DataLoader:
    """`determined.pytorch.DataLoader(dataset, batch_size=1, shuffle=False, ...)`: torch's signature."""

    def __init__(self, dataset: data.Dataset, batch_size: int | None = 1, shuffle: bool = False,
                 sampler: data.Sampler | None = None, batch_sampler: data.Sampler | None = None,
                 num_workers: int = 0, collate_fn: Callable | None = None, pin_memory: bool = False,
                 drop_last: bool = False, timeout: float = 0, worker_init_fn: Callable | None = None,
                 multiprocessing_context: Any = None, generator: Any = None, *,
                 prefetch_factor: int | None = None, persistent_workers: bool = False) -> None:
        if isinstance(dataset, data.IterableDataset):
            raise ValueError("IterableDatasets are not supported through det.pytorch.DataLoader(); return a torch "
                             "DataLoader of it from build_*_data_loader instead")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with batch_size, shuffle, sampler, "
                                 "and drop_last")
            batch_size = getattr(batch_sampler, "batch_size", None)
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_size is None:
            raise ValueError("batch_size=None (no automatic batching) is not supported: give a batch size")
        self.dataset, self.batch_size, self.shuffle = dataset, int(batch_size), bool(shuffle)
        self.sampler, self.batch_sampler = sampler, batch_sampler
        self.num_workers, self.collate_fn, self.pin_memory = num_workers, collate_fn, pin_memory
        self.drop_last, self.timeout, self.worker_init_fn = drop_last, timeout, worker_init_fn
        self.multiprocessing_context, self.generator = multiprocessing_context, generator
        self.prefetch_factor, self.persistent_workers = prefetch_factor, persistent_workers

    def get_data_loader(self, repeat: bool = False, skip: int = 0, num_replicas: int = 1,
                        rank: int = 0) -> torch.utils.data.DataLoader:
        """A torch DataLoader of this rank's shard (every num_replicas-th sample from `rank`), in order."""
        indices = list(range(rank, len(self.dataset), num_replicas))
        subset = data.Subset(self.dataset, indices) if num_replicas > 1 else self.dataset
        return data.DataLoader(subset, batch_size=self.batch_size, shuffle=False, num_workers=self.num_workers,
                               collate_fn=self.collate_fn, pin_memory=self.pin_memory, drop_last=self.drop_last)

    def torch_loader(self) -> torch.utils.data.DataLoader:
        """The whole dataset as a torch DataLoader (what playground's batch stream takes over)."""
        return self.get_data_loader()

    def __iter__(self) -> Any:
        return iter(self.get_data_loader())

    def __len__(self) -> int:
        return len(self.get_data_loader())


def batches_per_pass(records: int, batch: int, drop_last: bool) -> int:
    return records // batch if drop_last else math.ceil(records / batch)


def epoch_length(records: int, batch: int, ranks: int, drop_last: bool) -> int:
    """Steps in an epoch: the chief's len(loader) in Determined's harness (0 when the data makes no batch)."""
    return math.ceil(batches_per_pass(records, batch, drop_last) / ranks)


class SlotBatches(TrainSampler):
    """This rank's training batches of (pass, index) keys, from step `start_batch` on, without end."""

    def __init__(self, records: int, batch: int, ranks: int, rank: int, seed: int, shuffle: bool,
                 drop_last: bool) -> None:
        super().__init__(records, batch, ranks, rank, seed, None, shuffle)
        self.per_pass = batches_per_pass(records, batch, drop_last)
        self.epoch_length = epoch_length(records, batch, ranks, drop_last)

    def keys(self, global_batch: int) -> list[Key]:
        data_pass, slot_batch = divmod(global_batch * self.world_size + self.rank, self.per_pass)
        start = slot_batch * self.batch
        return [(data_pass, i) for i in self._order(data_pass)[start:start + self.batch]]

    def __iter__(self) -> Iterator[list[Key]]:     # type: ignore[override]  (whole batches: a batch sampler)
        step = self.start_batch
        while True:
            yield self.keys(step)
            step += 1
