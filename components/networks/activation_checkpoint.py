"""Activation checkpointing, what Caffe2's memonger (`model_param.memonger`) became: a stage's activations are
not kept for backward but recomputed there, trading compute for memory (memonger shared activation blobs).

Batch norm runs twice in training mode when a stage is recomputed; `frozen_bn_statistics` keeps the running
statistics (and num_batches_tracked) of the second run out, so a checkpointed network trains exactly as the plain
one: same loss, gradients and statistics.
"""
from __future__ import annotations

import contextlib
from typing import Iterator

import torch
from torch import nn
from torch.utils.checkpoint import checkpoint


def checkpointed(stage: nn.Module, x: torch.Tensor) -> torch.Tensor:
    """`stage(x)`, its activations recomputed in backward (when training with gradients; else a plain call)."""
    if not (stage.training and torch.is_grad_enabled()):
        return stage(x)
    return checkpoint(stage, x, use_reentrant=False,
                      context_fn=lambda: (contextlib.nullcontext(), frozen_bn_statistics(stage)))


class CheckpointedSequential(nn.Sequential):
    """An nn.Sequential run through `checkpointed`: the same children, so the same state_dict keys."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:   # noqa: D102
        if not (self.training and torch.is_grad_enabled()):
            return super().forward(x)
        return checkpoint(super().forward, x, use_reentrant=False,
                          context_fn=lambda: (contextlib.nullcontext(), frozen_bn_statistics(self)))


@contextlib.contextmanager
def frozen_bn_statistics(stage: nn.Module) -> Iterator[None]:
    norms = [m for m in stage.modules() if isinstance(m, nn.modules.batchnorm._BatchNorm)]
    saved = [(m.momentum, None if m.num_batches_tracked is None else m.num_batches_tracked.clone()) for m in norms]
    for m in norms:
        m.momentum = 0.0   # running = (1 - 0) * running + 0 * batch: unchanged
    try:
        yield
    finally:
        for m, (momentum, tracked) in zip(norms, saved):
            m.momentum = momentum
            if tracked is not None:
                m.num_batches_tracked.copy_(tracked)
