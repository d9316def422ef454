"""Override for benchmarks/gpu_train.py's playground arm: bf16 autocast around the epoch, and the time of the
training iterations after the warm-up (from the start of iteration WARMUP to the end of the last, synchronised).

TODO(precision): switch to the trainer's own options (model_param.precision: "bf16", and model_param.channels_last
for every network) once they are on main; until then autocast is entered here, in the epoch hooks.
"""
from __future__ import annotations

import os
import time

import torch

WARMUP = int(os.environ.get("GPU_TRAIN_WARMUP", "10"))
DEVICE = os.environ.get("GPU_TRAIN_DEVICE", "cuda")     # "cpu" only for gpu_train.py's smoke run


def _synchronize() -> None:
    if DEVICE == "cuda":
        torch.cuda.synchronize()


def fun_per_epoch_b4RunNet(self, epoch):
    self._autocast = torch.autocast(DEVICE, dtype=torch.bfloat16)
    self._autocast.__enter__()
    self._iteration, self._timed_from = 0, None


def fun_per_iter_b4RunNet(self, epoch, epoch_iter):
    if self._iteration == WARMUP:
        _synchronize()
        self._timed_from = time.perf_counter()
    self._iteration += 1


def fun_per_epoch_aftRunNet(self, epoch):
    _synchronize()
    self.timed = {"seconds": time.perf_counter() - self._timed_from, "iterations": self._iteration - WARMUP}
    self._autocast.__exit__(None, None, None)


def assembleAllOutputs(self):
    return {"metrics": self.metrics_output, "timed": self.timed}
