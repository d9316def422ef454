"""Determined's LRScheduler wrapper: steps a torch LR scheduler every `frequency` batches or epochs, or leaves it
to the trial (MANUAL_STEP); its state is checkpointed with the trainer's (loop_hook.py)."""
from __future__ import annotations

import enum
from typing import Any


class LRScheduler:
    """`pytorch.LRScheduler(scheduler, step_mode, frequency=1)`, as `context.wrap_lr_scheduler` records it."""

    class StepMode(enum.Enum):
        STEP_EVERY_EPOCH = 1
        STEP_EVERY_BATCH = 2
        MANUAL_STEP = 3
        STEP_EVERY_OPTIMIZER_STEP = 4

    def __init__(self, scheduler: Any, step_mode: "LRScheduler.StepMode", frequency: int = 1) -> None:
        if not isinstance(step_mode, LRScheduler.StepMode):
            raise ValueError(f"step_mode must be an LRScheduler.StepMode, got {step_mode!r}")
        if int(frequency) < 1:
            raise ValueError(f"frequency must be at least 1, got {frequency}")
        self.scheduler, self._step_mode, self._frequency = scheduler, step_mode, int(frequency)

    def step(self, *args: Any, **kwargs: Any) -> None:
        self.scheduler.step(*args, **kwargs)

    def get_last_lr(self) -> list[float]:
        return self.scheduler.get_last_lr()

    def after_batch(self, batches_done: int) -> None:
        """Called after each training batch, `batches_done` counting it."""
        if self._step_mode in (self.StepMode.STEP_EVERY_BATCH, self.StepMode.STEP_EVERY_OPTIMIZER_STEP) \
                and batches_done % self._frequency == 0:
            self.scheduler.step()

    def after_epoch(self, epochs_done: int) -> None:
        if self._step_mode == self.StepMode.STEP_EVERY_EPOCH and epochs_done % self._frequency == 0:
            self.scheduler.step()

    def state_dict(self) -> dict:
        return self.scheduler.state_dict()

    def load_state_dict(self, state: dict) -> None:
        self.scheduler.load_state_dict(state)
