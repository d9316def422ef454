"""This rank's batches: an endless, resumable training stream and a test stream, both over DataLoaders.

Training order is a pure function of (seed, global batch number): pass p over the N training samples is the
permutation `randperm(N)` seeded by (seed, p); global batch i holds stream positions [i*G, (i+1)*G) for a
global batch G, and rank r takes the r-th slice of B = G / world_size. So 2 ranks x B see exactly the samples
of 1 rank x 2B, a resumed run starts at batch i without decoding anything twice, and every rank runs the same
number of steps. With `num_train_sample_per_epoch: 0` an epoch is one pass (drop-last) and each epoch starts a
new pass; otherwise the stream runs across pass boundaries.

Each sample is requested as (pass, index): a dataset that defines `get_sample(index, epoch)` receives the pass
number so its random augmentation can depend only on (seed, pass, index); others get `dataset[index]`.
Test samples are sharded without padding (rank r takes indices r, r+W, ...), so each is counted once.
The forms of data accepted (array tuples, DataLoaders, iterable datasets) are adapted in forms.py; an
iterable dataset is read in its own order and sharded by position (iterable_shards.py).
"""
from __future__ import annotations

import atexit
import logging
import weakref
from typing import Any, Callable, Iterator

import torch
from torch.utils.data import DataLoader, Dataset, Sampler
from torch.utils.data.dataloader import default_collate

from playground.data.worker_errors import worker_error
from playground.data.forms import IterableSource
from playground.data.iterable_shards import RankShard
from playground.distribution.run_context import RunContext
from playground.processes.supervisor import ignore_stop_signals

Key = tuple[int, int]   # (data pass, sample index)
PREFETCH_FACTOR = 4     # batches each loader worker prepares ahead of the loop


def pass_permutation(num_samples: int, seed: int, data_pass: int) -> torch.Tensor:
    generator = torch.Generator()
    generator.manual_seed((seed * 1_000_003 + data_pass) % (2 ** 63))
    return torch.randperm(num_samples, generator=generator)


class TrainSampler(Sampler[Key]):
    """This rank's sample keys for global batches start_batch, start_batch + 1, ... without end."""

    def __init__(self, num_samples: int, batch_per_device: int, world_size: int, rank: int, seed: int,
                 iterations_per_pass: int | None, shuffle: bool = True) -> None:
        self.num_samples, self.batch, self.world_size, self.rank = num_samples, batch_per_device, world_size, rank
        self.seed, self.iterations_per_pass, self.shuffle = seed, iterations_per_pass, shuffle
        self.start_batch = 0
        self._perms: dict[int, list[int]] = {}

    def keys(self, global_batch: int) -> list[Key]:
        per_global = self.batch * self.world_size
        if self.iterations_per_pass:   # one pass per epoch: each pass restarts at position 0
            data_pass = global_batch // self.iterations_per_pass
            start = (global_batch % self.iterations_per_pass) * per_global + self.rank * self.batch
            return [(data_pass, i) for i in self._order(data_pass)[start:start + self.batch]]
        keys: list[Key] = []
        position = global_batch * per_global + self.rank * self.batch
        end = position + self.batch
        while position < end:          # a batch may straddle the end of a pass
            data_pass, offset = divmod(position, self.num_samples)
            take = min(end - position, self.num_samples - offset)
            keys += [(data_pass, i) for i in self._order(data_pass)[offset:offset + take]]
            position += take
        return keys

    def _order(self, data_pass: int) -> list[int]:
        if data_pass not in self._perms:
            if len(self._perms) > 2:
                self._perms.pop(min(self._perms))
            order = (pass_permutation(self.num_samples, self.seed, data_pass) if self.shuffle
                     else torch.arange(self.num_samples))
            self._perms[data_pass] = order.tolist()     # plain ints: indexing a tensor per sample is slow
        return self._perms[data_pass]

    def __iter__(self) -> Iterator[Key]:
        batch = self.start_batch
        while True:
            yield from self.keys(batch)
            batch += 1


class ShardSampler(Sampler[Key]):
    """Rank r's indices r, r+W, ... of the first `count` samples; cycles from `start` batches on when endless."""

    def __init__(self, count: int, world_size: int, rank: int, batch: int, endless: bool) -> None:
        self.indices = list(range(rank, count, world_size))
        self.batch, self.endless = batch, endless
        self.start_batch = 0

    def __len__(self) -> int:
        return len(self.indices)

    def __iter__(self) -> Iterator[Key]:
        if not self.endless:
            yield from ((0, i) for i in self.indices)
            return
        position = self.start_batch * self.batch
        while True:
            yield 0, self.indices[position % len(self.indices)]
            position += 1


class KeyedDataset(Dataset):
    """Adapts a map-style dataset to (pass, index) keys; one with `get_samples(keys)` is asked for whole batches
    (the DataLoader's `__getitems__`), so it can write each sample straight into the batch buffer."""

    def __init__(self, dataset: Any) -> None:
        self.dataset = dataset
        self._get_sample = getattr(dataset, "get_sample", None)
        self.__getitems__ = getattr(dataset, "get_samples", None)   # the loader's fetcher checks it is truthy

    def __len__(self) -> int:
        return len(self.dataset)

    def __getitem__(self, key: Key) -> Any:
        data_pass, index = key
        return self._get_sample(index, data_pass) if self._get_sample else self.dataset[index]


_OPEN_STREAMS: "weakref.WeakSet[BatchStream]" = weakref.WeakSet()


@atexit.register
def _close_open_streams() -> None:
    """At exit, stop the workers of streams nobody closed (a script, a crash): they ignore SIGTERM, and
    multiprocessing's own exit handler, which runs after this one (atexit is last-in first-out and it was
    registered when torch was imported), would otherwise wait for them forever."""
    for stream in list(_OPEN_STREAMS):
        stream.close()


class BatchStream:
    """Batches on the device, counting what was consumed so a checkpoint can restart at that position.

    A collate function may return `(inputs, labels, skipped)` where `skipped` counts samples it dropped (corrupt
    records with input.bad_record "skip"); the count accumulates in `skipped` and the pair is returned.
    """

    def __init__(self, loader: DataLoader, sampler: Any, device: torch.device) -> None:
        self.loader, self.sampler, self.device = loader, sampler, device
        self.position = 0
        self.skipped = 0
        _OPEN_STREAMS.add(self)
        self._iterator: Iterator | None = None
        # A collate function with batch_to_device(batch, device) moves (and finishes) its own batches there.
        self._move = getattr(getattr(loader, "collate_fn", None), "batch_to_device", None)

    def next(self) -> Any:
        if self._iterator is None:
            self.sampler.start_batch = self.position
            self._iterator = self._on_device(self.loader)
        batch, skipped = self._take()
        self.position += 1
        self.skipped += skipped
        return batch

    def _take(self) -> tuple[Any, int]:
        """The next batch and its skipped count; a loader worker's error stops the workers now (they ignore SIGTERM, so left running
        they would hold the process at exit) and comes back as the worker raised it."""
        try:
            return next(self._iterator)
        except StopIteration:
            raise
        except Exception as err:
            self.close()
            raise worker_error(err) from None

    def _on_device(self, loader: DataLoader) -> Iterator[tuple[Any, int]]:
        """The loader's batches on the device with their skipped counts; on CUDA the next batch is copied on a
        side stream while the model works on the current one."""
        return DeviceBatches(iter(loader), self._prepare, self.device)

    def _prepare(self, batch: Any) -> tuple[Any, int]:
        skipped = 0
        if isinstance(batch, (tuple, list)) and len(batch) == 3 and isinstance(batch[2], int):
            skipped, batch = batch[2], batch[:2]
        return (self._move(batch, self.device) if self._move else to_device(batch, self.device)), skipped

    def close(self) -> None:
        """Stop the loader's workers while the interpreter is whole; the stream is unusable afterwards.

        Persistent workers left to the garbage collection of a reference cycle (the trainer's) do not hear the
        stop request (its queue may be cleared first) and each costs a 5 s join timeout.
        """
        for iterator in (self._iterator, getattr(self, "_saved", None)):
            stop = getattr(iterator, "_shutdown_workers", None)
            if stop is not None:
                stop()
        self._iterator = self.loader = None

    def state_dict(self) -> dict:
        return {"position": self.position}

    def load_state_dict(self, state: dict) -> None:
        self.position = int(state["position"])
        self._iterator = None   # restarted lazily at the restored position


class TestStream(BatchStream):
    """Record-point test batches cycle through this rank's shard; an epoch-end pass reads it once."""

    def __init__(self, loader: DataLoader | None, sampler: Any, full_loader: DataLoader, device: torch.device) -> None:
        super().__init__(loader, sampler, device)
        self.full_loader = full_loader
        self._saved: Iterator | None = None
        self._in_full_pass = False

    def begin_full_pass(self) -> int:
        """Switch next() to a fresh pass over the shard; return how many batches it holds."""
        self._saved, self._iterator = self._iterator, self._on_device(self.full_loader)
        self._in_full_pass = True
        return len(self.full_loader)

    def end_full_pass(self) -> None:
        self._iterator, self._saved = self._saved, None
        self._in_full_pass = False

    def close(self) -> None:
        super().close()
        self._saved = self.full_loader = None

    def next(self) -> Any:
        if self._in_full_pass:
            batch, skipped = self._take()
            self.skipped += skipped
            return batch
        if self.loader is None:
            raise RuntimeError("no record-point test batches: epoch_iter.num_test_iter is 0")
        return super().next()


def build_train_stream(dataset: Any, opts: dict, ctx: RunContext, iterations_per_epoch: int,
                       batch_sampler: Any = None) -> BatchStream:
    """`batch_sampler`: this rank's batches of keys, with `start_batch`, for TrainSampler's (a Determined trial's)."""
    batch = opts["epoch_iter"]["batch_per_device"]
    if isinstance(dataset, IterableSource):
        if ctx.is_writer:
            logging.getLogger("playground").warning(
                "the training data is an iterable dataset: a resumed run skips the samples already read, which "
                "continues exactly only if the dataset yields the same sequence again; give a map-style dataset "
                "(__len__ and __getitem__) for exact resume")
        shard = RankShard(dataset.dataset, ctx.world_size, ctx.rank, batch, endless=True)
        return BatchStream(_loader(dataset, shard, batch, opts, ctx), shard, ctx.device)
    _check_dataset(dataset, "training")
    if batch_sampler is not None:
        return BatchStream(_loader(dataset, batch_sampler, 1, opts, ctx, True), batch_sampler, ctx.device)
    one_pass = opts["epoch_iter"]["num_train_sample_per_epoch"] == 0
    sampler = TrainSampler(len(dataset), batch, ctx.world_size, ctx.rank, opts["model_param"]["seed"],
                           iterations_per_epoch if one_pass else None, opts["input"]["shuffle_train"])
    return BatchStream(_loader(dataset, sampler, batch, opts, ctx), sampler, ctx.device)


def build_test_stream(dataset: Any, opts: dict, ctx: RunContext) -> TestStream | None:
    if dataset is None:
        return None
    batch = opts["epoch_iter"]["test_batch_per_device"] or opts["epoch_iter"]["batch_per_device"]
    if isinstance(dataset, IterableSource):
        return _iterable_test_stream(dataset, batch, opts, ctx)
    _check_dataset(dataset, "test")
    total = len(dataset)
    if total < ctx.world_size:
        raise ValueError(f"the test set has {total} samples, fewer than the {ctx.world_size} ranks")
    count = min(opts["epoch_iter"]["num_test_sample"] or total, total)
    full_sampler = ShardSampler(count, ctx.world_size, ctx.rank, batch, endless=False)
    full = _loader(dataset, full_sampler, batch, opts, ctx)
    loader = sampler = None
    if opts["epoch_iter"]["num_test_iter"] > 0:
        sampler = ShardSampler(total, ctx.world_size, ctx.rank, batch, endless=True)
        loader = _loader(dataset, sampler, batch, opts, ctx)
    return TestStream(loader, sampler, full, ctx.device)


def _iterable_test_stream(source: IterableSource, batch: int, opts: dict, ctx: RunContext) -> TestStream:
    """A full pass reads the first num_test_sample items (all when 0); record points cycle through them."""
    limit = opts["epoch_iter"]["num_test_sample"] or None
    full = _loader(source, RankShard(source.dataset, ctx.world_size, ctx.rank, batch, False, limit), batch, opts, ctx)
    loader = shard = None
    if opts["epoch_iter"]["num_test_iter"] > 0:
        shard = RankShard(source.dataset, ctx.world_size, ctx.rank, batch, endless=True, limit=limit)
        loader = _loader(source, shard, batch, opts, ctx)
    return TestStream(loader, shard, full, ctx.device)


class DeviceBatches:
    """Iterator over (batch on the device, skipped) of a DataLoader iterator. On CUDA, batch i+1 is prepared (the
    non-blocking copy from pinned memory, and whatever `batch_to_device` does there) on a side stream while the
    default stream computes on batch i."""

    def __init__(self, source: Iterator, prepare: Callable[[Any], tuple[Any, int]], device: torch.device) -> None:
        self.source, self._prepare = source, prepare
        self._side = torch.cuda.Stream(device=device) if device.type == "cuda" else None
        self._staged: Any = None

    def _shutdown_workers(self) -> None:
        """BatchStream.close stops the loader's workers through its iterator."""
        stop = getattr(self.source, "_shutdown_workers", None)
        if stop is not None:
            stop()

    def __iter__(self) -> "DeviceBatches":
        return self

    def __next__(self) -> tuple[Any, int]:
        if self._side is None:
            return self._prepare(next(self.source))
        if self._staged is None:
            self._staged = self._stage()         # the first batch; StopIteration for an empty loader
        if self._staged is _END:
            raise StopIteration
        torch.cuda.current_stream(self._side.device).wait_stream(self._side)
        batch = self._staged
        _record_on_current_stream(batch[0])
        try:
            self._staged = self._stage()
        except StopIteration:
            self._staged = _END
        return batch

    def _stage(self) -> tuple[Any, int]:
        with torch.cuda.stream(self._side):
            return self._prepare(next(self.source))


_END = object()


def _record_on_current_stream(batch: Any) -> None:
    """Tell the caching allocator that the side stream's tensors are now used on the current stream."""
    if isinstance(batch, torch.Tensor):
        if batch.is_cuda:
            batch.record_stream(torch.cuda.current_stream())
    elif isinstance(batch, (list, tuple)):
        for item in batch:
            _record_on_current_stream(item)
    elif isinstance(batch, dict):
        for item in batch.values():
            _record_on_current_stream(item)


def to_device(batch: Any, device: torch.device) -> Any:
    if isinstance(batch, torch.Tensor):
        return batch.to(device, non_blocking=True)
    if isinstance(batch, (list, tuple)):
        return type(batch)(to_device(b, device) for b in batch)
    if isinstance(batch, dict):
        return {k: to_device(v, device) for k, v in batch.items()}
    return batch


def _loader(dataset: Any, sampler: Sampler, batch: int, opts: dict, ctx: RunContext,
            batches: bool = False) -> DataLoader:
    workers = opts["input"]["decode_threads"]
    generator = torch.Generator()
    generator.manual_seed(opts["model_param"]["seed"])   # keeps the global RNG untouched by loader creation
    # An iterable shard is read as it is; it learns its start from the stream, so its workers are not persistent.
    key = "batch_sampler" if batches else "sampler"    # batches: it yields whole batches (then `batch` is 1)
    source, extra = (sampler, {}) if isinstance(sampler, RankShard) else (KeyedDataset(dataset), {key: sampler})
    if workers > 0:
        method = opts["input"]["worker_start_method"]
        extra.update(persistent_workers=not isinstance(sampler, RankShard), prefetch_factor=PREFETCH_FACTOR,
                     worker_init_fn=_ignore_stop_signals, multiprocessing_context=None if method == "auto" else method)
    collate_fn = getattr(dataset, "collate_fn", None) or default_collate
    if workers > 0 and opts["input"]["reuse_batch_memory"]:
        _offer_buffer_reuse(collate_fn)
    return DataLoader(source, batch_size=batch, num_workers=workers,
                      collate_fn=collate_fn, pin_memory=ctx.device.type == "cuda", drop_last=False,
                      generator=generator, **extra)


def _offer_buffer_reuse(collate_fn: Any) -> None:
    """Let a collate function that can (`reuse_buffers(slots)`) write each worker's batches into a ring of
    shared-memory buffers: fresh shared memory costs a page fault per 4 KiB, about as much as decoding.

    Why PREFETCH_FACTOR + 2 slots are enough: the loader hands a worker its next batch only when the loop takes
    one, keeping at most PREFETCH_FACTOR batches per worker in flight; so when a worker fills a slot again, the
    loop has taken two batches from every worker since that slot's previous batch, and the trainer keeps only
    the batch it is on. A hook that keeps a batch's tensors longer must clone() them (docs/data.md).
    """
    offer = getattr(collate_fn, "reuse_buffers", None)
    if callable(offer):
        offer(PREFETCH_FACTOR + 2)


def _ignore_stop_signals(worker_id: int) -> None:
    """Loader workers leave SIGTERM/SIGINT to their rank, which checkpoints first (a signal sent to the whole
    process group reaches them too); they stop when their rank stops or dies. Spawned workers (start method
    spawn or forkserver) only ignore signals once started; forked ones hold the rank's handler until then."""
    ignore_stop_signals()


def _check_dataset(dataset: Any, what: str) -> None:
    if not (hasattr(dataset, "__getitem__") and hasattr(dataset, "__len__")):
        raise TypeError(f"gen_input_builder_fun must return a map-style dataset (with __len__ and __getitem__) for "
                        f"the {what} data, got {type(dataset).__name__}")
    if len(dataset) == 0:
        raise ValueError(f"the {what} dataset is empty")
