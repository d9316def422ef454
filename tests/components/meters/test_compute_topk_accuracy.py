"""ComputeTopKAccuracy against hand-computed values."""
from __future__ import annotations

import pytest
import torch

from components.meters.compute_topk_accuracy import ComputeTopKAccuracy
from playground.trainer.meters import Blobs

LOGITS = torch.tensor([[0.1, 0.7, 0.2],    # top1 1, top2 {1, 2}
                       [0.5, 0.3, 0.2],    # top1 0, top2 {0, 1}
                       [0.2, 0.3, 0.5],    # top1 2, top2 {2, 1}
                       [0.6, 0.1, 0.3]])   # top1 0, top2 {0, 2}
LABELS = torch.tensor([1, 1, 0, 2])


@pytest.mark.parametrize("topk, expected", [(1, 1 / 4), (2, 3 / 4), (3, 1.0), (5, 1.0)])
def test_topk_fraction(topk, expected):
    meter = ComputeTopKAccuracy(blob_name=["softmax", "label"], topk=topk)
    meter.Add(Blobs(torch.tensor(0.0), LOGITS, LABELS))
    assert meter.Compute() == pytest.approx(expected)


def test_accumulates_over_batches_until_reset():
    meter = ComputeTopKAccuracy(topk=1)
    meter.Add(Blobs(torch.tensor(0.0), LOGITS[:2], LABELS[:2]))   # 1 of 2
    meter.Add(Blobs(torch.tensor(0.0), LOGITS[2:], LABELS[2:]))   # 0 of 2
    assert meter.Compute() == pytest.approx(0.25)
    meter.Reset()
    meter.Add(Blobs(torch.tensor(0.0), LOGITS[:1], LABELS[:1]))
    assert meter.Compute() == 1.0


def test_bad_kargs_are_refused():
    with pytest.raises(ValueError, match="topk must be a positive integer"):
        ComputeTopKAccuracy(topk=0)
    with pytest.raises(ValueError, match="blob_name must name the scores and the labels"):
        ComputeTopKAccuracy(blob_name=["softmax"])
