"""Raises, at the start of an iteration, the error of a checkpoint write that failed in the background."""
from __future__ import annotations

from playground.trainer.hook import Hook


class CheckpointErrors(Hook):
    name = "checkpoint_errors"

    def before_iter(self, epoch: int, epoch_iter: int) -> None:
        self.trainer.checkpointer.raise_pending_error()
