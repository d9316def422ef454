"""CANDLE benchmark scripts on playground: `initialize_parameters` for a script's defaults file, and
`CandleCheckpoint`, CANDLE's checkpoint/restart keys for a hand-written PyTorch loop. `playground candle SCRIPT`
runs such a script (runner.py). docs/candle.md has a complete example.
"""
from __future__ import annotations

from typing import Any

__all__ = ["CandleCheckpoint", "initialize_parameters"]


def __getattr__(name: str) -> Any:
    # Lazy, so `playground --help` (which imports the command module) does not import torch.
    if name == "CandleCheckpoint":
        from playground.candle.checkpoint import CandleCheckpoint
        return CandleCheckpoint
    if name == "initialize_parameters":
        from playground.candle.benchmark import initialize_parameters
        return initialize_parameters
    raise AttributeError(f"module 'playground.candle' has no attribute {name!r}")
