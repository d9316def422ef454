"""Collation: augmented uint8 images -> one preallocated float32 batch, normalised, in RGB channel order.

Each pixel becomes (value / 255 - mean[c]) / std[c], written straight from the uint8 image into its slot of
the batch tensor (one pass: conversion, HWC -> CHW transpose and normalisation together). Inside a DataLoader
worker the batch tensor is in shared memory, as torch's own default_collate makes it, so handing it to the
training process copies nothing; when the loader allows it (`reuse_buffers`), a worker cycles through a ring
of such buffers instead of faulting in fresh pages for every batch. The defaults are ImageNet's RGB mean and std (values in [0, 1]).

Records skipped under input.bad_record "skip" arrive as SkippedRecord and are counted: the collate function
returns (images, labels, skipped), the form playground/data/batch_stream.py sums per epoch.
"""
from __future__ import annotations

import math
from typing import NamedTuple, Sequence

import numpy as np
import torch
from torch.utils.data import get_worker_info

IMAGENET_MEAN = (0.485, 0.456, 0.406)
IMAGENET_STD = (0.229, 0.224, 0.225)


class ImageSample(NamedTuple):
    """One augmented image (imsize x imsize x C, or imsize x imsize for gray; uint8 RGB) and its label."""

    pixels: np.ndarray
    label: int


class SkippedRecord(NamedTuple):
    """Stands for a record that failed to decode under input.bad_record "skip"; `reason` names db and key."""

    reason: str


class ImageBatcher:
    """collate_fn: a list of ImageSample / SkippedRecord -> (float32 NxCxHxW, int64 N, number skipped)."""

    def __init__(self, channels: int, mean: Sequence[float] = IMAGENET_MEAN, std: Sequence[float] = IMAGENET_STD):
        if len(mean) != channels or len(std) != channels:
            raise ValueError(f"mean and std need {channels} values each (one per channel), got {list(mean)} and "
                             f"{list(std)}")
        self.channels = channels
        self._slots = 0                       # ring size in a loader worker; 0: a fresh buffer per batch
        self._ring: list[torch.Tensor] = []
        self._turn = 0
        std_t = torch.tensor(std, dtype=torch.float32).view(channels, 1, 1)
        self._scale = 1.0 / (255.0 * std_t)
        self._offset = -torch.tensor(mean, dtype=torch.float32).view(channels, 1, 1) / std_t

    def __call__(self, samples: Sequence[ImageSample | SkippedRecord]) -> tuple[torch.Tensor, torch.Tensor, int]:
        kept = [s for s in samples if isinstance(s, ImageSample)]
        skipped = len(samples) - len(kept)
        if not kept:
            reasons = "; ".join(s.reason for s in samples[:3])
            raise RuntimeError(f"every record of a batch of {len(samples)} failed to decode ({reasons}); the "
                               "database looks damaged: rebuild it or check the path")
        height, width = kept[0].pixels.shape[:2]
        images = self._batch_tensor((len(kept), self.channels, height, width))
        for slot, sample in zip(images, kept):
            source = torch.from_numpy(sample.pixels).view(height, width, self.channels).permute(2, 0, 1)
            torch.addcmul(self._offset, source, self._scale, out=slot)
        labels = torch.tensor([s.label for s in kept], dtype=torch.int64)
        return images, labels, skipped

    def one(self, sample: ImageSample) -> torch.Tensor:
        """The CxHxW float tensor of a single sample."""
        return self([sample])[0][0]

    def reuse_buffers(self, slots: int) -> None:
        """In loader workers, write batches into a ring of `slots` shared buffers instead of fresh ones.

        The caller (playground/data/batch_stream.py) promises a batch is no longer read once its worker has made
        `slots` more; the trainer process (no worker) always gets fresh tensors.
        """
        self._slots = slots

    def _batch_tensor(self, shape: tuple[int, ...]) -> torch.Tensor:
        if get_worker_info() is None:
            return torch.empty(shape, dtype=torch.float32)
        if not self._slots:
            return _new_shared(shape)
        if self._ring and (self._ring[0].shape[1:] != shape[1:] or self._ring[0].shape[0] < shape[0]):
            self._ring, self._turn = [], 0    # another image size: buffers still in use stay with their users
        if len(self._ring) < self._slots:
            self._ring.append(_new_shared(shape))
        buffer = self._ring[self._turn % len(self._ring)]
        self._turn += 1
        return buffer[:shape[0]]     # a short last batch uses the front of a full buffer


def _new_shared(shape: tuple[int, ...]) -> torch.Tensor:
    # In a worker: allocate in shared memory now rather than have the result queue copy it there later.
    # This is the private call default_collate makes; fall back to the public (copying) one if it goes away.
    try:
        storage = torch.empty(0)._typed_storage()._new_shared(math.prod(shape))
        return torch.empty(0).new(storage).view(shape)
    except AttributeError:
        return torch.empty(shape, dtype=torch.float32).share_memory_()
