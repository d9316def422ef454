"""Collation into one normalised float batch, counting skipped records (playground/data/image_batch.py)."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from playground.data.image_batch import IMAGENET_MEAN, IMAGENET_STD, ImageBatcher, ImageSample, SkippedRecord


def test_pixels_are_normalised_per_rgb_channel_into_nchw():
    red = np.zeros((2, 3, 3), np.uint8)
    red[:, :, 0] = 255
    images, labels, skipped = ImageBatcher(3)([ImageSample(red, 4), ImageSample(red * 0, 1)])
    assert images.shape == (2, 3, 2, 3) and images.dtype == torch.float32
    assert labels.tolist() == [4, 1] and labels.dtype == torch.int64 and skipped == 0
    expected_red = [(1 - IMAGENET_MEAN[0]) / IMAGENET_STD[0], -IMAGENET_MEAN[1] / IMAGENET_STD[1],
                    -IMAGENET_MEAN[2] / IMAGENET_STD[2]]
    assert torch.allclose(images[0, :, 1, 2], torch.tensor(expected_red))
    assert torch.allclose(images[1, 0], torch.full((2, 3), -IMAGENET_MEAN[0] / IMAGENET_STD[0]))


def test_gray_batches_have_one_channel_and_their_own_statistics():
    batcher = ImageBatcher(1, mean=[0.5], std=[0.5])
    images, _, _ = batcher([ImageSample(np.full((4, 4), 255, np.uint8), 0)])
    assert images.shape == (1, 1, 4, 4) and torch.allclose(images, torch.ones(1, 1, 4, 4))
    with pytest.raises(ValueError, match="mean and std need 1 values each"):
        ImageBatcher(1)


def test_skipped_records_are_left_out_and_counted_and_an_all_bad_batch_is_an_error():
    good = ImageSample(np.zeros((2, 2, 3), np.uint8), 3)
    images, labels, skipped = ImageBatcher(3)([SkippedRecord("db: record '1': bad"), good])
    assert images.shape[0] == 1 and labels.tolist() == [3] and skipped == 1
    with pytest.raises(RuntimeError, match="every record of a batch of 2 failed to decode \\(db: record '1'"):
        ImageBatcher(3)([SkippedRecord("db: record '1': bad"), SkippedRecord("db: record '2': bad")])
