"""TensorBoard event files in <run-dir>/tensorboard (output.tensorboard; rank 0): every number of each record
point (metrics, learning rate, samples_per_sec, secs_per_train, grad_norm...) as a scalar at its iteration."""
from __future__ import annotations

import logging
import os
from typing import Any

from playground.trainer.hook import Hook

_NOT_SCALARS = ("index", "kind", "epoch", "epoch_iter", "iteration", "samples")


class TensorBoard(Hook):
    name = "tensorboard"

    def __init__(self, trainer) -> None:
        super().__init__(trainer)
        self.writer: Any = None

    def before_train(self) -> None:
        try:
            from torch.utils.tensorboard import SummaryWriter
        except ImportError:
            logging.getLogger("playground").warning(
                "output.tensorboard is true but the tensorboard package is not installed; pip install tensorboard "
                "to get event files")
            return
        self.writer = SummaryWriter(os.path.join(self.trainer.run_dir, "tensorboard"))

    def after_record(self, record: dict) -> None:
        if self.writer is None:
            return
        self.trainer.outputs.fence.check("tensorboard events")
        for key, value in record.items():
            if key not in _NOT_SCALARS and isinstance(value, (int, float)) and not isinstance(value, bool):
                self.writer.add_scalar(key, value, record["iteration"])
        self.writer.flush()

    def close(self) -> None:
        # A fenced attempt drops its writer unclosed: closing writes to the event file, which is no longer ours.
        if self.writer is not None and not self.trainer.outputs.fence.superseded():
            self.writer.close()
        self.writer = None
