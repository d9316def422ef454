"""Override for benchmarks/gpu_train.py's playground arm: the time of the training iterations after the warm-up
(from the start of iteration WARMUP to the end of the last, synchronised), and the CPU per image of the training
process and of its loader workers over that window (cpu_window.py).

bf16 comes from the trainer's own model_param.precision, which enters autocast around each forward pass. It was
entered here once around the whole epoch until 2026-12-05: autocast keeps its bf16 copies of the weights until
the outermost autocast region ends, so every forward after the first ran on the first step's weights (and cast
none), a different and smaller job than the plain arm's.
"""
from __future__ import annotations

import os
import time

import torch

from cpu_window import CpuWindow

WARMUP = int(os.environ.get("GPU_TRAIN_WARMUP", "10"))
DEVICE = os.environ.get("GPU_TRAIN_DEVICE", "cuda")     # "cpu" only for gpu_train.py's smoke run


def _synchronize() -> None:
    if DEVICE == "cuda":
        torch.cuda.synchronize()


def fun_per_epoch_b4RunNet(self, epoch):
    self._iteration, self._timed_from, self._cpu = 0, None, None


def fun_per_iter_b4RunNet(self, epoch, epoch_iter):
    if self._iteration == WARMUP:
        _synchronize()
        self._timed_from, self._cpu = time.perf_counter(), CpuWindow()
    self._iteration += 1


def fun_per_epoch_aftRunNet(self, epoch):
    _synchronize()
    iterations = self._iteration - WARMUP
    self.timed = {"seconds": time.perf_counter() - self._timed_from, "iterations": iterations,
                  "cpu": self._cpu.stop(iterations * self.total_batch_size)}


def assembleAllOutputs(self):
    return {"metrics": self.metrics_output, "timed": self.timed}
