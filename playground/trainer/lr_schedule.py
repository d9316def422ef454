"""Learning rate as a pure function of the fractional epoch, so a resumed run continues the same curve.

Built from the `model_param` keys: base_learning_rate, lr_policy (fixed, step, multistep, cosine),
lr_step_epochs, lr_gamma, warmup_epochs (linear from 0), lr_scale_by_batch (x global batch / 256).
Update-rule and optimizer components return one of these with their optimizer; the trainer sets it on every
parameter group (times the group's optional "lr_scale") before each iteration.
"""
from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class LRSchedule:
    base_lr: float
    policy: str = "fixed"
    step_epochs: int | tuple[int, ...] = 30
    gamma: float = 0.1
    warmup_epochs: float = 0.0
    total_epochs: int = 1

    def __call__(self, epoch: float) -> float:
        """The rate at fractional epoch `epoch` (epoch + iteration / iterations per epoch)."""
        lr = self.base_lr * self._decay(epoch)
        if self.warmup_epochs > 0 and epoch < self.warmup_epochs:
            lr *= epoch / self.warmup_epochs
        return lr

    def _decay(self, epoch: float) -> float:
        if self.policy == "fixed":
            return 1.0
        if self.policy == "step":
            interval = self.step_epochs if isinstance(self.step_epochs, int) else self.step_epochs[0]
            return self.gamma ** math.floor(epoch / interval)
        if self.policy == "multistep":
            milestones = (self.step_epochs,) if isinstance(self.step_epochs, int) else self.step_epochs
            return self.gamma ** sum(1 for m in milestones if epoch >= m)
        if self.policy == "cosine":
            span = max(self.total_epochs - self.warmup_epochs, 1e-12)
            progress = min(max((epoch - self.warmup_epochs) / span, 0.0), 1.0)
            return 0.5 * (1.0 + math.cos(math.pi * progress))
        raise ValueError(f"unknown lr_policy {self.policy!r}")


# The opts keys schedule_from_opts reads (a component that calls it lists them in its `reads`).
SCHEDULE_KEYS = ("model_param.lr_policy", "model_param.lr_step_epochs", "model_param.lr_gamma",
                 "model_param.warmup_epochs", "model_param.lr_scale_by_batch")


def schedule_from_opts(opts: dict, global_batch: int, **overrides) -> LRSchedule:
    """The schedule the opts describe; `overrides` replace fields (e.g. a component's fixed policy)."""
    p = opts["model_param"]
    base = p["base_learning_rate"] * (global_batch / 256.0 if p["lr_scale_by_batch"] else 1.0)
    steps = p["lr_step_epochs"]
    fields = dict(base_lr=base, policy=p["lr_policy"], step_epochs=tuple(steps) if isinstance(steps, list) else steps,
                  gamma=p["lr_gamma"], warmup_epochs=p["warmup_epochs"], total_epochs=opts["epoch_iter"]["num_epochs"])
    fields.update(overrides)
    return LRSchedule(**fields)
