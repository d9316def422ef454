"""Sets the learning rate of every parameter group before each iteration, from the schedule at that point.

The schedule is a pure function of the fractional epoch, so this hook has no state of its own.
"""
from __future__ import annotations

from playground.trainer.hook import Hook


class LearningRate(Hook):
    name = "learning_rate"

    def before_iter(self, epoch: int, epoch_iter: int) -> None:
        trainer = self.trainer
        model = trainer.train_model
        if model is None or model.lr_schedule is None:
            return
        trainer.lr = model.lr_schedule(epoch + epoch_iter / max(1, trainer.epoch_iterations))
        for group in model.optimizer.param_groups:
            group["lr"] = trainer.lr * group.get("lr_scale", 1.0)
