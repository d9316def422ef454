"""ComputeMean: the mean over samples (and ranks) of a named value, such as a trial's evaluate_batch metric.

A value that is a number or a scalar tensor is a mean over its batch and counts once per sample; a value that is
a (sum, count) pair adds both, which keeps integer-valued sums exact whatever the batches' sizes.
"""
from __future__ import annotations

from playground.api import Meter


class ComputeMean(Meter):
    def __init__(self, opts=None, blob_name=None):
        if not isinstance(blob_name, str) or not blob_name:
            raise ValueError(f"blob_name must name the value to average (a key of the step's dict), got {blob_name!r}")
        super().__init__(opts=opts, blob_name=blob_name)

    def Add(self, blobs):
        value = blobs[self.blob_name]
        if isinstance(value, (tuple, list)) and len(value) == 2:
            total, count = value
        else:
            total, count = _float64(value) * blobs.samples, blobs.samples
        self.total = self.total + _float64(total)
        self.count = self.count + _float64(count)


def _float64(value):
    import torch

    return torch.as_tensor(value).detach().double() if not isinstance(value, (int, float)) else float(value)
