"""What a rank changes in its process and gives back when it ends: torch's intra-op threads, deterministic
kernels (and the variables read for them), cuDNN's autotuner, the SIGXFSZ disposition.

A spawned rank's process ends next, but a single-process run may be called in a user's own process
(`playground.api.run` in a notebook or a script that trains something else afterwards): it leaves torch as it
found it. Not given back: the inter-op thread count (torch sets it once per process) and the random generators'
states (seeded for the run, as other trainers leave them).
"""
from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from typing import Iterator

import torch

# variables a rank sets for its kernels (worker.py): given back as they were, unset where they were unset
KERNEL_VARIABLES = ("CUBLAS_WORKSPACE_CONFIG", "TORCHINDUCTOR_DETERMINISTIC")


@contextlib.contextmanager
def torch_settings_kept() -> Iterator[None]:
    threads = torch.get_num_threads()
    deterministic = (torch.are_deterministic_algorithms_enabled(),
                     torch.is_deterministic_algorithms_warn_only_enabled())
    autotuner = torch.backends.cudnn.benchmark
    variables = {name: os.environ.get(name) for name in KERNEL_VARIABLES}
    main_thread = threading.current_thread() is threading.main_thread()
    file_size_signal = signal.getsignal(signal.SIGXFSZ) if main_thread else None
    try:
        yield
    finally:
        if torch.get_num_threads() != threads:
            torch.set_num_threads(threads)
        if (torch.are_deterministic_algorithms_enabled(),
                torch.is_deterministic_algorithms_warn_only_enabled()) != deterministic:
            if "torch._inductor.config" in sys.modules:   # keeps the inductor's own flag in step
                torch.use_deterministic_algorithms(deterministic[0], warn_only=deterministic[1])
            else:                                         # without importing the inductor (worker.py says why)
                torch._C._set_deterministic_algorithms(deterministic[0], warn_only=deterministic[1])
        torch.backends.cudnn.benchmark = autotuner
        for name, value in variables.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        if main_thread and file_size_signal is not None:
            signal.signal(signal.SIGXFSZ, file_size_signal)
