"""Seeding of the global random generators (python, numpy, torch) from model_param.seed."""
from __future__ import annotations

import random

import numpy as np
import torch


def seed_everything(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed % (2 ** 32))
    torch.manual_seed(seed)


def seed_rank_streams(seed: int, rank: int) -> None:
    """After the network is built (identical on every rank), give ranks > 0 their own streams (dropout...).

    Rank 0 keeps the stream it has, so a single-process run matches a hand-written loop seeded the same way.
    """
    if rank > 0:
        seed_everything(seed + 7919 * rank)
