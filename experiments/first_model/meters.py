"""Regression meters: R2Score (higher is better) and MeanSquaredError (lower is better), exact over all ranks.

Each meter is named in output.metrics by its dotted path, `experiments.first_model.meters.R2Score`, and reads two
blobs, the prediction and the target: `meter_kargs: {"blob_name": ["logits", "label"]}` for a forward pass
component (the network's output is the `logits` blob), the names a trial's evaluate_batch returns otherwise.
`higher_is_better` tells "best", ckpt_save_best and early stopping which way the metric improves.
"""
from __future__ import annotations

import torch

from playground.api import Meter


class _PredictionMeter(Meter):
    def __init__(self, opts=None, blob_name=("logits", "label")):
        if not (isinstance(blob_name, (list, tuple)) and len(blob_name) == 2):
            raise ValueError(f"blob_name must be [prediction, target] blob names, got {blob_name!r}")
        super().__init__(opts=opts, blob_name=list(blob_name))

    def pairs(self, blobs) -> tuple[torch.Tensor, torch.Tensor]:
        prediction, target = (blobs[name].detach().double().reshape(-1) for name in self.blob_name)
        return prediction, target


class MeanSquaredError(_PredictionMeter):
    higher_is_better = False

    def Add(self, blobs):
        prediction, target = self.pairs(blobs)
        self.total = self.total + ((prediction - target) ** 2).sum()
        self.count = self.count + target.numel()


class R2Score(_PredictionMeter):
    """1 - (sum of squared residuals) / (sum of squared deviations of the targets from their mean).

    `total` holds three sums (squared residuals, targets, squared targets), so the ranks' states add exactly.
    """

    higher_is_better = True

    def Add(self, blobs):
        prediction, target = self.pairs(blobs)
        sums = torch.stack([((prediction - target) ** 2).sum(), target.sum(), (target ** 2).sum()])
        self.total = self.total + sums
        self.count = self.count + target.numel()

    def Compute(self):
        count = float(self.count)
        if not count:
            return None
        residuals, targets, squares = (float(v) for v in self.total)
        spread = squares - targets * targets / count
        return 1.0 - residuals / spread if spread > 0 else None
