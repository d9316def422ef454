"""ComputeLoss against hand-computed values."""
from __future__ import annotations

import torch

from components.meters.compute_loss import ComputeLoss
from playground.trainer.meters import Blobs


def blobs(loss: float, n: int) -> Blobs:
    return Blobs(torch.tensor(loss), torch.zeros(n, 3), torch.zeros(n, dtype=torch.long))


def test_mean_loss_is_weighted_by_samples_since_reset():
    meter = ComputeLoss(blob_name="loss")
    meter.Add(blobs(2.0, 4))
    meter.Add(blobs(0.5, 2))     # a smaller last batch counts less
    assert meter.Compute() == (2.0 * 4 + 0.5 * 2) / 6
    meter.Reset()
    assert meter.Compute() is None
    meter.Add(blobs(1.25, 3))
    assert meter.Compute() == 1.25


def test_sums_of_two_ranks_give_the_loss_over_both():
    rank0, rank1 = ComputeLoss(), ComputeLoss()
    rank0.Add(blobs(1.0, 8))
    rank1.Add(blobs(3.0, 2))
    merged = ComputeLoss()
    merged.load_sums(rank0.sums() + rank1.sums())
    assert merged.Compute() == (8 * 1.0 + 2 * 3.0) / 10
