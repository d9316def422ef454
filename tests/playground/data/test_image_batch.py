"""Collation into one uint8 batch, normalised on the device, counting skipped records (playground/data/image_batch.py)."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from playground.data.image_batch import IMAGENET_MEAN, IMAGENET_STD, ImageBatcher, ImageSample, SkippedRecord


CPU = torch.device("cpu")


def test_batches_travel_as_uint8_nhwc_and_are_normalised_per_rgb_channel_into_nchw_on_the_device():
    red = np.zeros((2, 3, 3), np.uint8)
    red[:, :, 0] = 255
    batcher = ImageBatcher(3)
    raw, labels, skipped = batcher([ImageSample(red, 4), ImageSample(red * 0, 1)])
    assert raw.shape == (2, 2, 3, 3) and raw.dtype == torch.uint8 and raw[0, 1, 2].tolist() == [255, 0, 0]
    images, labels = batcher.batch_to_device((raw, labels), CPU)
    assert images.shape == (2, 3, 2, 3) and images.dtype == torch.float32
    assert labels.tolist() == [4, 1] and labels.dtype == torch.int64 and skipped == 0
    expected_red = [(1 - IMAGENET_MEAN[0]) / IMAGENET_STD[0], -IMAGENET_MEAN[1] / IMAGENET_STD[1],
                    -IMAGENET_MEAN[2] / IMAGENET_STD[2]]
    assert torch.allclose(images[0, :, 1, 2], torch.tensor(expected_red))
    assert torch.allclose(images[1, 0], torch.full((2, 3), -IMAGENET_MEAN[0] / IMAGENET_STD[0]))


def test_gray_batches_have_one_channel_and_their_own_statistics():
    batcher = ImageBatcher(1, mean=[0.5], std=[0.5])
    images = batcher.normalise(batcher([ImageSample(np.full((4, 4), 255, np.uint8), 0)])[0])
    assert images.shape == (1, 1, 4, 4) and torch.allclose(images, torch.ones(1, 1, 4, 4))
    with pytest.raises(ValueError, match="mean and std need 1 values each"):
        ImageBatcher(1)


def test_skipped_records_are_left_out_and_counted_and_an_all_bad_batch_is_an_error():
    good = ImageSample(np.zeros((2, 2, 3), np.uint8), 3)
    images, labels, skipped = ImageBatcher(3)([SkippedRecord("db: record '1': bad"), good])
    assert images.shape[0] == 1 and labels.tolist() == [3] and skipped == 1
    with pytest.raises(RuntimeError, match="every record of a batch of 2 failed to decode \\(db: record '1'"):
        ImageBatcher(3)([SkippedRecord("db: record '1': bad"), SkippedRecord("db: record '2': bad")])


def test_fill_writes_samples_in_place_and_a_skipped_one_takes_no_slot():
    batcher = ImageBatcher(1, mean=[0.5], std=[0.5])

    def make(k: int, out: np.ndarray) -> int | SkippedRecord:
        if k == 1:
            return SkippedRecord("db: record '1': bad")
        out[:] = 10 * k
        return k

    images, labels, skipped = batcher(batcher.fill(3, 2, 2, make))
    assert images.shape == (2, 2, 2, 1) and labels.tolist() == [0, 2] and skipped == 1
    assert images[:, 0, 0, 0].tolist() == [0, 20]


def test_reused_cpu_output_buffers_alternate_so_the_previous_batch_stays_intact():
    batcher = ImageBatcher(3)
    batcher.reuse_buffers(6)
    raw = torch.zeros(4, 2, 2, 3, dtype=torch.uint8)
    first, second, third = (batcher.normalise(raw + k) for k in range(3))
    assert first.data_ptr() == third.data_ptr() != second.data_ptr()
    assert torch.equal(second, batcher.normalise(raw + 1, reuse=False))


def test_received_shared_buffers_stay_mapped_while_they_recur_and_are_let_go_when_they_stop():
    from torch.multiprocessing.reductions import StorageWeakRef

    batcher = ImageBatcher(3)
    batcher.reuse_buffers(6)
    labels = torch.zeros(2, dtype=torch.int64)
    old = torch.zeros(2, 4, 4, 3, dtype=torch.uint8).share_memory_()
    old_ref = StorageWeakRef(old.untyped_storage())
    batcher.batch_to_device((old, labels), CPU)
    del old
    assert not old_ref.expired()          # held: a worker sending it again finds it still mapped here
    ring = [torch.zeros(2, 4, 4, 3, dtype=torch.uint8).share_memory_() for _ in range(3)]
    for step in range(60):                # the worker's ring now; the old buffer never comes back
        batcher.batch_to_device((ring[step % 3], labels), CPU)
    assert old_ref.expired()
    assert all(not StorageWeakRef(buffer.untyped_storage()).expired() for buffer in ring)
