"""Determined's `pytorch.DataLoader`: a thin spec of a torch DataLoader (same arguments) that the trainer turns
into playground's seeded, rank-sharded batch stream, so the data position is checkpointed and a resume continues
from the next batch. `batch_size` is per slot (rank); `shuffle` decides whether training data is reshuffled
every epoch (seeded by the experiment's seed); a custom `sampler` or `batch_sampler` is replaced, with a warning,
as for any DataLoader playground reads (playground/data/forms.py)."""
from __future__ import annotations

from typing import Any, Callable

import torch
from torch.utils import data

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
