"""Gradient clipping by global L2 norm (model_param.grad_clip_norm), after the last backward of an iteration and
before the optimizer step (after unscaling, under fp16). The mean norm before clipping since the last record
point is added to each record as `grad_norm`; its running sum is state, so records survive a resume exactly."""
from __future__ import annotations

import torch

from playground.trainer.hook import Hook


class GradClip(Hook):
    name = "grad_clip"

    def __init__(self, trainer) -> None:
        super().__init__(trainer)
        self.max_norm = float(trainer.opts["model_param"]["grad_clip_norm"])
        self.norm_sum: torch.Tensor | None = None   # kept on the device: no synchronisation per step
        self.count = 0

    def after_backward(self) -> None:
        module = self.trainer.train_model.module
        norm = torch.nn.utils.clip_grad_norm_(module.parameters(), self.max_norm).detach()
        self.norm_sum = norm.clone() if self.norm_sum is None else self.norm_sum + norm
        self.count += 1

    def after_record(self, record: dict) -> None:
        record["grad_norm"] = float(self.norm_sum) / self.count if self.count else None
        self.norm_sum, self.count = None, 0

    def state_dict(self) -> dict:
        return {"norm_sum": self.norm_sum, "count": self.count}

    def load_state_dict(self, state: dict) -> None:
        norm_sum = state["norm_sum"]
        self.norm_sum = None if norm_sum is None else norm_sum.to(self.trainer.device)
        self.count = int(state["count"])
