"""Every random generator of a process continues where it was captured (playground/checkpoints/random_state.py)."""
from __future__ import annotations

import random

import numpy as np
import pytest
import torch

from playground.checkpoints.random_state import rng_state, set_rng_state


def draws() -> tuple:
    return random.random(), float(np.random.rand()), np.random.standard_normal(), torch.rand(3).tolist()


def test_every_random_generator_continues_where_it_was_captured():
    np.random.standard_normal()                      # leave numpy with a cached gaussian, part of its state
    state = rng_state(torch.device("cpu"))
    expected = draws()
    draws()
    set_rng_state(state, torch.device("cpu"))
    assert draws() == expected


@pytest.mark.gpu
def test_the_cuda_generator_continues_where_it_was_captured():
    if not torch.cuda.is_available():
        pytest.skip("needs a CUDA device")
    device = torch.device("cuda", 0)
    state = rng_state(device)
    expected = torch.rand(4, device=device)
    torch.rand(4, device=device)
    set_rng_state(state, device)
    assert torch.equal(torch.rand(4, device=device), expected)


def test_the_old_train_state_module_still_gives_the_moved_functions_with_a_deprecation_warning():
    import sys

    from playground.checkpoints.snapshot import Snapshot

    sys.modules.pop("playground.checkpoints.train_state", None)
    with pytest.warns(DeprecationWarning, match="playground.checkpoints.random_state"):
        from playground.checkpoints import train_state
    assert (train_state.rng_state, train_state.set_rng_state, train_state.Snapshot) == (rng_state, set_rng_state, Snapshot)
