"""An exponential moving average of the weights (model_param.ema_decay), updated after every optimizer step.

Floating-point parameters and buffers are averaged (integer buffers such as batch-norm counters are not):
shadow = d * shadow + (1 - d) * weight, with d = min(ema_decay, (1 + n) / (10 + n)) after n updates when
ema_warmup is on, else ema_decay. The shadow starts as the weights training starts from. With ema_eval, the
test batches of every record point run with the averaged weights, and the trained weights are put back
bitwise afterwards. The average and the update count are checkpointed (`hooks.ema` in the checkpoint).

With several ranks, each rank's average of its batch-norm statistics follows its own batches (DDP broadcasts
rank 0's statistics before a forward, and each rank's forward then updates them with its own batch), while a
checkpoint holds rank 0's average only. So before every evaluation all ranks take rank 0's average: every rank
evaluates with the average that checkpoints save, and a resumed run evaluates exactly as an uninterrupted one.
"""
from __future__ import annotations

import torch

from playground.distribution.collectives import broadcast_tensors_from_writer
from playground.trainer.hook import Hook


class WeightsEMA(Hook):
    name = "ema"

    def __init__(self, trainer) -> None:
        super().__init__(trainer)
        p = trainer.opts["model_param"]
        self.decay, self.warmup, self.evaluate = float(p["ema_decay"]), bool(p["ema_warmup"]), bool(p["ema_eval"])
        self.shadow: dict[str, torch.Tensor] | None = None
        self.updates = 0
        self._backup: dict[str, torch.Tensor] | None = None

    def _weights(self) -> dict[str, torch.Tensor]:
        state = self.trainer.train_model.module.state_dict()
        return {name: t for name, t in state.items() if t.dtype.is_floating_point}

    def current_decay(self) -> float:
        n = self.updates
        return min(self.decay, (1 + n) / (10 + n)) if self.warmup else self.decay

    def before_train(self) -> None:
        if self.shadow is None and self.trainer.train_model is not None:
            self.shadow = {name: t.detach().clone() for name, t in self._weights().items()}

    @torch.no_grad()
    def after_step(self) -> None:
        d = self.current_decay()
        for name, weight in self._weights().items():
            self.shadow[name].mul_(d).add_(weight.detach(), alpha=1 - d)
        self.updates += 1

    @torch.no_grad()
    def before_test(self, kind: str) -> None:
        if not self.evaluate or self.shadow is None:
            return
        broadcast_tensors_from_writer(list(self.shadow.values()))
        weights = self._weights()
        self._backup = {name: t.detach().clone() for name, t in weights.items()}
        for name, t in weights.items():
            t.copy_(self.shadow[name])

    @torch.no_grad()
    def after_test(self, kind: str) -> None:
        if self._backup is None:
            return
        for name, t in self._weights().items():
            t.copy_(self._backup[name])
        self._backup = None

    def state_dict(self) -> dict:
        return {"shadow": self.shadow, "updates": self.updates}

    def load_state_dict(self, state: dict) -> None:
        device = self.trainer.device
        shadow = state["shadow"]
        self.shadow = None if shadow is None else {k: v.to(device).clone() for k, v in shadow.items()}
        self.updates = int(state["updates"])
