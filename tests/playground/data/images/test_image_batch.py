"""Collation into one uint8 batch, normalised on the device, counting skipped records (playground/data/images/image_batch.py)."""
from __future__ import annotations

import gc
import itertools

import numpy as np
import pytest
import torch

from playground.data.images.image_batch import IMAGENET_MEAN, IMAGENET_STD, ImageBatcher, ImageSample, SkippedRecord


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


def test_cpu_normalisation_is_pixel_over_255_minus_mean_over_std_for_any_pixels_constant_planes_included():
    rng = np.random.default_rng(1)
    raw = torch.from_numpy(rng.integers(0, 256, (4, 9, 11, 3), dtype=np.uint8))
    raw[1] = 7                         # every plane constant
    raw[2, :, :, 1] = 255              # one plane constant at the top of the range
    pixels = raw.permute(0, 3, 1, 2).double()
    expected = (pixels / 255 - torch.tensor(IMAGENET_MEAN).view(3, 1, 1)) / torch.tensor(IMAGENET_STD).view(3, 1, 1)
    reusing = ImageBatcher(3)
    reusing.reuse_buffers(4)           # the training process's reused outputs: a short batch is a slice of one
    for batcher, count in ((ImageBatcher(3), 4), (reusing, 4), (reusing, 3), (reusing, 1)):
        images = batcher.normalise(raw[:count])
        assert images.dtype == torch.float32 and images.is_contiguous()
        assert torch.allclose(images.double(), expected[:count], rtol=0, atol=2e-6)


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


class _CountingImages:
    """Sample k is an image filled with k % 251 and labelled k; whole batches written in place, as LmdbImageDataset."""

    def __init__(self, count: int) -> None:
        self.count, self.collate_fn = count, ImageBatcher(3)

    def __len__(self) -> int:
        return self.count

    def get_sample(self, index: int, data_pass: int) -> ImageSample:
        return ImageSample(np.full((4, 4, 3), index % 251, np.uint8), index)

    def __getitem__(self, index: int) -> ImageSample:
        return self.get_sample(index, 0)

    def get_samples(self, keys):
        def make(k, out):
            out[:] = keys[k][1] % 251
            return keys[k][1]
        return self.collate_fn.fill(len(keys), 4, 4, make)


def _stream(dataset, workers: int = 2):
    from playground.data.batch_stream import build_train_stream
    from playground.distribution.run_context import RunContext
    from playground.distribution.topology import Topology

    opts = {"epoch_iter": {"batch_per_device": 5, "num_train_sample_per_epoch": 0}, "model_param": {"seed": 0},
            "input": {"shuffle_train": True, "decode_threads": workers, "worker_start_method": "fork",
                      "reuse_batch_memory": True}}
    ctx = RunContext(run_dir=".", topology=Topology("cpu", 1, 1, 0, 0, None, "single"), local_rank=0)
    return build_train_stream(dataset, opts, ctx, len(dataset) // 5)


def test_worker_ring_buffers_cross_once_and_later_batches_arrive_as_references_to_them():
    from torch.multiprocessing.reductions import StorageWeakRef

    from playground.data.images.batch_ring import receiver
    from playground.data.batch_stream import PREFETCH_FACTOR

    dataset = _CountingImages(300)
    stream = _stream(dataset)
    slots = PREFETCH_FACTOR + 2
    raw_batches = []
    batches = iter(stream.loader)
    for raw, labels, skipped in itertools.islice(batches, 4 * slots):   # as the loader hands them over
        label_list = labels.tolist()
        assert raw.dtype == torch.uint8 and labels.dtype == torch.int64 and len(label_list) == 5 and skipped == 0
        assert raw[:, 0, 0, 0].tolist() == [k % 251 for k in label_list]       # each image is its own sample's
        raw_batches.append(raw)
    held = receiver(dataset.collate_fn._token).rings
    assert len(held) == 2 and all(len(ring) == slots for ring in held.values())   # each worker's ring, each slot once
    arrived = {batch.data_ptr() for batch in raw_batches}
    assert arrived == {buffer.data_ptr() for ring in held.values() for buffer in ring.values()}
    old = [StorageWeakRef(buffer.untyped_storage()) for ring in held.values() for buffer in ring.values()]
    batches._shutdown_workers()
    stream.close()
    del batches, raw_batches[:], raw    # the loader's iterator holds batches that arrived out of order
    second = _stream(dataset, workers=1)   # new workers: their ring arrives, the stopped workers' rings are let go
    second.next()
    gc.collect()                           # the stopped loader iterator's own reference cycles
    assert len(held) == 1 and all(ref.expired() for ref in old)
    second.close()
