"""Override for benchmarks/parity.py: times each epoch from fun_per_epoch_b4RunNet to fun_per_epoch_aftRunNet
(the same span the hand-written loop times) and returns the times and final weights (and the EMA weights, when
model_param.ema_decay is set) with the result."""
from __future__ import annotations

import time


def fun_per_epoch_b4RunNet(self, epoch):
    if not hasattr(self, "epoch_times"):
        self.epoch_times = []
    self._epoch_started = time.perf_counter()


def fun_per_epoch_aftRunNet(self, epoch):
    self.epoch_times.append(time.perf_counter() - self._epoch_started)


def assembleAllOutputs(self):
    weights = {k: v.detach().cpu() for k, v in self.train_model.module.state_dict().items()}
    ema = self.hooks.get("ema")
    if ema is not None:
        weights.update({f"ema.{k}": v.detach().cpu() for k, v in ema.shadow.items()})
    return {"model": self.model_output, "metrics": self.metrics_output, "epoch_times": self.epoch_times,
            "weights": weights}
