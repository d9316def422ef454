"""candle_lib's API, the part CANDLE's benchmarks use, on playground: what `import candle` gives a script that
`playground candle` runs while candle_lib is not installed (playground/candle/runner.py puts `on_path/` first
on sys.path then; with candle_lib installed, candle_lib is used). docs/candle.md has the table of members.

The signatures are candle_lib's; what differs is said where it is implemented: `_parameters.py` (the command
line and the defaults file), `_helpers.py` (data files are looked up locally, never downloaded),
`_checkpoint.py` (checkpoints are playground's files), `_pytorch.py`.
"""
from __future__ import annotations

from playground.compat.candle._checkpoint import CandleCkptPyTorch, restart
from playground.compat.candle._common import str2bool
from playground.compat.candle._helpers import (fetch_file, get_file, keras_default_config, set_parallelism_threads,
                                               set_seed, set_up_logger, verify_path)
from playground.compat.candle._parameters import ArgumentStruct, Benchmark, check_flag_conflicts, finalize_parameters
from playground.compat.candle._pytorch import (build_pytorch_activation, build_pytorch_optimizer,
                                               get_pytorch_function, pytorch_initialize, pytorch_mse, pytorch_xent,
                                               set_pytorch_seed, set_pytorch_threads)

name = "candle"
__version__ = "0.0.1+playground"

__all__ = ["ArgumentStruct", "Benchmark", "CandleCkptPyTorch", "build_pytorch_activation",
           "build_pytorch_optimizer", "check_flag_conflicts", "fetch_file", "finalize_parameters", "get_file",
           "get_pytorch_function", "keras_default_config", "pytorch_initialize", "pytorch_mse", "pytorch_xent",
           "restart", "set_parallelism_threads", "set_pytorch_seed", "set_pytorch_threads", "set_seed",
           "set_up_logger", "str2bool", "verify_path"]


def __getattr__(attribute: str):
    raise AttributeError(f"module 'candle' (playground's implementation of candle_lib's API, used because "
                         f"candle_lib is not installed) has no attribute {attribute!r}; it offers: "
                         f"{', '.join(__all__)}. Install candle_lib for the rest of its API.")
