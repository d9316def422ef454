"""A torch.profiler trace of a window of training iterations (output.profile_start_iter, profile_num_iters; rank
0 only): <run-dir>/profile/trace.json (open in chrome://tracing or Perfetto), TensorBoard profiler files in
<run-dir>/profile/tensorboard, and a table of the top operators by self time in train.log."""
from __future__ import annotations

import logging
import os
import shutil
import time
from typing import Any

import torch

from playground.outputs.run_folder import RunFolder
from playground.trainer.hook import Hook


class Profiler(Hook):
    name = "profiler"

    def __init__(self, trainer) -> None:
        super().__init__(trainer)
        out = trainer.opts["output"]
        self.start_iter, self.num_iters = out["profile_start_iter"], out["profile_num_iters"]
        self.folder = RunFolder(trainer.run_dir).profile
        self._profile: Any = None

    def before_iter(self, epoch: int, epoch_iter: int) -> None:
        if self._profile is None and self.trainer.global_iter == self.start_iter:
            activities = [torch.profiler.ProfilerActivity.CPU]
            if self.trainer.device.type == "cuda":
                activities.append(torch.profiler.ProfilerActivity.CUDA)
            else:
                # Kineto probes for GPUs even when asked for CPU events only, and on a machine without one
                # prints "ERROR: gpuGetDeviceCount failed" and "USDT: profiler_start/stop" lines to stderr.
                # It reads its log level when it first starts (now, unless the user set one).
                os.environ.setdefault("KINETO_LOG_LEVEL", "6")
            self._profile = torch.profiler.profile(activities=activities, record_shapes=True)
            self._profile.start()

    def end_of_iter(self, epoch: int, epoch_iter: int) -> None:
        if self._profile is not None and self.trainer.global_iter >= self.start_iter + self.num_iters:
            self._finish()

    def close(self) -> None:
        if self._profile is not None:   # training ended inside the window
            self._finish()

    def _finish(self) -> None:
        profile, self._profile = self._profile, None
        profile.stop()
        self.trainer.outputs.fence.check("the profiler trace")
        os.makedirs(self.folder, exist_ok=True)
        trace = os.path.join(self.folder, "trace.json")
        profile.export_chrome_trace(trace)
        # A trace can be saved once; the TensorBoard profiler plugin reads the same Chrome trace under this name.
        tensorboard = os.path.join(self.folder, "tensorboard")
        os.makedirs(tensorboard, exist_ok=True)
        shutil.copyfile(trace, os.path.join(tensorboard, f"rank0.{int(time.time() * 1000)}.pt.trace.json"))
        cuda = self.trainer.device.type == "cuda"
        table = profile.key_averages().table(sort_by="self_cuda_time_total" if cuda else "self_cpu_time_total",
                                             row_limit=15)
        logging.getLogger("playground").info("profile of %d iteration(s) from iteration %d, written to %s:\n%s",
                                             self.num_iters, self.start_iter, self.folder, table)
