"""Deprecated: the trainer now owns its state (AnyExp.state_dict / load_state_dict, playground/trainer/anyexp.py).

What was general here moved: the RNG states to playground.checkpoints.random_state, the checkpoint's copy to
playground.checkpoints.snapshot. This module keeps old imports of those working, with a DeprecationWarning.
"""
from __future__ import annotations

import warnings

from playground.checkpoints.random_state import rng_state, set_rng_state
from playground.checkpoints.snapshot import Snapshot

warnings.warn("playground.checkpoints.train_state is deprecated: import rng_state and set_rng_state from "
              "playground.checkpoints.random_state, Snapshot from playground.checkpoints.snapshot",
              DeprecationWarning, stacklevel=2)

__all__ = ["Snapshot", "rng_state", "set_rng_state"]
