"""Collation: augmented uint8 images -> one uint8 NxHxWxC batch; on the training device, one normalised float32 step.

Workers write each augmented image straight into its slot of a uint8 batch buffer (`fill`; the last OpenCV
step's `dst`), in OpenCV's HxWxC layout, so a batch crosses to the training process, and to a GPU, as a quarter
of the bytes of float32. Inside a DataLoader worker the buffer is in shared memory, as torch's own
default_collate makes it, so handing it over copies nothing; when the loader allows it (`reuse_buffers`), a
worker cycles through a ring of such buffers instead of faulting in fresh pages for every batch.

`batch_to_device` (called by playground/data/batch_stream.py in the training process) moves the uint8 batch to
the device (non-blocking from pinned memory on CUDA) and turns it into the float32 NxCxHxW batch the network takes:
each value (pixel / 255 - mean[c]) / std[c], RGB order, computed as pixel * scale[c] + offset[c] with one
addcmul, the same arithmetic collation did per image before. The defaults are ImageNet's RGB mean and std.

Records skipped under input.bad_record "skip" arrive as SkippedRecord and are counted: the collate function
returns (images, labels, skipped), the form playground/data/batch_stream.py sums per epoch.
"""
from __future__ import annotations

import math
from typing import Callable, NamedTuple, Sequence

import numpy as np
import torch
from torch.utils.data import get_worker_info

IMAGENET_MEAN = (0.485, 0.456, 0.406)
IMAGENET_STD = (0.229, 0.224, 0.225)
# On a CPU, normalising a whole 64-image batch in one addcmul ran 3x slower than in groups of two images
# (the uint8 -> float32 transpose of a 38 MiB result leaves the cache); on CUDA the whole batch is one kernel.
_CPU_GROUP = 2
_OUTPUT_SLOTS = 2   # float batches the training process reuses on the CPU (the loop keeps only the current one)


class ImageSample(NamedTuple):
    """One augmented image (imsize x imsize x C, or imsize x imsize for gray; uint8 RGB) and its label."""

    pixels: np.ndarray
    label: int


class SkippedRecord(NamedTuple):
    """Stands for a record that failed to decode under input.bad_record "skip"; `reason` names db and key."""

    reason: str


class FilledBatch(NamedTuple):
    """A batch written in place by `ImageBatcher.fill`: what the collate function returns for it."""

    images: torch.Tensor
    labels: torch.Tensor
    skipped: int


class ImageBatcher:
    """collate_fn: ImageSample / SkippedRecord list (or a FilledBatch) -> (uint8 NxHxWxC, int64 N, number skipped);
    `batch_to_device` then gives the normalised float32 NxCxHxW batch on the training device."""

    def __init__(self, channels: int, mean: Sequence[float] = IMAGENET_MEAN, std: Sequence[float] = IMAGENET_STD):
        if len(mean) != channels or len(std) != channels:
            raise ValueError(f"mean and std need {channels} values each (one per channel), got {list(mean)} and "
                             f"{list(std)}")
        self.channels = channels
        self._slots = 0                       # ring size in a loader worker; 0: a fresh buffer per batch
        self._ring: list[torch.Tensor] = []
        self._turn = 0
        self._outputs: list[torch.Tensor] = []   # the training process's float batches on the CPU
        std_t = torch.tensor(std, dtype=torch.float32).view(channels, 1, 1)
        self._scale = 1.0 / (255.0 * std_t)
        self._offset = -torch.tensor(mean, dtype=torch.float32).view(channels, 1, 1) / std_t
        self._constants: dict[torch.device, tuple[torch.Tensor, torch.Tensor]] = {}

    def __call__(self, samples: Sequence[ImageSample | SkippedRecord] | FilledBatch
                 ) -> tuple[torch.Tensor, torch.Tensor, int]:
        if isinstance(samples, FilledBatch):
            return samples.images, samples.labels, samples.skipped
        kept = [s for s in samples if isinstance(s, ImageSample)]
        if not kept:
            raise all_failed(samples)
        height, width = kept[0].pixels.shape[:2]
        images = self._batch_tensor((len(kept), height, width, self.channels))
        for slot, sample in zip(images.numpy(), kept):
            np.copyto(slot, sample.pixels.reshape(slot.shape))
        labels = torch.tensor([s.label for s in kept], dtype=torch.int64)
        return images, labels, len(samples) - len(kept)

    def fill(self, count: int, height: int, width: int,
             make: Callable[[int, np.ndarray], int | SkippedRecord]) -> FilledBatch:
        """A batch of up to `count` images written in place: `make(k, out)` writes sample k into `out` (HxWxC, or
        HxW for gray) and returns its label, or returns a SkippedRecord (which takes no slot)."""
        images = self._batch_tensor((count, height, width, self.channels))
        slots = images.numpy() if self.channels == 3 else images.numpy()[..., 0]
        labels: list[int] = []
        failures: list[SkippedRecord] = []
        for k in range(count):
            result = make(k, slots[len(labels)])
            if isinstance(result, SkippedRecord):
                failures.append(result)
            else:
                labels.append(result)
        if not labels:
            raise all_failed(failures)
        return FilledBatch(images[:len(labels)], torch.tensor(labels, dtype=torch.int64), len(failures))

    def batch_to_device(self, batch: tuple[torch.Tensor, torch.Tensor], device: torch.device
                        ) -> tuple[torch.Tensor, torch.Tensor]:
        """(uint8 NxHxWxC, labels) -> (normalised float32 NxCxHxW, labels) on `device`; in the training process."""
        images, labels = batch
        return self.normalise(images.to(device, non_blocking=True)), labels.to(device, non_blocking=True)

    def normalise(self, images: torch.Tensor, reuse: bool = True) -> torch.Tensor:
        """uint8 NxHxWxC -> float32 NxCxHxW on the same device; on the CPU into a reused buffer if `reuse`."""
        chw = images.permute(0, 3, 1, 2)
        scale, offset = self._on(images.device)
        if images.device.type != "cpu":
            return torch.addcmul(offset, chw, scale)
        out = self._output(tuple(chw.shape)) if reuse and self._slots else torch.empty(chw.shape)
        # One thread: a parallel op leaves the training process's OpenMP threads spinning for their next task,
        # which cost 10x the conversion itself in CPU time (benchmarks/README.md) while the loop waits for data.
        threads = torch.get_num_threads()
        torch.set_num_threads(1)
        try:
            for start in range(0, len(out), _CPU_GROUP):
                group = slice(start, start + _CPU_GROUP)
                torch.addcmul(offset, chw[group], scale, out=out[group])
        finally:
            torch.set_num_threads(threads)
        return out

    def one(self, sample: ImageSample) -> torch.Tensor:
        """The CxHxW float tensor of a single sample (fresh memory)."""
        return self.normalise(self([sample])[0], reuse=False)[0]

    def reuse_buffers(self, slots: int) -> None:
        """In loader workers, write batches into a ring of `slots` shared buffers instead of fresh ones.

        The caller (playground/data/batch_stream.py) promises a batch is no longer read once its worker has made
        `slots` more; the trainer process (no worker) gets fresh uint8 tensors, and on the CPU reuses two float
        batches (the loop works on one batch at a time).
        """
        self._slots = slots

    def _on(self, device: torch.device) -> tuple[torch.Tensor, torch.Tensor]:
        if device not in self._constants:
            self._constants[device] = self._scale.to(device), self._offset.to(device)
        return self._constants[device]

    def _output(self, shape: tuple[int, ...]) -> torch.Tensor:
        if self._outputs and (self._outputs[0].shape[1:] != shape[1:] or self._outputs[0].shape[0] < shape[0]):
            self._outputs = []
        if len(self._outputs) < _OUTPUT_SLOTS:
            self._outputs.append(torch.empty(shape))
        else:
            self._outputs.append(self._outputs.pop(0))
        return self._outputs[-1][:shape[0]]

    def _batch_tensor(self, shape: tuple[int, ...]) -> torch.Tensor:
        if get_worker_info() is None:
            return torch.empty(shape, dtype=torch.uint8)
        if not self._slots:
            return _new_shared(shape)
        if self._ring and (self._ring[0].shape[1:] != shape[1:] or self._ring[0].shape[0] < shape[0]):
            self._ring, self._turn = [], 0    # another image size: buffers still in use stay with their users
        if len(self._ring) < self._slots:
            self._ring.append(_new_shared(shape))
        buffer = self._ring[self._turn % len(self._ring)]
        self._turn += 1
        return buffer[:shape[0]]     # a short last batch uses the front of a full buffer


def all_failed(samples: Sequence[ImageSample | SkippedRecord]) -> RuntimeError:
    reasons = "; ".join(s.reason for s in samples[:3])
    return RuntimeError(f"every record of a batch of {len(samples)} failed to decode ({reasons}); the "
                        "database looks damaged: rebuild it or check the path")


def _new_shared(shape: tuple[int, ...]) -> torch.Tensor:
    # In a worker: allocate in shared memory now rather than have the result queue copy it there later.
    # This is the private call default_collate makes; fall back to the public (copying) one if it goes away.
    try:
        storage = torch.empty(0, dtype=torch.uint8)._typed_storage()._new_shared(math.prod(shape))
        return torch.empty(0, dtype=torch.uint8).new(storage).view(shape)
    except AttributeError:
        return torch.empty(shape, dtype=torch.uint8).share_memory_()
