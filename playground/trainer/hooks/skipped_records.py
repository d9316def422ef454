"""At each epoch end, warns how many corrupt records the data streams dropped (input.bad_record "skip")."""
from __future__ import annotations

import torch

from playground.distribution import collectives as dist_utils
from playground.trainer.hook import Hook


class SkippedRecords(Hook):
    name = "skipped_records"

    def after_epoch(self, epoch: int) -> None:
        trainer = self.trainer
        streams = [m.batches for m in (trainer.train_model, trainer.test_model) if m is not None and m.batches is not None]
        local = torch.tensor([float(sum(s.skipped for s in streams))], dtype=torch.float64)
        for stream in streams:
            stream.skipped = 0
        total = int(dist_utils.all_reduce_sum(local).item())    # every rank takes part, so every rank runs this
        if total:
            trainer.log.warning("epoch %d: skipped %d corrupt record(s) (input.bad_record is 'skip')", epoch + 1, total)
