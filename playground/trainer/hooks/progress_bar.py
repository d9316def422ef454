"""Terminal progress on rank 0 (playground/trainer/progress.py): the bar moves each iteration, record points are logged."""
from __future__ import annotations

from playground.trainer.progress import Progress
from playground.trainer.hook import Hook


class ProgressBar(Hook):
    name = "progress"

    def __init__(self, trainer) -> None:
        super().__init__(trainer)
        self.progress = Progress(trainer.opts, trainer.ctx, trainer.epoch_iterations)

    def after_iter(self, epoch: int, epoch_iter: int) -> None:
        self.progress.step(epoch, epoch_iter)

    def after_record(self, record: dict) -> None:
        self.progress.record(record)

    def close(self) -> None:
        self.progress.close()
