"""ComputeLoss: the mean loss over every sample added since the last record point (and over all ranks)."""
from __future__ import annotations

from playground.api import Meter


class ComputeLoss(Meter):
    # a loss is better low, whatever the metric's name (test_objective, val_nll): "best", ckpt_save_best and early
    # stopping rank it as a minimum (an output.metrics entry's own `mode` still wins)
    higher_is_better = False

    def __init__(self, opts=None, blob_name="loss"):
        super().__init__(opts=opts, blob_name=blob_name or "loss")

    def Add(self, blobs):
        n = blobs.samples
        self.total = self.total + blobs[self.blob_name].double() * n
        self.count = self.count + n
