"""Mixed precision (model_param.precision bf16 or fp16): autocast for the forward passes and, for fp16, a
gradient scaler whose state (scale, growth tracker) is checkpointed so a resume continues with the same scale.

The training step (train_step.py) asks this hook for its autocast context and routes backward, unscaling and
the optimizer step through it. Weights and optimizer state stay float32.
"""
from __future__ import annotations

from typing import ContextManager

import torch

from playground.trainer.hook import Hook

_DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16}


class MixedPrecision(Hook):
    name = "mixed_precision"

    def __init__(self, trainer) -> None:
        super().__init__(trainer)
        self.dtype = _DTYPES[trainer.opts["model_param"]["precision"]]
        self.device_type = trainer.device.type
        self.scaler = torch.amp.GradScaler(self.device_type) if self.dtype is torch.float16 else None

    def autocast(self) -> ContextManager:
        return torch.autocast(self.device_type, dtype=self.dtype)

    def backward(self, loss: torch.Tensor) -> None:
        (self.scaler.scale(loss) if self.scaler is not None else loss).backward()

    def unscale(self, optimizer: torch.optim.Optimizer) -> None:
        """Make the gradients true before after_backward hooks read them (clipping, norms)."""
        if self.scaler is not None:
            self.scaler.unscale_(optimizer)

    def step(self, optimizer: torch.optim.Optimizer) -> None:
        """The optimizer step; under fp16 skipped when a gradient overflowed, and the scale adapted."""
        if self.scaler is None:
            optimizer.step()
            return
        self.scaler.step(optimizer)
        self.scaler.update()

    def state_dict(self) -> dict:
        return {"scaler": self.scaler.state_dict()} if self.scaler is not None else {}

    def load_state_dict(self, state: dict) -> None:
        if self.scaler is not None and state.get("scaler"):
            self.scaler.load_state_dict(state["scaler"])


