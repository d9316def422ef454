"""A loader worker's ring of shared-memory batch buffers, each buffer sent to the training process only once.

A DataLoader worker hands a batch to the training process through a multiprocessing queue, and torch pickles a
shared tensor by passing its file descriptor: the training process connects to the worker's resource-sharer
thread, receives a duplicate descriptor and looks the memory up again, for every tensor of every batch (a small
labels tensor even gets a fresh shared-memory segment each time). The batch buffers of a worker's ring recur
every few batches, so a slot crosses with its memory on its first trip only; afterwards a batch travels as a
reference (ring, slot, rows) that the training process resolves against the buffer it already holds, and the
labels travel as a list of ints.

The training process keeps a worker's buffers for as long as their batcher lives, or until the worker is gone
and another ring arrives; buffers of a batch still in use stay alive with that batch in any case.
"""
from __future__ import annotations

import math
import multiprocessing
import os
import uuid
import weakref
from typing import Sequence

import torch

_RECEIVERS: "weakref.WeakValueDictionary[str, RingReceiver]" = weakref.WeakValueDictionary()

RingKey = tuple[int, str]   # (worker pid, a name unique to the ring)


class RingReceiver:
    """The training process's side: every ring buffer received so far, by ring and slot."""

    def __init__(self) -> None:
        self.rings: dict[RingKey, dict[int, torch.Tensor]] = {}

    def resolve(self, key: RingKey, slot: int, buffer: torch.Tensor | None) -> torch.Tensor:
        """The buffer of `slot` in ring `key`: `buffer` on its first trip (kept from then on), else the kept one."""
        ring = self.rings.get(key)
        if ring is None:
            self._forget_gone(key[0])
            ring = self.rings[key] = {}
        if buffer is not None:
            ring[slot] = buffer
        elif slot not in ring:
            raise RuntimeError(f"batch buffer {slot} of loader worker {key[0]} arrived as a reference before its "
                               "memory did: the ring's batches were read out of order")
        return ring[slot]

    def _forget_gone(self, arriving_pid: int) -> None:
        """Let go of the rings of workers that have exited, and of older rings of the worker whose new one arrives."""
        for key in list(self.rings):
            if key[0] == arriving_pid or not _alive(key[0]):
                del self.rings[key]


def receiver(token: str) -> RingReceiver:
    """This process's receiver for the batcher `token` (one per token, shared by copies of the batcher)."""
    found = _RECEIVERS.get(token)
    if found is None:
        found = _RECEIVERS[token] = RingReceiver()
    return found


def new_token() -> str:
    return uuid.uuid4().hex


class WorkerRing:
    """In a loader worker: `slots` shared uint8 buffers used in turn (the caller promises a batch is no longer read
    once `slots` more have been made), and the record of which have made the trip to the training process."""

    def __init__(self, token: str, slots: int) -> None:
        self.token, self.slots = token, slots
        self.buffers: list[torch.Tensor] = []
        self.sent: set[int] = set()
        self.key: RingKey = (os.getpid(), uuid.uuid4().hex)
        self._turn = 0

    def fits(self, shape: Sequence[int]) -> bool:
        return not self.buffers or (tuple(self.buffers[0].shape[1:]) == tuple(shape[1:])
                                    and self.buffers[0].shape[0] >= shape[0])

    def take(self, shape: Sequence[int]) -> torch.Tensor:
        """The next buffer, cut to `shape` (a short last batch uses the front of a full buffer)."""
        if len(self.buffers) < self.slots:
            self.buffers.append(new_shared(shape))
        buffer = self.buffers[self._turn % len(self.buffers)]
        self._turn += 1
        return buffer[:shape[0]]

    def batch(self, images: torch.Tensor, labels: list[int], skipped: int) -> "RingBatch":
        """What the collate function returns for `images`, a view of one of this ring's buffers."""
        pointer = images.data_ptr()
        slot = next(k for k, buffer in enumerate(self.buffers) if buffer.data_ptr() == pointer)
        return RingBatch(self, slot, images.shape[0], labels, skipped)


class RingBatch:
    """A worker's batch on its way out: unpickled in the training process as (images, labels, skipped)."""

    __slots__ = ("ring", "slot", "rows", "labels", "skipped")

    def __init__(self, ring: WorkerRing, slot: int, rows: int, labels: list[int], skipped: int) -> None:
        self.ring, self.slot, self.rows, self.labels, self.skipped = ring, slot, rows, labels, skipped

    def __reduce__(self):
        first_trip = self.slot not in self.ring.sent
        self.ring.sent.add(self.slot)
        buffer = self.ring.buffers[self.slot] if first_trip else None
        return _arrive, (self.ring.token, self.ring.key, self.slot, self.rows, buffer, self.labels, self.skipped)


def _arrive(token: str, key: RingKey, slot: int, rows: int, buffer: torch.Tensor | None, labels: list[int],
            skipped: int) -> tuple[torch.Tensor, torch.Tensor, int]:
    images = receiver(token).resolve(key, slot, buffer)[:rows]
    return images, torch.tensor(labels, dtype=torch.int64), skipped


def new_shared(shape: Sequence[int]) -> torch.Tensor:
    """A uint8 tensor of `shape` in shared memory, allocated there (not copied there later by the result queue)."""
    # The private call default_collate makes; fall back to the public (copying) one if it goes away.
    try:
        storage = torch.empty(0, dtype=torch.uint8)._typed_storage()._new_shared(math.prod(shape))
        return torch.empty(0, dtype=torch.uint8).new(storage).view(tuple(shape))
    except AttributeError:
        return torch.empty(tuple(shape), dtype=torch.uint8).share_memory_()


def _alive(pid: int) -> bool:
    """Whether loader worker `pid` (a child of this process, whatever its start method) still runs."""
    return any(child.pid == pid for child in multiprocessing.active_children())
