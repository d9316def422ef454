"""ComputeTopKAccuracy: the fraction of samples whose label is among the `topk` highest scores."""
from __future__ import annotations

from playground.api import Meter, batch_size_of


class ComputeTopKAccuracy(Meter):
    def __init__(self, blob_name=None, opts=None, topk=1):
        super().__init__(opts=opts, blob_name=list(blob_name or ["softmax", "label"]))
        if len(self.blob_name) != 2:
            raise ValueError(f"blob_name must name the scores and the labels, e.g. ['softmax', 'label'], got {blob_name}")
        if not isinstance(topk, int) or isinstance(topk, bool) or topk < 1:
            raise ValueError(f"topk must be a positive integer, got {topk!r}")
        self.topk = topk

    def Add(self, blobs):
        scores, labels = blobs[self.blob_name[0]], blobs[self.blob_name[1]]
        k = min(self.topk, scores.shape[-1])
        hits = (scores.topk(k, dim=-1).indices == labels.view(-1, 1)).any(dim=-1).sum()
        self.total = self.total + hits.double()
        self.count = self.count + batch_size_of(labels)
